// Boards drawn: cards, columns, the stock, the runs (and Starfish's Troupe), the Tower's
// reserve; long columns squeezed to fit; a player's progress card. Shared by the game, the
// spectator's live boards and the replay; input is given in (`onPress`, `onTroupe`).

import { cardFace, foundationFace } from "./cards.js";
import { columnLetter, RESERVE } from "./rules.js";
import { deal } from "./actions.js";
import { $, botMark, fill, fmtTime, h } from "./dom.js";
import { selectedCount } from "./moves.js";
import { app, session, STATUS_TEXT } from "./state.js";

/** The stock: the deals left (a click deals, on the player's own board). */
export function renderStock(board, slot, interactive) {
  if (!slot) return;
  if (!board.variant.stockDeals.length) {
    fill(slot);
    return;
  }
  const deals = board.dealsLeft();
  fill(slot,
    h(
      "div",
      {
        id: interactive ? "stock" : null,
        class: `stock ${deals ? "" : "empty"}`,
        role: interactive ? "button" : null,
        tabindex: interactive ? "0" : null,
        title: interactive ? "Deal (+)" : null,
        "aria-label": `stock: ${deals} deals left`,
        onclick: interactive ? () => deal() : null,
        onkeydown: interactive ? (e) => (e.key === "Enter" || e.key === " ") && (e.preventDefault(), e.stopPropagation(), deal()) : null,
      },
      h("span", { class: "deals" }, String(deals)),
      h("span", { class: "label" }, deals === 1 ? "deal left" : "deals left"),
    ),
  );
}

/** The runs gone to the foundation, by suit; Starfish's Troupe beside them (`onTroupe`:
 * a press on it, on the player's own board). */
export function renderFoundation(board, el, onTroupe = null) {
  if (!el) return;
  const v = board.variant;
  const total = v.setCount();
  fill(el,
    h("span", { class: "label" }, "runs "),
    h("span", { class: "count", id: interactiveId(el, "runs-count") }, `${board.foundation.length}/${total}`),
    ...board.foundation.map((t) => {
      const f = foundationFace(v.family, t);
      return h("span", { class: `run ${f.cls}`, title: "completed" }, f.label);
    }),
    v.family === "starfish" ? troupe(board, el.id === "foundation", onTroupe) : null,
  );
}

/** Starfish's Troupe: the Jokers left; on the player's own board a Joker drags from it. */
function troupe(board, interactive, onTroupe) {
  const n = board.extra[0];
  const live = interactive && n > 0;
  return h(
    "span",
    {
      class: `troupe ${live ? "live" : ""}`,
      id: interactive ? "troupe" : null,
      dataset: { jokers: String(n) },
      title: live ? "Jokers left in the Troupe: drag one onto a card to replace it" : "Jokers left in the Troupe",
      onpointerdown: live ? onTroupe : null,
    },
    " · ",
    h("span", { class: "joker-chip", "aria-hidden": "true" }, "☆"),
    ` Jokers ${n}`,
  );
}

function interactiveId(el, id) {
  return el.id === "foundation" ? id : null;
}

/** Wizard's Tower's reserve (column z, with `weave`). */
export function renderReserve(board, slot) {
  const card = board.extra[0];
  const v = board.variant;
  const content = card >= 0 ? cardElement(v, v.cards.tokens[card], { col: RESERVE, index: 0, up: true }) : h("div", { class: "card slot-empty" }, "reserve");
  fill(slot, h("div", { class: "column reserve", dataset: { col: String(RESERVE) }, title: "reserve (z)" }, content));
}

/** One card: face down, or its face (with the classes the board's drawing and input use). */
export function cardElement(v, token, { col, index, up, after, movable, selected }) {
  if (!up) return h("div", { class: `card down ${after ? `after-${after}` : ""}`, dataset: { col: String(col), index: String(index), card: "??" }, "aria-label": "face-down card" });
  const f = cardFace(v.family, token);
  // a Decktet card's suits each in their own colour
  const symbols = (text) => (f.parts ? f.parts.map(([sym, cls]) => h("span", { class: cls }, sym)) : text);
  return h(
    "div",
    {
      class: `card up ${f.cls} ${after ? `after-${after}` : ""} ${movable ? "movable" : ""} ${selected ? "selected" : ""}`,
      dataset: { col: String(col), index: String(index), card: token },
      "aria-label": f.name,
      title: f.name,
    },
    h("span", { class: "corner" }, h("span", { class: "rank" }, f.rank), h("span", { class: "suit" }, symbols(f.suit))),
    h("span", { class: "big" }, symbols(f.big)),
  );
}

