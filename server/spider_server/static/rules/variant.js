// What every variant shares: the base class of the rules' hooks (as in the engine), the
// Spider family, and the other decks' common base.

import { CardSet, UNKNOWN, standardCards } from "./notation.js";

export const rankKey = (rank) => (rank > 1 ? `r${rank}` : null);

/** The rules of one variant id; get one with findVariant(id). Hooks as in the engine. */
export class Variant {
  constructor(options) {
    this.options = options;
    this.id = [this.base, ...[...options].sort()].join("+");
    this.open = this.tableauFaceUp();
    this.relaxed = this.dealsWhileEmpty || options.has("relaxed");
    this.keep = options.has("keep");
    const n = this.cards.tokens.length;
    this.key = [];
    this.want = [];
    for (let c = 0; c < n; c++) {
      this.key.push(c === UNKNOWN ? null : this.buildKey(c));
      this.want.push(c === UNKNOWN ? [] : this.wants(c));
    }
    const sizes = this.stockDeals.map((d) => d.length);
    this.dealAt = new Map();
    for (let i = 0; i <= sizes.length; i++) this.dealAt.set(sizes.slice(i).reduce((a, b) => a + b, 0), i);
  }

  tableauFaceUp() {
    return this.dealtFaceUp || this.options.has("open");
  }

  buildKey(card) {
    return rankKey(this.cards.rank[card]);
  }

  wants(card) {
    return [`r${this.cards.rank[card] + 1}`];
  }

  follows(upper, lower) {
    const { rank, suits } = this.cards;
    return upper !== UNKNOWN && lower !== UNKNOWN && rank[lower] === rank[upper] - 1 && suits[lower] === suits[upper];
  }

  /** How many cards at the end of `column` (with `up` face-up cards) form its movable run. */
  movable(column, up) {
    if (!up) return 0;
    const n = column.length;
    let k = 1;
    while (k < up && this.follows(column[n - k - 1], column[n - k])) k++;
    return k;
  }

  completed() {
    return null;
  }

  foundationTokens() {
    return new Set();
  }

  setCount() {
    return 0;
  }

  mayDeal(board) {
    return board.stock.length > 0 && (this.relaxed || board.cols.every((c) => c.length));
  }

  initialExtra() {
    return [];
  }

  formatExtra() {
    return [];
  }

  parseExtra() {
    return [];
  }

  extraMoves() {
    return [];
  }

  checkExtra(board, move) {
    return `${move.text}: this variant has no such move`;
  }

  moveRefused() {
    return null;
  }

  settleStep() {
    return null;
  }

  unsettled() {
    return null;
  }
}
Variant.prototype.dealtFaceUp = false;
Variant.prototype.dealsWhileEmpty = false;
Variant.prototype.hasExtraMoves = false;
Variant.prototype.filtersMoves = false;
Variant.prototype.hasSettleStep = false;
Variant.prototype.extraFields = [];
Variant.prototype.family = "spider";

class SpiderFamily extends Variant {
  canonicalDeck() {
    const deck = [];
    for (let k = 0; k < this.copies; k++) for (let c = 1; c <= this.cards.size; c++) deck.push(c);
    return deck;
  }

  completed(column, up) {
    const size = 13;
    if (up < size || this.cards.rank[column[column.length - 1]] !== 1) return null;
    if (this.movable(column, up) < size) return null;
    return [size, this.cards.suits[column[column.length - 1]]];
  }

  foundationTokens() {
    return new Set(this.suitOrder);
  }

  setCount() {
    return (this.copies * this.cards.size) / 13;
  }
}
SpiderFamily.optionsAllowed = ["keep", "open", "relaxed"];
SpiderFamily.prototype.columns = 10;
SpiderFamily.prototype.firstDeal = [6, 6, 6, 6, 5, 5, 5, 5, 5, 5];
SpiderFamily.prototype.stockDeals = Array(5).fill([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

/** A Spider base: its suits, the copies of each card, and its layout when not Spider's. */
export function spiderBase(base, suitOrder, copies, layout = {}) {
  const cls = class extends SpiderFamily {};
  Object.assign(cls.prototype, { base, suitOrder, copies, cards: new CardSet(standardCards(suitOrder)), ...layout });
  return cls;
}

// -- the other decks (alt-decks.md) --------------------------------------------------------------

/** The other decks' common base: dealt face up (but with `blind`), cards dealt when a
 * column is empty. */
export class AltDeck extends Variant {
  tableauFaceUp() {
    return !this.options.has("blind");
  }

  canonicalDeck() {
    return this.deckTokens.map((t) => this.cards.card(t));
  }
}
AltDeck.optionsAllowed = ["blind"];
AltDeck.prototype.dealtFaceUp = true;
AltDeck.prototype.dealsWhileEmpty = true;

/** The columns by the key of their last card, and the empty ones. */
export function columnsByKey(v, board) {
  const byKey = new Map();
  const empties = [];
  board.cols.forEach((col, i) => {
    if (!col.length) {
      empties.push(i);
      return;
    }
    const k = v.key[col[col.length - 1]];
    if (k !== null) {
      if (!byKey.has(k)) byKey.set(k, []);
      byKey.get(k).push(i);
    }
  });
  return { byKey, empties };
}
