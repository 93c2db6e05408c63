// The game screen: this page's player's board with its stock, runs and reserve, the buttons,
// the keys' help, and every player's progress beside it.

import { findVariant } from "./rules.js";
import { act, askHint, deal, resign, whyNot } from "./actions.js";
import { boardElement, fitColumns, playerCard, renderFoundation, renderReserve, renderStock } from "./boardview.js";
import { $, fill, fmtTime, h } from "./dom.js";
import { onPointerDown, onTroupeDown } from "./drag.js";
import { app, me, session, STATUS_TEXT, TERMINAL } from "./state.js";
import { openHowTo } from "./howto.js";
import { closePanel, openPanel, openPanelId } from "./panel.js";
import { leaders, namesText, newsSince, placeText, standings } from "./standings.js";
import { provide, tick } from "./ui.js";

const BUTTONS = [
  // id, label, the action it stands for, its key, what it does
  ["undo", "Undo", "undo", "u", () => act("undo")],
  ["deal", "Deal", "deal", "+", () => deal()],
  ["hint", "Hint", "hint", "!", () => askHint()],
  ["resign", "Resign", "resign", null, () => resign()],
];

function renderGame() {
  const race = app.race;
  const variant = findVariant(race.variant);
  const root = $("#screen");
  const press = (fn) => (e) => (e.currentTarget.blur(), fn());
  fill(root,
    h(
      "div",
      { class: "game" },
      h(
        "section",
        { class: "table", id: "table" },
        h(
          "div",
          { class: "toolbar" },
          h("div", { id: "stock-slot" }),
          h("div", { id: "foundation", class: "foundation", "aria-label": "completed runs" }),
          variant.base === "wizard" && variant.options.has("weave") ? h("div", { id: "reserve-slot" }) : null,
          h(
            "div",
            { class: "actions" },
            BUTTONS.map(([id, label, , , fn]) => h("button", { id, type: "button", onclick: press(fn) }, h("span", { class: "spinner", "aria-hidden": "true" }), label)),
            h("button", { id: "how-to", type: "button", title: "How to play this variant", onclick: press(() => openHowTo(race.variant)) }, "Rules"),
            h("button", { id: "keys", type: "button", title: "Keys (?)", "aria-label": "keys", onclick: press(toggleHelp) }, "?"),
          ),
        ),
        h("div", { class: "race-line" }, h("span", { id: "place", class: "place", "aria-live": "polite" }), h("span", { id: "race-notice", class: "race-notice", role: "status" }), h("span", { id: "idle-warning", class: "idle-warning", role: "alert" })),
        race.seed_chosen ? h("p", { class: "seed-note", id: "seed-chosen" }, "The creator chose this deal's seed.") : null,
        h("div", { id: "message", class: `message ${app.message?.kind || ""}`, role: "status", "aria-live": "polite" }, app.message?.text || ""),
        h("div", { id: "board-slot" }),
      ),
      h("aside", { id: "players", class: "players-panel", "aria-label": "players" }),
    ),
  );
  renderBoardOnly();
  renderPlayers();
  tick();
}

/** Each button on or off as its action may be taken now, its tooltip saying why not. */
function renderButtons() {
  for (const [id, label, action, key] of BUTTONS) {
    const button = $(`#${id}`);
    if (!button) continue;
    const reason = whyNot(action);
    const pending = id === "hint" && app.hint?.pending;
    button.disabled = Boolean(reason) || pending;
    button.classList.toggle("busy", Boolean(pending));
    button.title = pending ? "Looking for a move…" : reason || `${label}${key ? ` (${key})` : ""}${id === "hint" ? " — counted in the results" : id === "resign" ? " — press twice" : ""}`;
  }
}

