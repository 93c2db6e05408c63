// Input by pointer (mouse and touch): a press and release in place is a click; a press and
// move drags, and the places the cards may go light up.

import { columnLetter, RESERVE } from "./rules.js";
import { act, onCardClick } from "./actions.js";
import { cardElement } from "./boardview.js";
import { $, h } from "./dom.js";
import { bestJoker, clickMove, jokerMoves, setAttempt, setWith } from "./moves.js";
import { app, iAmPlaying } from "./state.js";
import { render, say } from "./ui.js";

// pointer input: a press and release in place is a click; a press and move drags the card
// with the cards on it. The other decks' own moves drag too: a Starfish card that is not
// free is replaced by a Joker (the card alone goes where it is dropped), a Joker dragged
// from the Troupe onto a card replaces it, and a Sparrow Wind or Flower dropped on the
// foundation takes off its set.

/** A press on a face-up card of the player's board: a click or a drag begins. */
export function onPointerDown(e) {
  if (e.button !== 0 || !iAmPlaying()) return;
  const cardEl = e.target.closest(".card.up");
  if (!cardEl) return;
  e.preventDefault();
  const col = parseInt(cardEl.dataset.col, 10);
  const index = parseInt(cardEl.dataset.index, 10);
  app.press = { x: e.clientX, y: e.clientY, col, index, el: cardEl, id: e.pointerId };
}

/** A press on Starfish's Troupe: a Joker's drag begins. */
export function onTroupeDown(e) {
  if (e.button !== 0 || !iAmPlaying() || !(app.board.extra[0] > 0)) return;
  e.preventDefault();
  app.press = { x: e.clientX, y: e.clientY, troupe: true, el: e.currentTarget, id: e.pointerId };
}

document.addEventListener("pointermove", (e) => {
  const press = app.press;
  if (!press || e.pointerId !== press.id) return;
  if (!app.drag) {
    if (Math.hypot(e.clientX - press.x, e.clientY - press.y) < 6) return;
    const refused = liftRefused(app.board, press);
    if (refused) {
      // only a group that may move lifts: the press ends here, saying why
      app.press = null;
      say(refused, "error");
      return;
    }
    startDrag(press);
  }
  moveDrag(e.clientX, e.clientY);
});

document.addEventListener("pointerup", (e) => {
  const press = app.press;
  if (!press || e.pointerId !== press.id) return;
  app.press = null;
  if (app.drag) endDrag(e.clientX, e.clientY);
  else if (press.troupe) say("Drag a Joker onto a card to replace it: the card goes to another column.", "info");
  else onCardClick(press.col, press.index);
});

document.addEventListener("pointercancel", () => {
  app.press = null;
  if (app.drag) cancelDrag();
});

function cardsOf(col, index) {
  if (col === RESERVE) return [$("#reserve-slot .card.up")].filter(Boolean);
  return [...document.querySelectorAll(`#board .column[data-col="${col}"] .card`)].filter((c) => parseInt(c.dataset.index, 10) >= index);
}

const columnEl = (j) => (j === RESERVE ? $("#reserve-slot .column") : $(`#board .column[data-col="${j}"]`));
const cardEl = (col, index) => $(`#board .column[data-col="${col}"] .card[data-index="${index}"]`);

/** What a drag of the pressed cards does: "move" (a run, or the reserve's card), "joker" (a
 * Starfish card that is not free: a Joker takes its place), "troupe" (a Joker from the
 * Troupe). */
function dragKind(board, press, count) {
  if (press.troupe) return "troupe";
  if (board.variant.family === "starfish" && press.col !== RESERVE && count >= 2 && count > board.movable(press.col)) return "joker";
  return "move";
}

/** Why the pressed cards may not be lifted (a group that is not the run at its column's
 * end, a Starfish card that no Joker may replace), or null when they may. */
export function liftRefused(board, press) {
  if (press.troupe || press.col === RESERVE) return null;
  const count = board.cols[press.col].length - press.index;
  if (count <= board.movable(press.col)) return null;
  if (dragKind(board, press, count) === "joker" && jokerMoves(board, press.col, count).length) return null;
  return clickMove(board, press.col, press.index).reason || "only the run at the end of a column moves";
}

