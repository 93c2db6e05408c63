// Wizard's Tower (alt-decks.md): a tarot deck whose trumps leave in order, and with
// `weave` the reserve (column z).

import { CardSet, Move, NotationError, UNKNOWN, columnIndex, columnLetter } from "./notation.js";
import { AltDeck, rankKey } from "./variant.js";

const WIZARD_SUITS = "wcds";
const WIZARD_RANKS = "A23456789TPNQK";
const TRUMPS = 22;
export const RESERVE = columnIndex("z");
const EMPTY = -1;

/** Wizard's Tower's rules. */
export class WizardsTower extends AltDeck {
  constructor(options) {
    const weave = options.has("weave");
    super(options);
    this.weave = weave;
  }

  get hasExtraMoves() {
    return this.options.has("weave");
  }

  get extraFields() {
    return this.options.has("weave") ? ["reserve"] : [];
  }

  isTrump(card) {
    return this.cards.suits[card] === "t";
  }

  buildKey(card) {
    const rank = this.cards.rank[card];
    return this.isTrump(card) ? `t${rank}` : rankKey(rank);
  }

  wants(card) {
    const rank = this.cards.rank[card];
    if (this.isTrump(card)) {
      const out = [];
      for (let h = rank + 1; h < TRUMPS; h++) out.push(`t${h}`);
      return out;
    }
    return [`r${rank + 1}`];
  }

  follows(upper, lower) {
    const { rank, suits } = this.cards;
    if (upper === UNKNOWN || lower === UNKNOWN || rank[lower] !== rank[upper] - 1) return false;
    if (this.isTrump(upper) || this.isTrump(lower)) return this.isTrump(upper) && this.isTrump(lower);
    return suits[lower] === suits[upper];
  }

  completed(column, up) {
    const size = 14;
    const end = column[column.length - 1];
    if (up < size || this.cards.rank[end] !== 1 || this.isTrump(end)) return null;
    if (this.movable(column, up) < size) return null;
    return [size, this.cards.suits[end]];
  }

  nextTrumpColumn(board) {
    const number = board.foundation.filter((t) => t === "t").length;
    if (number >= TRUMPS) return null;
    const trump = this.cards.card(`${number}t`);
    for (let i = 0; i < board.cols.length; i++) {
      const col = board.cols[i];
      if (col.length && col[col.length - 1] === trump && board.down[i] < col.length) return i;
    }
    return null;
  }

  settleStep(board) {
    const i = this.nextTrumpColumn(board);
    if (i !== null) {
      board.cols[i].pop();
      board.foundation.push("t");
    }
    return i;
  }

  unsettled(board) {
    const i = this.nextTrumpColumn(board);
    if (i === null) return null;
    const col = board.cols[i];
    return `column ${columnLetter(i)} ends in ${this.cards.tokens[col[col.length - 1]]}, the next trump of the Tower (it leaves at once)`;
  }

  foundationTokens() {
    return new Set(WIZARD_SUITS + "t");
  }

  setCount() {
    return 4 + TRUMPS;
  }

  initialExtra() {
    return this.weave ? [EMPTY] : [];
  }

  formatExtra(extra) {
    return [extra[0] === EMPTY ? "-" : this.cards.tokens[extra[0]]];
  }

  parseExtra(fields) {
    if (fields[0] === "-") return [EMPTY];
    const cards = this.cards.parse(fields[0], "the reserve");
    if (cards.length !== 1 || cards[0] === UNKNOWN) throw new NotationError(`the reserve holds one known card or '-', not '${fields[0]}'`);
    return cards;
  }

  extraMoves(board) {
    const card = board.extra[0];
    const out = [];
    if (card === EMPTY) {
      board.cols.forEach((col, i) => col.length && out.push(new Move("move", i, 1, RESERVE)));
      return out;
    }
    board.cols.forEach((col, j) => {
      if (!col.length || this.want[card].includes(this.key[col[col.length - 1]])) out.push(new Move("move", RESERVE, 1, j));
    });
    return out;
  }

  checkExtra(board, move) {
    const ncols = board.cols.length;
    if (move.kind !== "move") return `${move.text}: this variant has no such move`;
    const { src, count, dst } = move;
    if (dst === RESERVE && src >= 0 && src < ncols) {
      if (count !== 1) return "the reserve holds one card";
      if (board.extra[0] !== EMPTY) return "the reserve already holds a card";
      if (!board.cols[src].length) return `column ${columnLetter(src)} is empty`;
      return null;
    }
    if (src === RESERVE && dst >= 0 && dst < ncols) {
      const card = board.extra[0];
      if (card === EMPTY) return "the reserve is empty";
      if (count !== 1) return "the reserve holds one card";
      const target = board.cols[dst];
      if (target.length && !this.want[card].includes(this.key[target[target.length - 1]])) {
        const t = this.cards.tokens;
        return `${t[card]} does not go onto ${t[target[target.length - 1]]} in column ${columnLetter(dst)}`;
      }
      return null;
    }
    for (const c of [src, dst]) {
      if (c < 0 || c >= ncols) return `there is no column ${columnLetter(c)} (columns a-${columnLetter(ncols - 1)}, and z for the reserve)`;
    }
    return "a move goes to another column";
  }

  applyExtra(board, move) {
    if (move.dst === RESERVE) {
      board.extra[0] = board.cols[move.src].pop();
      return [move.src];
    }
    board.cols[move.dst].push(board.extra[0]);
    board.extra[0] = EMPTY;
    return [move.dst];
  }
}
WizardsTower.optionsAllowed = ["blind", "weave"];
{
  const suitCards = [...WIZARD_SUITS].flatMap((s) => [...WIZARD_RANKS].map((r, i) => [`${r}${s}`, i + 1, s]));
  const trumps = Array.from({ length: TRUMPS }, (_, n) => [`${n}t`, n, "t"]);
  Object.assign(WizardsTower.prototype, {
    base: "wizard",
    family: "wizard",
    cards: new CardSet([...suitCards, ...trumps]),
    deckTokens: [...suitCards, ...trumps].map((c) => c[0]),
    columns: 13,
    firstDeal: Array(13).fill(6),
    stockDeals: [],
    hasSettleStep: true,
  });
}
