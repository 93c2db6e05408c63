// The lobby's open races (the public races waiting for players, kept live from the
// server's open_race events) and the Quick match button (queued, waiting, matched: the
// page joins the race the server made at once, which confirms the seat; a match called off
// because someone did not join is queued for again, first in line).

import { BASES } from "./rules.js";
import { $, fill, h } from "./dom.js";
import { join, takeName, toLobby } from "./race.js";
import { app, session } from "./state.js";
import { baseLabel } from "./howto.js";
import { ratingText } from "./profile.js";

const listed = new Map(); // code -> the race's listing
let watching = false;
let matching = null; // the variant being queued for, or null
let matchingKind = ""; // "rated" or "casual": the pool the server queued this player in
let lastQuick = null; // the last quick_match asked: { variant, with_bots }
let notice = ""; // why the page queued again by itself
let matchedCode = null; // the race of the last match the page was put in

// the lobby's messages reach this module before the race's handlers
const take = session.take.bind(session);
session.take = (msg) => {
  if (msg && msg.type === "open_race") {
    if (msg.race) listed.set(msg.code, msg.race);
    else listed.delete(msg.code);
    drawList();
    return;
  }
  if (msg && msg.type === "matched") {
    // a match the page is in already, or one called off, told again: nothing to join
    if (msg.code === app.code || app.calledOff.has(msg.code)) return;
    matching = null;
    notice = "";
    matchedCode = msg.code;
    join(msg.code, "player");
    return;
  }
  // the match of the race followed, or of the last one matched (its join may have been
  // answered "no race" before the call-off came, on another node's connection)
  const ours = msg && (msg.race === app.code || msg.race === matchedCode);
  if (msg && msg.type === "match_cancelled" && ours && lastQuick) {
    if (app.calledOff.has(msg.race)) return; // told again, on the other connection
    app.calledOff.add(msg.race);
    if ((msg.missing || []).includes(session.player)) {
      // this player is the one missing: they left it (Leave takes the page to the lobby) or
      // came too late; nothing to queue for again (a dodge waits before the next)
      if (app.code === msg.race) toLobby();
      return;
    }
    // someone did not join in time: back to the lobby, queued again ahead of the others
    toLobby();
    notice = "A matched player did not join in time: looking again, first in line.";
    queue(lastQuick);
    return;
  }
  take(msg);
  if (msg && msg.type === "welcome") {
    watching = false; // a new connection follows nothing: follow again from here
    matching = null; // and is in no queue
    drawMatch();
    if ($("#open-race-list")) follow();
  }
};

function drawList() {
  const list = $("#open-race-list");
  if (!list) return;
  // the longest waiting first, as the server lists them (it shows one race an address at a
  // time; the page shows every race it heard of)
  const races = [...listed.values()].sort((a, b) => a.created_at - b.created_at);
  fill(
    list,
    ...(races.length
      ? races.map((r) =>
          h(
            "li",
            { "data-code": r.code, "data-free": String(Math.max(0, r.max_players - r.players)) },
            h("a", { href: `/r/${r.code}`, onclick: (e) => (e.preventDefault(), joinOpen(r.code)) }, r.code),
            ` ${r.variant} · ${r.players}/${r.max_players} players · ${Math.round(r.time_limit / 60)} min${kinds(r)} · by ${r.creator_name}${r.creator_guest ? " (guest)" : ""}`,
            r.creator_rating != null ? ` (${ratingText(Math.round(r.creator_rating), r.creator_provisional)})` : "",
          ),
        )
      : [h("li", { class: "empty" }, "No open races right now: create one and tick “list it”.")]),
  );
}

/** What kind of race a listing is: rated, live boards, humans only (each when so). */
function kinds(r) {
  const said = [r.rated && "rated", r.live_boards && "live boards", r.humans_only && "humans only"];
  return said.filter(Boolean).map((k) => ` · ${k}`).join("");
}

async function joinOpen(code) {
  if (!(await takeName())) return;
  join(code, "player");
}

async function follow() {
  if (watching || !session.welcomed) return;
  watching = true;
  try {
    const reply = await session.request({ type: "open_races", watch: true });
    listed.clear();
    for (const r of reply.races || []) listed.set(r.code, r);
    drawList();
  } catch {
    watching = false;
  }
}

function drawMatch() {
  const box = $("#quick-match-state");
  if (!box) return;
  $("#quick-match").disabled = matching !== null;
  fill(
    box,
    ...(matching
      ? [notice ? h("span", { id: "match-notice" }, notice + " ") : "", h("span", { id: "match-waiting" }, `Looking for players (${matching}${matchingKind ? ", " + matchingKind : ""})…`), " ", h("button", { id: "cancel-match", type: "button", onclick: cancel }, "Cancel")]
      : []),
  );
}

async function quickMatch() {
  if (!(await takeName())) return;
  notice = "";
  await queue({ variant: $("#quick-variant").value, with_bots: $("#quick-bots").checked });
}

async function queue(asked) {
  lastQuick = asked;
  matching = asked.variant;
  matchingKind = "";
  drawMatch();
  try {
    // a guest is queued casual (rated races are for accounts), an account rated
    const queued = await session.request({ type: "quick_match", ...asked });
    if (matching && queued && typeof queued.rated === "boolean") {
      matchingKind = queued.rated ? "rated" : "casual";
      drawMatch();
    }
  } catch (e) {
    // a player who missed a match or left one before its start waits first (retry_after)
    matching = null;
    drawMatch();
    fill($("#quick-match-state"), h("span", { class: "error" }, e.message));
  }
}

async function cancel() {
  matching = null;
  drawMatch();
  try {
    await session.request({ type: "cancel_match" });
  } catch {
    // gone with the connection: nothing is queued then
  }
}

/** The Quick match panel and the open races' list, for the lobby. */
export function lobbyPanels() {
  const quick = h(
    "div",
    { class: "card-panel", id: "quick-panel" },
    h("h2", {}, "Quick match"),
    h(
      "div",
      { class: "row" },
      h("label", { for: "quick-variant" }, "Variant"),
      h("select", { id: "quick-variant" }, Object.keys(BASES).map((b) => h("option", { value: b, selected: b === "spider1" }, baseLabel(b)))),
      h("label", { class: "check" }, h("input", { type: "checkbox", id: "quick-bots" }), "with bots"),
    ),
    h("div", { class: "row" }, h("button", { id: "quick-match", type: "button", class: "primary", onclick: quickMatch }, "Quick match"), h("span", { id: "quick-match-state" })),
    session.account ? null : h("p", { id: "quick-casual", class: "muted" }, "As a guest you are matched in casual races: no rating moves. Sign up or sign in to race rated."),
  );
  const open = h("div", { class: "card-panel", id: "open-races" }, h("h2", {}, "Open races"), h("ul", { id: "open-race-list" }));
  queueMicrotask(() => {
    drawList();
    drawMatch();
    follow();
  });
  return [quick, open];
}
