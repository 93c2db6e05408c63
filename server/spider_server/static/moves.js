// Which move the page makes for a click, a drop or the keys, chosen with the rules (rules.js)
// on the player's view: no DOM, no state. The server judges every move.

import { cardFace } from "./cards.js";
import { Move, RESERVE, bestDestination, columnLetter } from "./rules.js";

/** The move a click on card `index` of column `col` makes, or a reason why none. */
export function clickMove(board, col, index) {
  const column = board.cols[col];
  const count = column.length - index;
  const v = board.variant;
  const token = v.cards.tokens[column[index]];
  const name = cardFace(v.family, token).name;
  if (col === RESERVE) {
    const card = board.extra[0];
    const moves = board.generateMoves().filter((m) => m.src === RESERVE);
    const suited = moves.find((m) => board.cols[m.dst].length && v.follows(board.cols[m.dst].at(-1), card));
    const any = moves.find((m) => board.cols[m.dst].length) || moves[0];
    return suited || any ? { move: (suited || any).text } : { reason: "the reserve's card has nowhere to go" };
  }
  const moves = board.generateMoves();
  if (count === 1 && v.family === "sparrow") {
    const set = moves.find((m) => m.kind === "set" && m.columns.includes(col));
    if (set) return { move: set.text };
  }
  if (count <= board.movable(col)) {
    const dst = bestDestination(board, col, count);
    if (dst !== null) return { move: new Move("move", col, count, dst).text };
    return { reason: `${name} has nowhere to go` };
  }
  const joker = bestJoker(board, col, count, moves);
  if (joker) return { move: joker.text };
  return { reason: `${name} is not free: only the run at the end of a column moves` };
}

/** Starfish: the Joker moves that replace the card `depth` cards from column `col`'s end. */
export function jokerMoves(board, col, depth, moves = board.generateMoves()) {
  return moves.filter((m) => m.kind === "joker" && m.src === col && m.count === depth);
}

/** The Joker move a click (or a Joker dropped from the Troupe) makes for that card: the
 * replaced card goes where a click would send it (one rank higher in its own suit first,
 * then any column that takes it, else an empty column); null when it may go nowhere. */
export function bestJoker(board, col, depth, moves) {
  const jokers = jokerMoves(board, col, depth, moves);
  if (!jokers.length) return null;
  const v = board.variant;
  const card = board.cols[col].at(-depth);
  return jokers.find((m) => board.cols[m.dst].length && v.follows(board.cols[m.dst].at(-1), card)) || jokers.find((m) => board.cols[m.dst].length) || jokers[0];
}

/** Sparrow: the set a drag of column `col`'s end tile to the foundation takes off (of the
 * legal sets with that column, the first in the notation's order), or null. */
export function setWith(board, col) {
  const sets = board.generateMoves().filter((m) => m.kind === "set" && m.columns.includes(col));
  sets.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  return sets[0] || null;
}

/** Sparrow: the set move a drop of column `col`'s end tile on the foundation sends when no
 * set is legal, for the server to say why: that column and the next ones whose end tiles are
 * of the same kind (Winds, or Flowers and Seasons), then the next columns, four in all. */
export function setAttempt(board, col) {
  const v = board.variant;
  const kind = v.blocker(board.cols[col].at(-1));
  const others = board.cols.map((_, j) => j).filter((j) => j !== col);
  const alike = others.filter((j) => board.cols[j].length && v.blocker(board.cols[j].at(-1)) === kind);
  const rest = others.filter((j) => !alike.includes(j));
  const columns = [col, ...alike, ...rest].slice(0, 4).sort((a, b) => a - b);
  return new Move("set", -1, 0, -1, columns).text;
}

// keyboard: column letters pick a source and a destination, digits a count

/** How many cards the keyboard's pick moves. */
export function selectedCount(board, sel) {
  if (sel.src === RESERVE) return 1;
  if (sel.typed) return parseInt(sel.typed, 10);
  return board.movable(sel.src);
}

/** The column a key names (`z`: the Tower's reserve, with `weave`), or null. */
export function keyColumn(key, board) {
  if (key.length !== 1) return null;
  if (key === "z" && board.variant.base === "wizard" && board.variant.options.has("weave")) return RESERVE;
  const i = key.charCodeAt(0) - 97;
  return i >= 0 && i < board.cols.length ? i : null;
}

/** How many cards a typed move without a count takes: the most that go to `dst`. */
export function autoCount(board, src, dst) {
  if (src === RESERVE) return 1;
  for (let k = board.movable(src); k >= 1; k--) if (board.isLegal(new Move("move", src, k, dst))) return k;
  return Math.max(1, board.movable(src));
}

/** The move Enter makes for the keyboard's pick: a count typed as a click on that card;
 * else the longest run that goes onto a card, else into an empty column. */
export function bestFromColumn(board, src, typed) {
  if (src === RESERVE) return clickMove(board, RESERVE, 0);
  const column = board.cols[src];
  if (!column.length) return { reason: `column ${columnLetter(src)} is empty` };
  if (typed) return clickMove(board, src, column.length - parseInt(typed, 10));
  let empty = null;
  for (let k = board.movable(src); k >= 1; k--) {
    const dst = bestDestination(board, src, k);
    if (dst === null) continue;
    if (board.cols[dst].length) return { move: new Move("move", src, k, dst).text };
    if (empty === null) empty = new Move("move", src, k, dst).text;
  }
  return empty ? { move: empty } : clickMove(board, src, column.length - 1);
}
