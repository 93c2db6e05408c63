// Sparrow (alt-decks.md): mahjong tiles, whose Winds and Flowers leave as sets of four.

import { CardSet, Move, UNKNOWN, columnLetter } from "./notation.js";
import { AltDeck, rankKey } from "./variant.js";

const SPARROW_SUITS = "bcm";
const WINDS = ["Ew", "Sw", "Ww", "Nw"];
const SET_NAMES = { w: "Winds", f: "Flowers and Seasons" };

/** Sparrow's rules. */
export class Sparrow extends AltDeck {
  constructor(options) {
    super(options);
    this.winds = WINDS.map((w) => this.cards.card(w));
  }

  blocker(card) {
    const s = this.cards.suits[card];
    return s === "w" || s === "f" ? s : "";
  }

  buildKey(card) {
    return this.blocker(card) || rankKey(this.cards.rank[card]);
  }

  wants(card) {
    const b = this.blocker(card);
    if (b) return [b];
    const rank = this.cards.rank[card];
    return rank < 10 ? [`r${rank + 1}`] : [];
  }

  follows(upper, lower) {
    if (upper === UNKNOWN || lower === UNKNOWN || this.blocker(upper) || this.blocker(lower)) return false;
    const { rank, suits } = this.cards;
    return rank[lower] === rank[upper] - 1 && suits[lower] === suits[upper];
  }

  moveRefused(board, src, count, dst) {
    const col = board.cols[src];
    const b = this.blocker(col[col.length - count]);
    if (!b) return null;
    const target = board.cols[dst];
    let together = 0;
    for (let i = target.length - 1; i >= board.down[dst]; i--) {
      if (this.blocker(target[i]) !== b) break;
      together++;
    }
    if (together >= 3) return `a move may not leave 4 ${SET_NAMES[b]} together at the end of column ${columnLetter(dst)}`;
    return null;
  }

  completed(column, up) {
    const size = 10;
    const end = column[column.length - 1];
    if (up < size || this.cards.rank[end] !== 1 || this.blocker(end)) return null;
    if (this.movable(column, up) < size) return null;
    return [size, this.cards.suits[end]];
  }

  extraMoves(board) {
    const windColumns = new Map(this.winds.map((w) => [w, []]));
    const flowers = [];
    board.cols.forEach((col, i) => {
      if (!col.length) return;
      const end = col[col.length - 1];
      const b = this.blocker(end);
      if (b === "w") windColumns.get(end).push(i);
      else if (b === "f") flowers.push(i);
    });
    const out = [];
    const lists = [...windColumns.values()];
    if (lists.every((l) => l.length)) {
      let combos = [[]];
      for (const l of lists) combos = combos.flatMap((c) => l.map((i) => [...c, i]));
      for (const c of combos) out.push(new Move("set", -1, 0, -1, c.sort((a, b) => a - b)));
    }
    const choose = (start, chosen) => {
      if (chosen.length === 4) {
        out.push(new Move("set", -1, 0, -1, chosen));
        return;
      }
      for (let i = start; i < flowers.length; i++) choose(i + 1, [...chosen, flowers[i]]);
    };
    choose(0, []);
    return out;
  }

  checkExtra(board, move) {
    const ncols = board.cols.length;
    if (move.kind !== "set") {
      if (move.kind === "move") {
        for (const c of [move.src, move.dst]) {
          if (c < 0 || c >= ncols) return `there is no column ${columnLetter(c)} (columns a-${columnLetter(ncols - 1)})`;
        }
      }
      return `${move.text}: this variant has no such move`;
    }
    const cols = move.columns;
    if (cols.length !== 4) return "a set is 4 cards from 4 columns";
    const sorted = [...new Set(cols)].sort((a, b) => a - b);
    if (sorted.join() !== cols.join()) return "a set's columns are written once each, in alphabetical order";
    for (const c of cols) {
      if (c < 0 || c >= ncols) return `there is no column ${columnLetter(c)} (columns a-${columnLetter(ncols - 1)})`;
      if (!board.cols[c].length) return `column ${columnLetter(c)} is empty`;
    }
    const ends = cols.map((c) => board.cols[c][board.cols[c].length - 1]);
    if ([...ends].sort((a, b) => a - b).join() === [...this.winds].sort((a, b) => a - b).join()) return null;
    if (ends.every((e) => this.blocker(e) === "f")) return null;
    return "a set is the four different Winds, or four Flowers and Seasons, at the ends of four columns";
  }

  applyExtra(board, move) {
    const first = board.cols[move.columns[0]];
    const token = this.blocker(first[first.length - 1]);
    for (const c of move.columns) board.cols[c].pop();
    board.foundation.push(token);
    return move.columns;
  }

  foundationTokens() {
    return new Set(SPARROW_SUITS + "wf");
  }

  setCount() {
    return 18;
  }
}
{
  const suitCards = [...SPARROW_SUITS].flatMap((s) =>
    Array.from({ length: 10 }, (_, i) => [i + 1 < 10 ? `${i + 1}${s}` : `D${s}`, i + 1, s]),
  );
  const winds = WINDS.map((w) => [w, 0, "w"]);
  const flowers = Array.from({ length: 8 }, (_, i) => [`${i + 1}f`, 0, "f"]);
  const four = [];
  for (let k = 0; k < 4; k++) four.push(...suitCards, ...winds);
  Object.assign(Sparrow.prototype, {
    base: "sparrow",
    family: "sparrow",
    cards: new CardSet([...suitCards, ...winds, ...flowers]),
    deckTokens: [...four, ...flowers].map((c) => c[0]),
    columns: 12,
    firstDeal: Array(12).fill(6),
    stockDeals: Array(6).fill(Array.from({ length: 12 }, (_, i) => i)),
    hasExtraMoves: true,
    filtersMoves: true,
  });
}
