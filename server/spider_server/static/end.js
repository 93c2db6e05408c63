// The end: the server's ranking, the seed checked against the commitment announced at the
// start, each player's rating change (a rated race), the rematch, the day's leaderboard
// after a daily race, and the replays.

import { fromHex, sha256, toHex } from "./sha256.js";
import { endLeaderboard, leaderboardTable } from "./daily.js";
import { $, fill, fmtTime, h } from "./dom.js";
import { toLobby } from "./race.js";
import { endRatings, profileLink, ratingSlot, rematchPart } from "./profile.js";
import { openReplay, renderReplay } from "./replay.js";
import { app, describeRace, session, STATUS_TEXT } from "./state.js";
import { provide } from "./ui.js";

function renderEnd() {
  const race = app.race;
  const results = race.results || [];
  const mine = results.find((r) => r.player === session.player);
  const winner = results.find((r) => r.rank === 1);
  const hints = results.some((r) => r.hints);
  const headline = endHeadline(race, mine, winner);
  const root = $("#screen");
  fill(root,
    h(
      "div",
      { class: "end" },
      h(
        "div",
        { class: "card-panel results" },
        h("h1", { id: "headline" }, headline),
        h("p", { class: "settings" }, describeRace(race)),
        h(
          "table",
          { id: "results" },
          h("thead", {}, h("tr", {}, ["#", "player", "result", "time", "runs", "moves", "score", hints ? "hints" : null].map((t) => t && h("th", {}, t)))),
          h(
            "tbody",
            {},
            results.map((r) =>
              h(
                "tr",
                { class: r.player === session.player ? "me" : "", dataset: { player: r.player, rank: String(r.rank), status: r.status } },
                h("td", {}, String(r.rank)),
                h("td", {}, profileLink(r.name, r.player, results)),
                h("td", {}, STATUS_TEXT[r.status] || r.status),
                h("td", {}, r.time === null ? "–" : fmtTime(r.time)),
                h("td", {}, String(r.runs)),
                h("td", {}, String(r.moves)),
                h("td", {}, String(r.score)),
                hints ? h("td", {}, String(r.hints || 0)) : null,
              ),
            ),
          ),
        ),
        ratingSlot(race),
        h("div", { class: "row" }, h("button", { id: "new-race", type: "button", class: "primary", "data-autofocus": true, onclick: toLobby }, "New race")),
        rematchPart(race),
        fairness(race),
      ),
      race.daily
        ? h("div", { class: "card-panel results", id: "end-leaderboard" }, h("h2", {}, "The day's leaderboard"), app.endBoard?.code === race.code && app.endBoard.reply ? leaderboardTable(app.endBoard.reply) : h("p", { class: "muted" }, "Loading…"))
        : null,
      h("div", { class: "card-panel replay", id: "replay" }),
    ),
  );
  if (race.daily) endLeaderboard(race);
  if (race.rated) endRatings(race);
  if (!app.replay && race.replays && race.seed) openReplay(results[0]?.player || Object.keys(race.replays)[0]);
  else renderReplay();
}

function endHeadline(race, mine, winner) {
  if (mine && race.daily) {
    return mine.status === "won" ? `You won the daily deal in ${fmtTime(mine.time)}!` : `Daily deal: ${STATUS_TEXT[mine.status] || mine.status}`;
  }
  if (mine) return mine.rank === 1 && mine.status === "won" ? "You won the race!" : `You finished #${mine.rank}`;
  return winner ? `${winner.name} won` : "The race is over";
}

function fairness(race) {
  if (!race.seed || !race.salt || !race.commitment) return null;
  const salt = fromHex(race.salt);
  let ok = false;
  if (salt) {
    const seed = new TextEncoder().encode(race.seed);
    const joined = new Uint8Array(salt.length + seed.length);
    joined.set(salt);
    joined.set(seed, salt.length);
    ok = toHex(sha256(joined)) === race.commitment;
  }
  return h(
    "p",
    { class: `fairness ${ok ? "ok" : "bad"}`, id: "fairness" },
    ok ? "✓ " : "✗ ",
    `Seed ${race.seed}: `,
    ok ? "it matches the commitment announced at the start." : "it does NOT match the commitment announced at the start!",
  );
}

provide("end", renderEnd);
