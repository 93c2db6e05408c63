// The game screen: this page's player's board with its stock, runs and reserve, the buttons,
// the keys' help, and every player's progress beside it.

import { findVariant } from "./rules.js";
import { act, askHint, deal, resign } from "./actions.js";
import { boardElement, fitColumns, playerCard, renderFoundation, renderReserve, renderStock } from "./boardview.js";
import { $, fill, fmtTime, h } from "./dom.js";
import { onPointerDown, onTroupeDown } from "./drag.js";
import { app, me, session, STATUS_TEXT, TERMINAL } from "./state.js";
import { provide, tick } from "./ui.js";

function renderGame() {
  const race = app.race;
  const variant = findVariant(race.variant);
  const root = $("#screen");
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
            h("button", { id: "undo", type: "button", title: "Undo (u)", disabled: !race.undo, onclick: (e) => (e.currentTarget.blur(), act("undo")) }, "Undo"),
            h("button", { id: "deal", type: "button", title: "Deal (+)", onclick: (e) => (e.currentTarget.blur(), deal()) }, "Deal"),
            race.hints ? h("button", { id: "hint", type: "button", title: "Hint (!) — counted in the results", onclick: (e) => (e.currentTarget.blur(), askHint()) }, "Hint") : null,
            h("button", { id: "resign", type: "button", title: "Resign", onclick: (e) => (e.currentTarget.blur(), resign()) }, "Resign"),
            h("button", { id: "keys", type: "button", title: "Keys (?)", onclick: (e) => (e.currentTarget.blur(), toggleHelp()) }, "?"),
          ),
        ),
        race.seed_chosen ? h("p", { class: "seed-note", id: "seed-chosen" }, "The creator chose this deal's seed.") : null,
        h("div", { id: "message", class: `message ${app.message?.kind || ""}`, role: "status", "aria-live": "polite" }, app.message?.text || ""),
        h("div", { id: "board-slot" }),
        app.help ? helpPanel() : null,
      ),
      h("aside", { id: "players", class: "players-panel", "aria-label": "players" }),
    ),
  );
  renderBoardOnly();
  renderPlayers();
  tick();
}

function helpPanel() {
  return h(
    "div",
    { class: "help card-panel", id: "help" },
    h("h2", {}, "Keys"),
    h(
      "dl",
      {},
      h("dt", {}, "a … j"),
      h("dd", {}, "pick a column, then another: its run goes there"),
      h("dt", {}, "1 … 9"),
      h("dd", {}, "after a column: how many cards to move"),
      h("dt", {}, "Enter, Space"),
      h("dd", {}, "move the picked cards to the best column"),
      h("dt", {}, "+  or  s"),
      h("dd", {}, "deal from the stock"),
      h("dt", {}, "u  or  Backspace"),
      h("dd", {}, "undo"),
      h("dt", {}, "!"),
      h("dd", {}, "ask for a hint (races with hints)"),
      h("dt", {}, "x, *, z"),
      h("dd", {}, "Sparrow's sets (or drag a tile of a set onto the runs), Starfish's Jokers (or drag one from the Troupe onto a card, or drag away a card that is not free), the Tower's reserve"),
      h("dt", {}, "Esc"),
      h("dd", {}, "cancel the pick"),
    ),
  );
}

/** Show or hide the keys' help. */
export function toggleHelp() {
  app.help = !app.help;
  if (app.screen === "game") renderGame();
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
}

function renderPlayers() {
  const panel = $("#players");
  if (!panel || !app.race) return;
  const v = findVariant(app.race.variant);
  const total = v.setCount();
  const sorted = [...app.race.players].sort((a, b) => (a.player === session.player ? -1 : b.player === session.player ? 1 : 0));
  fill(panel,
    h("h2", {}, "Players", app.race.spectators ? h("span", { class: "muted" }, ` · ${app.race.spectators} watching`) : null),
    ...sorted.map((p) => playerCard(p, total)),
  );
}

provide("game", renderGame);
provide("board", renderBoardOnly);
provide("players", renderPlayers);