function startDrag(press) {
  const board = app.board;
  const count = press.troupe ? 1 : press.col === RESERVE ? 1 : board.cols[press.col].length - press.index;
  const kind = dragKind(board, press, count);
  // the cards that leave: the run from the pressed card, or the one card a Joker replaces
  let cards;
  let ghostCards;
  if (kind === "troupe") {
    cards = [];
    const card = $("#board .card");
    const width = card ? card.getBoundingClientRect().width : 60;
    ghostCards = [cardElement(board.variant, "@", { col: -1, index: 0, up: true })];
    ghostCards[0].style.width = `${width}px`;
  } else {
    cards = kind === "joker" ? [press.el] : cardsOf(press.col, press.index);
    ghostCards = cards.map((c) => {
      const copy = c.cloneNode(true);
      copy.classList.remove("after-down");
      return copy;
    });
  }
  const first = (kind === "troupe" ? press.el : cards[0]).getBoundingClientRect();
  const width = kind === "troupe" ? ghostCards[0].style.width : `${first.width}px`;
  const ghost = h("div", { class: "drag-ghost board", id: "ghost", style: `width:${width};left:${first.left}px;top:${first.top}px` }, ghostCards);
  for (const c of cards) c.classList.add(kind === "joker" ? "joker-slot" : "lifted");
  document.body.append(ghost);
  // a Joker hangs below and right of the pointer, to leave the card it is on in sight
  const dx = kind === "troupe" ? -0.3 * parseFloat(width) : press.x - first.left;
  const dy = kind === "troupe" ? -14 : press.y - first.top;
  app.drag = { ...press, kind, ghost, cards, dx, dy, origin: first, count };
  // light up where the cards may go (a hint: the server decides)
  const target = (j) => columnEl(j)?.classList.add("target");
  if (kind === "troupe") {
    // every card a Joker may replace, and its column
    for (const m of board.generateMoves()) {
      if (m.kind !== "joker") continue;
      cardEl(m.src, board.cols[m.src].length - m.count)?.classList.add("joker-target");
      target(m.src);
    }
    return;
  }
  if (kind === "joker") {
    for (const m of jokerMoves(board, press.col, count)) target(m.dst);
    return;
  }
  for (let j = 0; j < board.cols.length; j++) {
    const text = press.col === RESERVE ? `z1${columnLetter(j)}` : `${columnLetter(press.col)}${count}${columnLetter(j)}`;
    if (j !== press.col && board.isLegal(text)) target(j);
  }
  if (press.col !== RESERVE && board.isLegal(`${columnLetter(press.col)}${count}z`)) target(RESERVE);
  // Sparrow: a Wind or a Flower at a column's end may take its set off to the foundation
  if (board.variant.family === "sparrow" && count === 1 && press.col !== RESERVE && board.variant.blocker(board.cols[press.col].at(-1))) {
    app.drag.set = setWith(board, press.col);
    if (app.drag.set) {
      $("#foundation")?.classList.add("target");
      for (const j of app.drag.set.columns) if (j !== press.col) cardEl(j, board.cols[j].length - 1)?.classList.add("in-set");
    }
  }
}

function moveDrag(x, y) {
  const d = app.drag;
  d.ghost.style.left = `${x - d.dx}px`;
  d.ghost.style.top = `${y - d.dy}px`;
  document.querySelectorAll(".drop-over").forEach((c) => c.classList.remove("drop-over"));
  const toFoundation = d.kind === "move" && d.set !== undefined && overFoundation(x, y);
  d.ghost.classList.toggle("to-foundation", toFoundation);
  if (toFoundation) {
    $("#foundation")?.classList.add("drop-over");
    return;
  }
  // only a place the cards may go lights up under the pointer
  const over = columnAt(x, y);
  const overEl = over === null ? null : columnEl(over);
  if (overEl?.classList.contains("target")) overEl.classList.add("drop-over");
  if (d.kind === "troupe") {
    const spot = jokerSpot(x, y);
    const spotEl = spot && cardEl(spot.col, spot.index);
    if (spotEl?.classList.contains("joker-target")) spotEl.classList.add("drop-over");
  }
}

