// The daily deal: a variant's deal of the UTC day, raced alone, and its leaderboard (in the
// lobby, and at the end of a daily race).

import { store } from "./net.js";
import { BASES } from "./rules.js";
import { $, botMark, fill, fmtTime, guestMark, h } from "./dom.js";
import { takeJoined, takeName } from "./race.js";
import { app, session } from "./state.js";
import { baseLabel } from "./howto.js";
import { profileLink } from "./profile.js";
import { redraw } from "./ui.js";

/** The lobby's daily deal panel: the variant, Play today's deal, Leaderboard. */
export function dailyPanel() {
  const saved = store.get("daily", {});
  const variant = saved.variant || "spider1";
  const shown = app.leaderboard?.variant === variant ? app.leaderboard : null;
  return h(
    "form",
    { id: "daily-form", class: "card-panel", onsubmit: (e) => (e.preventDefault(), e.submitter?.value === "board" ? showLeaderboard() : playDaily()) },
    h("h2", {}, "Daily deal"),
    h("p", { class: "muted" }, "The day's deal (UTC) of a variant, the same for everyone and proved winnable: one race a day, alone. The day's winners rank by time, then moves."),
    h(
      "div",
      { class: "row" },
      h("label", { for: "daily-variant" }, "Variant"),
      h(
        "select",
        { id: "daily-variant", name: "variant", onchange: (e) => (store.set("daily", { variant: e.target.value }), (app.leaderboard = null), fill($("#daily-slot"))) },
        Object.keys(BASES).map((b) => h("option", { value: b, selected: b === variant }, baseLabel(b))),
      ),
      h("button", { id: "daily-play", type: "submit", value: "play", class: "primary" }, "Play today's deal"),
      h("button", { id: "daily-board", type: "submit", value: "board" }, "Leaderboard"),
    ),
    h("div", { id: "daily-slot" }, shown ? leaderboardTable(shown, { ghosts: true }) : null),
  );
}

async function playDaily() {
  const variant = $("#daily-variant").value;
  store.set("daily", { variant });
  if (!(await takeName())) return;
  try {
    takeJoined(await session.request({ type: "daily_race", variant }));
  } catch (e) {
    app.lobbyError = `Daily deal: ${e.message}`;
    redraw("lobby");
  }
}

async function showLeaderboard() {
  const variant = $("#daily-variant").value;
  store.set("daily", { variant });
  try {
    app.leaderboard = await session.request({ type: "leaderboard", variant });
  } catch (e) {
    app.leaderboard = null;
    app.lobbyError = `Leaderboard: ${e.message}`;
    redraw("lobby");
    return;
  }
  const slot = $("#daily-slot");
  if (slot && $("#daily-variant")?.value === variant) fill(slot, leaderboardTable(app.leaderboard, { ghosts: true }));
}

/** Race the day's deal against the run of a leaderboard's entry (a ghost): the player's
 * daily race, made with that run in it (progress only: the deal stays hidden). */
async function raceRun(variant, entry) {
  if (!(await takeName())) return;
  try {
    takeJoined(await session.request({ type: "daily_race", variant, ghosts: [{ race: entry.race, player: entry.player }] }));
  } catch (e) {
    app.lobbyError = `Daily deal: ${e.message}`;
    redraw("lobby");
  }
}

/** A `leaderboard_reply` as a table: rank, name, time, moves (the player's row marked);
 * with `ghosts`, a button on each other player's row to race their run. */
export function leaderboardTable(reply, { ghosts = false } = {}) {
  const caption = h("caption", {}, `Leaderboard · ${reply.variant} · ${reply.day}`);
  if (!reply.entries.length) {
    return h("div", { class: "leaderboard", id: "daily-leaderboard", dataset: { variant: reply.variant, day: reply.day } }, h("p", { class: "muted" }, `Leaderboard · ${reply.variant} · ${reply.day}: nobody has won this deal yet.`));
  }
  return h(
    "div",
    { class: "leaderboard", id: "daily-leaderboard", dataset: { variant: reply.variant, day: reply.day } },
    h(
      "table",
      {},
      caption,
      h("thead", {}, h("tr", {}, ["#", "player", "time", "moves"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        reply.entries.map((e) =>
          h(
            "tr",
            { class: e.player === session.player ? "me" : "", dataset: { player: e.player, rank: String(e.rank) } },
            h("td", {}, String(e.rank)),
            h("td", {}, profileLink(e.name, e.player, reply.entries), guestMark(e), botMark(e), e.player === session.player ? " (you)" : ""),
            h("td", {}, fmtTime(e.time)),
            h("td", {}, String(e.moves)),
            ghosts && e.race && e.player !== session.player ? h("td", {}, h("button", { type: "button", class: "race-run", onclick: () => raceRun(reply.variant, e) }, `Race ${e.name}'s run`)) : null,
          ),
        ),
      ),
    ),
  );
}

/** The end of a daily race: its day's leaderboard, asked again a few times while a win of
 * this page's player is not on it yet (the server records it just after the finish). */
export async function endLeaderboard(race) {
  const key = `${race.code}`;
  if (app.endBoard?.code === key) return;
  app.endBoard = { code: key, reply: null };
  const won = (race.results || []).some((r) => r.player === session.player && r.status === "won");
  for (let tries = 0; tries < 15; tries++) {
    let reply;
    try {
      reply = await session.request({ type: "leaderboard", variant: race.variant, day: race.daily });
    } catch {
      reply = null;
    }
    if (app.endBoard?.code !== key) return;
    if (reply) {
      app.endBoard.reply = reply;
      const slot = $("#end-leaderboard");
      if (slot) fill(slot, h("h2", {}, "The day's leaderboard"), leaderboardTable(reply));
      if (!won || reply.entries.some((e) => e.player === session.player)) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}
