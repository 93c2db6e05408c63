// The end: the server's ranking, the seed checked against the commitment announced at the
// start, the day's leaderboard after a daily race, the replays, and a button per kept run to
// race the deal again against it (a ghost), the deal's par once the server has it, and a link
// that downloads the race's record (JSON).

import { fromHex, sha256, toHex } from "./sha256.js";
import { endLeaderboard, leaderboardTable } from "./daily.js";
import { $, botMark, fill, fmtTime, guestMark, h } from "./dom.js";
import { takeJoined, toLobby } from "./race.js";
import { endRatings, profileLink, ratingSlot, rematchPart } from "./profile.js";
import { PAR_LINE, openReplay, renderReplay } from "./replay.js";
import { app, describeRace, session, STATUS_TEXT } from "./state.js";
import { provide, say } from "./ui.js";

function renderEnd() {
  const race = app.race;
  const results = race.results || [];
  const mine = results.find((r) => r.player === session.player);
  const winner = results.find((r) => r.rank === 1);
  const hints = results.some((r) => r.hints);
  const headline = endHeadline(race, results, mine, winner);
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
                h("td", {}, profileLink(r.name, r.player, results), guestMark(r), botMark(r), r.ghost ? h("span", { class: "ghost-mark" }, " (ghost)") : null),
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
        parSummary(race, results),
        h("div", { class: "row" }, h("button", { id: "new-race", type: "button", class: "primary", "data-autofocus": true, onclick: toLobby }, "New race")),
        ghostButtons(race, results),
        rematchPart(race),
        fairness(race),
        exportLink(race),
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
  else if (app.replay?.player === PAR_LINE && race.par?.line && app.replay.actions.join() !== race.par.line.join()) openReplay(PAR_LINE); // a shorter par line
  else renderReplay();
}

/** The deal's par against each winner's moves ("par 132 · you 150 (+18)"); "so far" while
 * it is the shortest line known at the finish and the solver looks for a shorter one;
 * "working it out" until the server's first `par` event lands; "no par" when its solver
 * did not settle the deal. Nothing while the deal is hidden (a daily deal during its day). */
function parSummary(race, results) {
  if (!race.seed) return null;
  const par = race.par;
  let text;
  if (!par) text = "par: working it out…";
  else if (par.none) text = "no par: the solver did not settle this deal";
  else {
    const diff = (n) => (n === par.moves ? "±0" : n > par.moves ? `+${n - par.moves}` : `−${par.moves - n}`);
    const winners = results.filter((r) => r.status === "won");
    const who = (r) => (r.player === session.player ? "you" : r.name);
    text = [`par ${par.moves}${par.provisional ? " so far" : ""}`, ...winners.map((r) => `${who(r)} ${r.moves} (${diff(r.moves)})`)].join(" · ");
    if (par.provisional) text += " · looking for a shorter line…";
  }
  const state = !par ? "working" : par.none ? "none" : par.provisional ? "provisional" : "known";
  return h("p", { class: "par", id: "par", dataset: { state } }, text);
}

/** "Race this deal again against NAME's run": a button per run the race kept with its
 * times (a revealed race: its deal is public), each a new race on the deal with that run
 * as a ghost. */
function ghostButtons(race, results) {
  const times = race.replay_times || {};
  const runs = results.filter((r) => race.seed && race.replays?.[r.player] && times[r.player]);
  if (!runs.length) return null;
  return h(
    "div",
    { class: "row ghost-races", id: "ghost-races" },
    runs.map((r) =>
      h("button", { type: "button", class: "ghost-race", dataset: { player: r.player }, onclick: () => raceGhost(race, r) }, `Race this deal again against ${r.player === session.player ? "your" : `${r.name}'s`} run`),
    ),
  );
}

async function raceGhost(race, r) {
  const msg = {
    type: "create_race",
    variant: race.variant,
    max_players: race.max_players,
    time_limit: race.time_limit,
    undo: race.undo,
    live_boards: race.live_boards,
    countdown: race.countdown,
    hints: race.hints,
    humans_only: race.humans_only,
    away_grace: race.away_grace,
    ghosts: [{ race: race.code, player: r.player }],
  };
  try {
    takeJoined(await session.request(msg));
  } catch (e) {
    say(e.message, "error");
  }
}

/** The end in one line: a win, a place behind a winner, or no winner (and why, when every
 * game ended alike: everyone resigned, or ran out of time). */
function endHeadline(race, results, mine, winner) {
  if (mine && race.daily) {
    return mine.status === "won" ? `You won the daily deal in ${fmtTime(mine.time)}!` : `Daily deal: ${STATUS_TEXT[mine.status] || mine.status}`;
  }
  if (results.some((r) => r.status === "won")) {
    if (mine) return mine.rank === 1 && mine.status === "won" ? "You won the race!" : `You finished #${mine.rank} of ${results.length}`;
    return `${winner?.name ?? "A player"} won`;
  }
  const alike = results.length && results.every((r) => r.status === results[0].status) ? results[0].status : null;
  const why = { resigned: "resigned", timeout: "ran out of time", left: "left", abandoned: "was away too long", idle: "made no move in time", stuck: "got stuck" }[alike];
  if (why) return results.length === 1 ? `No winner: ${mine ? "you" : results[0].name} ${why}` : `No winner: everyone ${why}`;
  return mine && results.length > 1 ? `No winner · you ranked #${mine.rank} of ${results.length}` : "No winner";
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

/** "Download the race (JSON)": the race's record (seed, salt, commitment, every player's
 * actions with their times and results; the server's `GET /races/CODE.json`), once its deal
 * is public (a daily race's when its day is over). */
function exportLink(race) {
  if (!race.seed) return null;
  const href = `/races/${encodeURIComponent(race.code)}.json`;
  return h("p", { class: "export" }, h("a", { id: "export-race", class: "race-download", href, download: `spider-race-${race.code}.json` }, "Download the race (JSON)"));
}

provide("end", renderEnd);
