// Boards drawn: cards, columns, the stock, the runs (and Starfish's Troupe), the Tower's
// reserve; long columns squeezed to fit; a player's progress card. Shared by the game, the
// spectator's live boards and the replay; input is given in (`onPress`, `onTroupe`).

import { cardFace, foundationFace } from "./cards.js";
import { columnLetter, RESERVE } from "./rules.js";
import { deal, hintMarks, whyNot } from "./actions.js";
import { $, botMark, fill, fmtTime, guestMark, h } from "./dom.js";
import { selectedCount } from "./moves.js";
import { app, session, STATUS_TEXT } from "./state.js";
import { count } from "./words.js";

/** The stock: the deals left (a click deals, on the player's own board). */
export function renderStock(board, slot, interactive) {
  if (!slot) return;
  if (!board.variant.stockDeals.length) {
    fill(slot);
    return;
  }
  const deals = board.dealsLeft();
  const blocked = interactive ? whyNot("deal") : null;
  const hinted = interactive && hintMarks(board)?.stock;
  fill(slot,
    h(
      "div",
      {
        id: interactive ? "stock" : null,
        class: `stock ${deals ? "" : "empty"} ${blocked ? "blocked" : ""} ${hinted ? "hint-stock" : ""}`,
        role: interactive ? "button" : null,
        tabindex: interactive ? "0" : null,
        title: interactive ? blocked || "Deal (+)" : null,
        "aria-disabled": blocked ? "true" : null,
        "aria-label": `stock: ${count(deals, "deal left", "deals left")}`,
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
    ...board.foundation.filter((t) => v.family !== "wizard" || t !== "t").map((t) => {
      const f = foundationFace(v.family, t);
      return h("span", { class: `run ${f.cls}`, title: "completed" }, f.label);
    }),
    v.family === "wizard" ? tower(board) : null,
    v.family === "starfish" ? troupe(board, el.id === "foundation", onTroupe) : null,
  );
}

/** Wizard's Tower: the trump it needs next (the Fool, 0, first; each trump that left is a
 * `t` of the foundation). */
function tower(board) {
  const next = board.foundation.filter((t) => t === "t").length;
  const text = next > 21 ? "Tower complete" : `Tower: next trump ${next}${next === 0 ? " (the Fool)" : ""}`;
  return h("span", { class: "run trump tower", id: "tower", dataset: { next: String(next) }, title: "the Tower takes the trumps in order, 0 to 21, from any column's end" }, text);
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
  const marks = hintMarks(board);
  if (marks?.reserve && card >= 0) content.classList.add("hint-card");
  fill(slot, h("div", { class: `column reserve ${marks?.target === RESERVE ? "hint-target" : ""}`, dataset: { col: String(RESERVE) }, title: "reserve (z)" }, content));
  fitLabels(slot);
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
  const marks = interactive ? hintMarks(board) : null;
  const columns = board.cols.map((col, i) => {
    const down = board.down[i];
    const run = board.movable(i);
    const selCount = sel && sel.src === i ? selectedCount(board, sel) : 0;
    const cards = col.map((c, k) => {
      const el = cardElement(v, v.cards.tokens[c], {
        col: i,
        index: k,
        up: k >= down,
        after: k === 0 ? null : k - 1 < down ? "down" : "up",
        movable: interactive && k >= col.length - run,
        selected: selCount && k >= col.length - selCount,
      });
      const hinted = marks && ((marks.cards && marks.cards[0] === i && k >= marks.cards[1] && k < marks.cards[2]) || (marks.set?.includes(i) && k === col.length - 1));
      if (hinted) el.classList.add("hint-card");
      return el;
    });
    const hintTarget = marks && marks.target === i;
    return h(
      "div",
      { class: `column ${sel && sel.src === i ? "picked" : ""} ${sel?.set?.includes(i) ? "picked" : ""} ${hintTarget ? "hint-target" : ""}`, dataset: { col: String(i), letter: columnLetter(i) } },
      h("span", { class: "letter", "aria-hidden": "true" }, columnLetter(i)),
      cards.length ? cards : h("div", { class: "card slot-empty", dataset: { col: String(i) } }),
    );
  });
  const el = h("div", { id, class: `board ${mini ? "mini" : ""} ${interactive ? "interactive" : ""}`, style: `--cols:${board.cols.length}`, dataset: { family: v.family } }, columns);
  if (interactive && onPress) el.addEventListener("pointerdown", onPress);
  return el;
}

/** The least height (CSS px) of the strip a later card leaves visible of a face-up card:
 * a tap target, and room for its rank (a label on two lines gets the room it needs). */
export const STRIP = 26;

/** Lay each column out in the height left on screen (or `room` pixels): the strip a later
 * card leaves of a face-up card is at least STRIP px (so that a narrow card on a phone is
 * still tapped and read: the height makes up for the width), a face-down card's a fifth of
 * the card's width; a column too long for the room squeezes its face-down strips first, then
 * its face-up ones. */
export function fitColumns(el, room = null) {
  if (room === null) room = Math.max(window.innerHeight - el.getBoundingClientRect().top - 12, 160);
  fitLabels(el);
  for (const column of el.querySelectorAll(".column")) {
    const w = column.getBoundingClientRect().width || 1;
    const downs = column.querySelectorAll(".card.after-down").length;
    const ups = column.querySelectorAll(".card.after-up").length;
    const avail = room - 1.4 * w - 14;
    // a label on two lines (fitLabels) wants its strip the height of both
    const labels = [...column.querySelectorAll(".corner.stacked")].map((c) => c.offsetTop + c.offsetHeight + 1);
    let sd = 0.18 * w;
    let su = Math.max(0.42 * w, STRIP, ...labels);
    if (downs * sd + ups * su > avail) {
      if (downs) sd = Math.max(0.06 * w, (avail - ups * su) / downs);
      if (ups && downs * sd + ups * su > avail) su = Math.max(0.13 * w, (avail - downs * sd) / ups);
    }
    column.style.setProperty("--sd", `${sd.toFixed(1)}px`);
    column.style.setProperty("--su", `${su.toFixed(1)}px`);
  }
}

/** A card whose corner label (rank and suit) is wider than the card puts its suit under its
 * rank, as printed cards do: a narrow card (a phone's twelve or thirteen columns) shows
 * `10` over `⚚`, `D` over `green`, whole, in the strip a later card leaves (fitColumns
 * makes it tall enough for both lines). Measured on the page, so any font and width is fitted; the cards whose
 * label fits stay on one line. */
export function fitLabels(root) {
  const corners = [...root.querySelectorAll(".card.up .corner")];
  for (const corner of corners) corner.classList.remove("stacked");
  const wide = corners.filter((corner) => corner.scrollWidth > corner.clientWidth);
  for (const corner of wide) corner.classList.add("stacked");
}
window.addEventListener("resize", () => {
  const el = $("#board");
  if (el) fitColumns(el);
});

/** A player's progress: their place in the race (`place`, "2nd of 4"), status, runs, cards turned up, deals left, moves (and hints). */
export function playerCard(p, total, place = "") {
  return h(
    "div",
    { class: `player status-${p.status} ${p.player === session.player ? "me" : ""} ${p.ghost ? "ghost" : ""}`, dataset: { player: p.player, status: p.status, moves: String(p.moves), ...(p.ghost ? { ghost: "1" } : {}) } },
    h(
      "div",
      { class: "head" },
      p.ghost ? h("span", { class: "dot ghost-dot", title: "a ghost: a recorded run" }, "◌") : h("span", { class: "dot", title: p.connected ? "connected" : p.away_since ? `away since ${new Date(p.away_since * 1000).toLocaleTimeString()}` : "away", dataset: { on: p.connected ? "1" : "0" } }),
      h("span", { class: "name", title: p.name }, p.name, guestMark(p), botMark(p), p.player === session.player ? " (you)" : p.ghost ? " (ghost)" : ""),
      place ? h("span", { class: "place" }, place) : null,
      h("span", { class: "status" }, STATUS_TEXT[p.status] || p.status, p.time ? ` ${fmtTime(p.time)}` : ""),
    ),
    h(
      "div",
      { class: "stats" },
      stat(`${p.runs}/${total}`, "runs"),
      stat(p.turned_up, "turned up"),
      stat(p.deals_left, p.deals_left === 1 ? "deal left" : "deals left"),
      stat(p.moves, p.moves === 1 ? "move" : "moves"),
      p.hints ? stat(p.hints, p.hints === 1 ? "hint" : "hints") : null,
    ),
    h("div", { class: "bar", "aria-hidden": "true" }, h("span", { style: `width:${Math.round((100 * p.runs) / Math.max(1, total))}%` })),
  );
}

function stat(value, label) {
  return h("span", { class: "stat" }, h("b", {}, String(value)), ` ${label}`);
}