function keysList() {
  return h(
    "dl",
    {},
    h("dt", {}, "a … m"),
    h("dd", {}, "pick a column, then another: its run goes there"),
    h("dt", {}, "1 … 9"),
    h("dd", {}, "after a column: how many cards to move"),
    h("dt", {}, "Enter, Space"),
    h("dd", {}, "move the picked cards to the best column"),
    h("dt", {}, "+  =  or  s"),
    h("dd", {}, "deal from the stock"),
    h("dt", {}, "u  or  Backspace"),
    h("dd", {}, "undo"),
    h("dt", {}, "!"),
    h("dd", {}, "ask for a hint (races with hints): its cards and their column light up"),
    h("dt", {}, "x, *, z"),
    h("dd", {}, "Sparrow's sets (or drag a tile of a set onto the runs), Starfish's Jokers (or drag one from the Troupe onto a card, or drag away a card that is not free), the Tower's reserve"),
    h("dt", {}, "Esc"),
    h("dd", {}, "cancel the pick; close this panel"),
    h("dt", {}, "?"),
    h("dd", {}, "show or hide the keys"),
  );
}

/** Show or hide the keys' panel (closed by its button, Escape or a tap outside too). */
export function toggleHelp() {
  if (openPanelId() === "help") {
    closePanel();
    return;
  }
  app.help = true;
  openPanel("help", "Keys", keysList(), () => (app.help = false));
}

/** The player's board again (after an ack, a pick or a refused move), and its stock,
 * runs and reserve; held while a drag is on. */
export function renderBoardOnly() {
  if (app.screen !== "game") return;
  if (app.drag) {
    app.deferred = true;
    return;
  }
  const slot = $("#board-slot");
  if (!slot) return;
  const board = app.board;
  if (!board) {
    fill(slot, h("p", { class: "waiting-deal" }, "Waiting for the deal…"));
    return;
  }
  const p = me();
  const over = p && TERMINAL.has(p.status);
  const el = boardElement(board, { interactive: !over, id: "board", onPress: onPointerDown });
  el.dataset.view = app.view;
  el.dataset.moves = p ? p.moves : 0;
  el.dataset.status = p ? p.status : "";
  if (session.busy()) el.classList.add("waiting");
  const children = [el];
  if (over) {
    const text =
      p.status === "won"
        ? `You won${p.time ? ` in ${fmtTime(p.time)}` : ""}!`
        : `Your game is over: ${STATUS_TEXT[p.status] || p.status}.`;
    children.push(h("div", { class: "game-over", id: "game-over" }, text, h("br"), "Waiting for the others…"));
  }
  fill(slot, ...children);
  renderStock(board, $("#stock-slot"), true);
  renderFoundation(board, $("#foundation"), onTroupeDown);
  const reserve = $("#reserve-slot");
  if (reserve) renderReserve(board, reserve);
  fitColumns(el);
  renderButtons();
}

function renderPlayers() {
  const panel = $("#players");
  if (!panel || !app.race) return;
  const race = app.race;
  const v = findVariant(race.variant);
  const total = v.setCount();
  const places = standings(race.players);
  const sorted = [...race.players].sort((a, b) => places.get(a.player) - places.get(b.player));
  fill(panel,
    h("h2", {}, "Players", race.spectators ? h("span", { class: "muted" }, ` · ${race.spectators} watching`) : null),
    ...sorted.map((p) => playerCard(p, total, race.players.length > 1 ? placeText(places, p.player) : "")),
  );
  const place = $("#place");
  if (place) {
    // no place before anyone made progress; the leaders named unless this player is one
    const mine = race.players.length > 1 ? placeText(places, session.player) : "";
    const top = leaders(race.players);
    const named = top.some((p) => p.player === session.player) ? "" : namesText(top.map((p) => p.name));
    place.textContent = mine ? `You are ${mine}${named ? ` · leading: ${named}` : ""}` : "";
  }
  tellNews();
  // a status the server changed (out of time, stuck, away too long, no move in time) ends
  // the game on the board too, and turns the buttons off
  const mine = me();
  if (mine && $("#board") && $("#board").dataset.status !== mine.status) renderBoardOnly();
  else renderButtons();
}

/** A notice above the board when another player wins or is out of the race. */
export function tellNews() {
  const race = app.race;
  const news = newsSince(app.seen, race.players, session.player, fmtTime);
  app.seen = news.seen;
  const el = $("#race-notice");
  if (!el || !news.texts.length) return;
  el.textContent = news.texts.join(" ");
  el.classList.add("on");
  clearTimeout(app.noticeTimer);
  app.noticeTimer = setTimeout(() => el.classList.remove("on"), 10000);
}

provide("game", renderGame);
provide("board", renderBoardOnly);
provide("players", renderPlayers);
