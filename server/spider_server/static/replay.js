// A player's replay: the revealed seed dealt with the spec's algorithm, the player's actions
// applied (undos included) with the page's rules, stepped through; it says whether it ends
// on the final board the server published.

import { Board } from "./rules.js";
import { boardElement, fitColumns, renderFoundation, renderStock } from "./boardview.js";
import { $, fill, h } from "./dom.js";
import { app } from "./state.js";

/** Replay `player`'s actions from the revealed seed. */
export function openReplay(player) {
  const race = app.race;
  const actions = race.replays?.[player];
  if (!actions) return;
  const positions = [];
  let board;
  let error = null;
  try {
    board = Board.deal(race.variant, race.seed);
    positions.push(board.copy());
    for (const a of actions) {
      if (a === "undo") board.pop();
      else if (a !== "resign") board.push(a);
      positions.push(board.copy());
    }
  } catch (e) {
    error = e.message;
  }
  const final = app.boards[player];
  app.replay = { player, actions, positions, index: 0, error, matches: board && !error && final ? board.text() === final : null };
  renderReplay();
}

/** The replay: a tab per player, the steps' controls, the board at the step. */
export function renderReplay() {
  const slot = $("#replay");
  const r = app.replay;
  if (!slot) return;
  const race = app.race;
  if (!r) {
    const hidden = race.daily && !race.seed;
    fill(slot, h("p", { class: "muted", id: hidden ? "daily-hidden" : null }, hidden ? `The deal and the replays of the daily deal are shown once its day (${race.daily}, UTC) is over.` : "No replay."));
    return;
  }
  const names = Object.fromEntries(race.players.map((p) => [p.player, p.name]));
  (race.results || []).forEach((x) => (names[x.player] = x.name));
  const board = r.positions[r.index];
  const step = (i) => {
    r.index = Math.max(0, Math.min(r.positions.length - 1, i));
    renderReplay();
  };
  const last = r.positions.length - 1;
  fill(slot,
    h("h2", {}, "Replay"),
    h(
      "div",
      { class: "row tabs", role: "tablist" },
      Object.keys(race.replays || {}).map((p) =>
        h("button", { type: "button", role: "tab", class: p === r.player ? "on" : "", "aria-selected": p === r.player ? "true" : "false", dataset: { player: p }, onclick: () => openReplay(p) }, names[p] || p),
      ),
    ),
    h(
      "div",
      { class: "row controls" },
      h("button", { id: "replay-first", type: "button", title: "first (Home)", onclick: () => step(0) }, "⇤"),
      h("button", { id: "replay-prev", type: "button", title: "back (←)", onclick: () => step(r.index - 1) }, "◀"),
      h("input", { id: "replay-slider", type: "range", min: 0, max: last, value: r.index, "aria-label": "move", oninput: (e) => step(parseInt(e.target.value, 10)) }),
      h("button", { id: "replay-next", type: "button", title: "forward (→)", onclick: () => step(r.index + 1) }, "▶"),
      h("button", { id: "replay-last", type: "button", title: "last (End)", onclick: () => step(last) }, "⇥"),
      h("span", { id: "replay-step", class: "muted" }, r.index === 0 ? `the deal · ${r.actions.length} actions` : `${r.index}/${r.actions.length}: ${r.actions[r.index - 1]}`),
    ),
    r.error ? h("p", { class: "error" }, `This replay could not be played: ${r.error}`) : null,
    r.matches === true ? h("p", { class: "fairness ok", id: "replay-check" }, "✓ Replayed from the seed, it ends on the server's final board.") : null,
    r.matches === false ? h("p", { class: "fairness bad", id: "replay-check" }, "✗ Replayed from the seed, it does not end on the server's final board!") : null,
    board
      ? h(
          "div",
          { class: "replay-board" },
          h("div", { class: "toolbar" }, h("div", { class: "replay-stock" }), h("div", { class: "foundation replay-foundation" })),
          (() => {
            const el = boardElement(board, {});
            el.id = "replay-board";
            el.dataset.position = board.text();
            return el;
          })(),
        )
      : null,
  );
  if (board) {
    renderStock(board, slot.querySelector(".replay-stock"), false);
    renderFoundation(board, slot.querySelector(".replay-foundation"));
    fitColumns(slot.querySelector("#replay-board"), Math.max(window.innerHeight * 0.75, 240));
  }
}

/** The arrows, Home and End step through the replay. */
export function onReplayKey(e) {
  const r = app.replay;
  const moves = { ArrowLeft: r.index - 1, ArrowRight: r.index + 1, Home: 0, End: r.positions.length - 1 };
  if (!(e.key in moves)) return false;
  r.index = Math.max(0, Math.min(r.positions.length - 1, moves[e.key]));
  renderReplay();
  return true;
}