/** A board's columns (interactive: my own board in play). */
export function boardElement(board, { interactive = false, id = null, mini = false, onPress = null } = {}) {
  const v = board.variant;
  const sel = interactive ? app.selection : null;
  const columns = board.cols.map((col, i) => {
    const down = board.down[i];
    const run = board.movable(i);
    const selCount = sel && sel.src === i ? selectedCount(board, sel) : 0;
    const cards = col.map((c, k) =>
      cardElement(v, v.cards.tokens[c], {
        col: i,
        index: k,
        up: k >= down,
        after: k === 0 ? null : k - 1 < down ? "down" : "up",
        movable: interactive && k >= col.length - run,
        selected: selCount && k >= col.length - selCount,
      }),
    );
    return h(
      "div",
      { class: `column ${sel && sel.src === i ? "picked" : ""} ${sel?.set?.includes(i) ? "picked" : ""}`, dataset: { col: String(i), letter: columnLetter(i) } },
      h("span", { class: "letter", "aria-hidden": "true" }, columnLetter(i)),
      cards.length ? cards : h("div", { class: "card slot-empty", dataset: { col: String(i) } }),
    );
  });
  const el = h("div", { id, class: `board ${mini ? "mini" : ""} ${interactive ? "interactive" : ""}`, style: `--cols:${board.cols.length}`, dataset: { family: v.family } }, columns);
  if (interactive && onPress) el.addEventListener("pointerdown", onPress);
  return el;
}

/** Squeeze long columns so that each fits the height left on screen (or `room` pixels). */
export function fitColumns(el, room = null) {
  if (room === null) room = Math.max(window.innerHeight - el.getBoundingClientRect().top - 12, 160);
  for (const column of el.querySelectorAll(".column")) {
    const w = column.getBoundingClientRect().width || 1;
    const downs = column.querySelectorAll(".card.after-down").length;
    const ups = column.querySelectorAll(".card.after-up").length;
    const natural = w * (1.4 + 0.18 * downs + 0.42 * ups) + 14;
    column.style.removeProperty("--sd");
    column.style.removeProperty("--su");
    if (natural > room && downs + ups) {
      const scale = Math.max(0.3, (room / w - 1.4 - 14 / w) / (0.18 * downs + 0.42 * ups));
      column.style.setProperty("--sd", `${(18 * scale).toFixed(2)}%`);
      column.style.setProperty("--su", `${(42 * Math.min(1, scale)).toFixed(2)}%`);
    }
  }
}
window.addEventListener("resize", () => {
  const el = $("#board");
  if (el) fitColumns(el);
});

/** A player's progress: status, runs, cards turned up, deals left, moves (and hints). */
export function playerCard(p, total) {
  return h(
    "div",
    { class: `player status-${p.status} ${p.player === session.player ? "me" : ""}`, dataset: { player: p.player, status: p.status, moves: String(p.moves) } },
    h(
      "div",
      { class: "head" },
      h("span", { class: "dot", title: p.connected ? "connected" : "away", dataset: { on: p.connected ? "1" : "0" } }),
      h("span", { class: "name" }, p.name, botMark(p), p.player === session.player ? " (you)" : ""),
      h("span", { class: "status" }, STATUS_TEXT[p.status] || p.status, p.time ? ` ${fmtTime(p.time)}` : ""),
    ),
    h(
      "div",
      { class: "stats" },
      stat("runs", `${p.runs}/${total}`),
      stat("turned up", p.turned_up),
      stat("deals left", p.deals_left),
      stat("moves", p.moves),
      p.hints ? stat("hints", p.hints) : null,
    ),
    h("div", { class: "bar", "aria-hidden": "true" }, h("span", { style: `width:${Math.round((100 * p.runs) / Math.max(1, total))}%` })),
  );
}

function stat(label, value) {
  return h("span", { class: "stat" }, h("b", {}, String(value)), ` ${label}`);
}