function columnAt(x, y) {
  const el = document.elementFromPoint(x, y)?.closest(".column");
  if (el) return parseInt(el.dataset.col, 10);
  // between columns or below them: the column whose span covers x
  for (const c of document.querySelectorAll("#board .column")) {
    const r = c.getBoundingClientRect();
    if (x >= r.left && x <= r.right && y >= r.top - 20) return parseInt(c.dataset.col, 10);
  }
  return null;
}

function overFoundation(x, y) {
  const el = $("#foundation");
  if (!el) return false;
  const r = el.getBoundingClientRect();
  return x >= r.left - 8 && x <= r.right + 8 && y >= r.top - 8 && y <= r.bottom + 8;
}

/** The card a Joker dropped at (x, y) replaces: the card under the pointer, else the card
 * of the column under the pointer that a Joker may replace nearest to it; null off the
 * board's cards. */
function jokerSpot(x, y) {
  const under = document.elementFromPoint(x, y)?.closest("#board .card:not(.slot-empty)");
  if (under) return { col: parseInt(under.dataset.col, 10), index: parseInt(under.dataset.index, 10) };
  const col = columnAt(x, y);
  if (col === null || col === RESERVE) return null;
  let best = null;
  for (const c of document.querySelectorAll(`#board .column[data-col="${col}"] .card.joker-target`)) {
    const r = c.getBoundingClientRect();
    const distance = Math.abs(y - (r.top + 8));
    if (!best || distance < best.distance) best = { col, index: parseInt(c.dataset.index, 10), distance };
  }
  return best;
}

function endDrag(x, y) {
  const d = app.drag;
  const board = app.board;
  if (d.kind === "troupe") {
    const spot = jokerSpot(x, y);
    snapBack(d);
    if (!spot) return;
    const depth = board.cols[spot.col].length - spot.index;
    const move = bestJoker(board, spot.col, depth, board.generateMoves());
    if (move) act("move", move.text);
    else {
      // sent all the same, for the server's reason (the card has nowhere to go, or it is
      // not a card a Joker may replace)
      const onto = board.cols.findIndex((c, j) => j !== spot.col && c.length);
      const dst = onto >= 0 ? onto : (spot.col + 1) % board.cols.length;
      act("move", `*${columnLetter(spot.col)}${depth}${columnLetter(dst)}`);
    }
    return;
  }
  const onFoundation = d.kind === "move" && d.set !== undefined && overFoundation(x, y);
  const dst = onFoundation ? null : columnAt(x, y);
  snapBack(d);
  if (onFoundation) {
    act("move", d.set ? d.set.text : setAttempt(board, d.col));
    return;
  }
  if (dst === null || dst === d.col) return;
  if (d.kind === "joker") {
    act("move", `*${columnLetter(d.col)}${d.count}${columnLetter(dst)}`);
    return;
  }
  const text = d.col === RESERVE ? `z1${columnLetter(dst)}` : `${columnLetter(d.col)}${d.count}${columnLetter(dst)}`;
  // sent even when the page thinks it illegal: the server's reason is shown
  act("move", text);
}

function cancelDrag() {
  snapBack(app.drag);
}

function snapBack(d) {
  app.drag = null;
  d.ghost.classList.add("snap");
  d.ghost.style.left = `${d.origin.left}px`;
  d.ghost.style.top = `${d.origin.top}px`;
  setTimeout(() => d.ghost.remove(), 150);
  for (const c of d.cards) c.classList.remove("lifted", "joker-slot");
  for (const cls of ["target", "drop-over", "joker-target", "in-set"]) document.querySelectorAll(`.${cls}`).forEach((c) => c.classList.remove(cls));
  if (app.deferred) {
    app.deferred = false;
    render();
  }
}
