// The race room before the start: the link to share, the settings, who is ready, the
// countdown.

import { store } from "./net.js";
import { $, botMark, fill, guestMark, h, morph } from "./dom.js";
import { toLobby } from "./race.js";
import { app, describeRace, me, remember, session } from "./state.js";
import { provide, say, tick } from "./ui.js";

function shareLink() {
  return `${location.origin}/r/${app.code}`;
}

function renderRoom() {
  const race = app.race;
  const mine = me();
  const countdown = race.state === "countdown";
  const players = race.players.map((p) =>
    h(
      "li",
      { class: `player ${p.ready ? "ready" : ""}`, dataset: { player: p.player } },
      h("span", { class: "name" }, p.name, guestMark(p), botMark(p), p.player === session.player ? " (you)" : p.ghost ? " (ghost)" : ""),
      h("span", { class: "state" }, p.ghost ? "a recorded run" : p.ready ? "✓ ready" : "not ready"),
      p.connected || p.ghost ? null : h("span", { class: "away" }, "away"),
    ),
  );
  const link = shareLink();
  const room = h(
    "div",
    { class: "room card-panel" },
    race.daily ? h("h1", {}, "Daily deal ", h("span", { class: "code" }, race.daily)) : h("h1", {}, "Race ", h("span", { class: "code" }, race.code)),
    race.daily
      ? h("p", { class: "daily-note", id: "daily-note" }, session.account ? "Today's deal, alone against the clock: it starts when you are ready. Your time and moves go on the day's leaderboard if you win." : "Today's deal, alone against the clock: it starts when you are ready. The day's leaderboard is for accounts: sign up to be on it.")
      : h(
          "p",
          { class: "share" },
          "Invite friends with this link: ",
          h("a", { id: "share-link", href: link }, link),
          " ",
          h("button", { id: "copy-link", type: "button", onclick: () => copyLink(link) }, "Copy"),
        ),
    h("p", { id: "message", class: `message ${app.message?.kind || ""}`, role: "status", "aria-live": "polite" }, app.message?.text || ""),
    h("p", { class: "settings", id: "settings" }, describeRace(race)),
    app.unsupported?.length ? h("p", { class: "notice" }, `This server does not offer ${app.unsupported.join(" and ")} yet: the race was created without.`) : null,
    race.seed_chosen ? h("p", { class: "seed-note", id: "seed-chosen" }, "The creator chose this deal's seed.") : null,
    race.preparing ? h("p", { class: "notice", id: "preparing" }, "Finding a deal the solver proves winnable…") : null,
    h("h2", {}, `Players (${race.players.filter((p) => !p.ghost).length}/${race.max_players})`, race.spectators ? ` · ${race.spectators} watching` : ""),
    h("ul", { class: "players", id: "room-players" }, players),
    countdown ? h("p", { class: "countdown", id: "countdown", "aria-live": "assertive" }, "") : null,
    h(
      "div",
      { class: "row" },
      mine
        ? h("button", { id: "ready", class: "primary", type: "button", "data-autofocus": true, disabled: countdown, onclick: () => setReady(!mine.ready) }, mine.ready ? "Not ready" : "Ready")
        : h("p", {}, "You are watching: the race starts when every player is ready."),
      mine ? h("button", { id: "leave", type: "button", onclick: leaveRace }, "Leave") : h("button", { id: "to-lobby", type: "button", onclick: toLobby }, "Lobby"),
    ),
  );
  // drawn again on every event of the race (a player joins, is ready): the room on the
  // page is kept and changed, not replaced, so that a click on Ready is never lost
  const screen = $("#screen");
  const shown = screen.childElementCount === 1 ? $(".room", screen) : null;
  if (shown && shown.parentNode === screen) morph(shown, room);
  else fill(screen, room);
  tick();
}

function copyLink(link) {
  const done = () => say("Link copied.", "info");
  if (navigator.clipboard?.writeText) navigator.clipboard.writeText(link).then(done, () => selectLink());
  else selectLink();
}

/** Without the clipboard (a plain-http page from another host): the link selected, to copy
 * by hand. */
function selectLink() {
  const range = document.createRange();
  range.selectNodeContents($("#share-link"));
  getSelection().removeAllRanges();
  getSelection().addRange(range);
  say("The link is selected: copy it (Ctrl+C, or the menu).", "info");
}

async function setReady(ready) {
  try {
    await session.request({ type: "ready", code: app.code, ready });
  } catch (e) {
    say(e.message, "error");
  }
}

async function leaveRace() {
  const code = app.code;
  try {
    await session.request({ type: "leave", code });
  } catch (e) {
    say(e.message, "error");
    return;
  }
  remember(code, null);
  store.set(`pending.${code}`, null);
  toLobby();
}

provide("room", renderRoom);
