// Starfish (alt-decks.md): six suits and the Troupe's Jokers, which replace a card that is
// not free and go back to the Troupe when they reach a column's end.

import { CardSet, Move, NotationError, STANDARD_RANKS, columnLetter } from "./notation.js";
import { AltDeck, columnsByKey, rankKey } from "./variant.js";

const STARFISH_SUITS = "shdcrq";

/** Starfish's rules. */
export class Starfish extends AltDeck {
  constructor(options) {
    super(options);
    this.joker = this.cards.card("@");
  }

  buildKey(card) {
    return rankKey(this.cards.rank[card]);
  }

  wants(card) {
    return this.cards.tokens[card] === "@" ? [] : [`r${this.cards.rank[card] + 1}`];
  }

  follows(upper, lower) {
    if (upper === this.joker || lower === this.joker) return false;
    return super.follows(upper, lower);
  }

  completed(column, up) {
    const size = 13;
    if (up < size || this.cards.rank[column[column.length - 1]] !== 1 || this.movable(column, up) < size) return null;
    return [size, this.cards.suits[column[column.length - 1]]];
  }

  foundationTokens() {
    return new Set(STARFISH_SUITS);
  }

  setCount() {
    return 12;
  }

  initialExtra() {
    return [6];
  }

  formatExtra(extra) {
    return [String(extra[0])];
  }

  parseExtra(fields) {
    const text = fields[0];
    if (!/^[0-9]+$/.test(text) || (text.length > 1 && text[0] === "0")) {
      throw new NotationError(`the Troupe field is a number of Jokers, not '${text}'`);
    }
    return [parseInt(text, 10)];
  }

  settleStep(board) {
    for (let i = 0; i < board.cols.length; i++) {
      const col = board.cols[i];
      if (col.length && col[col.length - 1] === this.joker) {
        col.pop();
        board.extra[0] += 1;
        return i;
      }
    }
    return null;
  }

  unsettled(board) {
    for (let i = 0; i < board.cols.length; i++) {
      const col = board.cols[i];
      if (col.length && col[col.length - 1] === this.joker) {
        return `column ${columnLetter(i)} ends in a Joker (it goes back to the Troupe at once)`;
      }
    }
    return null;
  }

  extraMoves(board) {
    const out = [];
    if (board.extra[0] <= 0) return out;
    const { byKey, empties } = columnsByKey(this, board);
    board.cols.forEach((col, i) => {
      const n = col.length;
      for (let depth = 2; depth <= n - board.down[i]; depth++) {
        const card = col[n - depth];
        if (card === this.joker) continue;
        for (const w of this.want[card]) {
          for (const j of byKey.get(w) || []) if (j !== i) out.push(new Move("joker", i, depth, j));
        }
        for (const j of empties) out.push(new Move("joker", i, depth, j));
      }
    });
    return out;
  }

  checkExtra(board, move) {
    const ncols = board.cols.length;
    for (const c of [move.src, move.dst]) {
      if ((move.kind === "move" || move.kind === "joker") && (c < 0 || c >= ncols)) {
        return `there is no column ${columnLetter(c)} (columns a-${columnLetter(ncols - 1)})`;
      }
    }
    if (move.kind !== "joker") return `${move.text}: this variant has no such move`;
    const { src, count: depth, dst } = move;
    if (board.extra[0] <= 0) return "the Troupe has no Joker left";
    if (src === dst) return "the replaced card goes to another column";
    const col = board.cols[src];
    const up = col.length - board.down[src];
    if (depth < 2) return "a Joker replaces a card above a column's end (depth 2 or more)";
    if (depth > up) return `column ${columnLetter(src)} has ${up} face-up cards, not ${depth}`;
    const card = col[col.length - depth];
    if (card === this.joker) return "a Joker does not replace a Joker";
    const target = board.cols[dst];
    if (target.length && !this.want[card].includes(this.key[target[target.length - 1]])) {
      const t = this.cards.tokens;
      return `${t[card]} does not go onto ${t[target[target.length - 1]]} in column ${columnLetter(dst)}`;
    }
    return null;
  }

  applyExtra(board, move) {
    const col = board.cols[move.src];
    const index = col.length - move.count;
    const card = col[index];
    col[index] = this.joker;
    board.cols[move.dst].push(card);
    board.extra[0] -= 1;
    return [move.src, move.dst];
  }
}
{
  const suitCards = [...STARFISH_SUITS].flatMap((s) => [...STANDARD_RANKS].map((r, i) => [`${r}${s}`, i + 1, s]));
  Object.assign(Starfish.prototype, {
    base: "starfish",
    family: "starfish",
    cards: new CardSet([...suitCards, ["@", 0, ""]]),
    deckTokens: [...suitCards, ...suitCards].map((c) => c[0]),
    columns: 12,
    firstDeal: Array(12).fill(6),
    stockDeals: Array(7).fill(Array.from({ length: 12 }, (_, i) => i)),
    hasExtraMoves: true,
    hasSettleStep: true,
    extraFields: ["troupe"],
  });
}
