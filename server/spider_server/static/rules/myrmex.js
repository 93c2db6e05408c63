// Myrmex (alt-decks.md): the Decktet, whose cards have one or two suits.

import { CardSet } from "./notation.js";
import { AltDeck } from "./variant.js";

const MYRMEX_SUITS = "mswlyk";
const MYRMEX_NUMERALS = [
  [2, ["mk", "sy", "wl"]],
  [3, ["mw", "sk", "ly"]],
  [4, ["ms", "wl", "yk"]],
  [5, ["ml", "sw", "yk"]],
  [6, ["mw", "sy", "lk"]],
  [7, ["ml", "sk", "wy"]],
  [8, ["ms", "wl", "yk"]],
  [9, ["ms", "wy", "lk"]],
];

/** Myrmex's rules. */
export class Myrmex extends AltDeck {
  constructor(options) {
    super(options);
    this.mask = this.cards.suits.map((suits) => [...suits].reduce((m, s) => m | (1 << MYRMEX_SUITS.indexOf(s)), 0));
  }

  follows(upper, lower) {
    const { rank } = this.cards;
    return rank[lower] === rank[upper] - 1 && (this.mask[upper] & this.mask[lower]) !== 0;
  }

  movable(column, up) {
    if (!up) return 0;
    const { rank } = this.cards;
    const n = column.length;
    let lower = column[n - 1];
    let common = this.mask[lower];
    let k = 1;
    while (k < up) {
      const upper = column[n - k - 1];
      if (rank[upper] !== rank[lower] + 1) break;
      common &= this.mask[upper];
      if (!common) break;
      lower = upper;
      k++;
    }
    return k;
  }

  completed(column, up) {
    const size = 10;
    if (up < size || this.cards.rank[column[column.length - 1]] !== 1 || this.movable(column, up) < size) return null;
    return [size, this.cards.suits[column[column.length - size]]];
  }

  foundationTokens() {
    return new Set(MYRMEX_SUITS);
  }

  setCount() {
    return 6;
  }
}
{
  const aces = [...MYRMEX_SUITS].map((s) => [`A${s}`, 1, s]);
  const numerals = MYRMEX_NUMERALS.flatMap(([rank, pairs]) => pairs.map((p) => [`${rank}${p}`, rank, p]));
  const crowns = [...MYRMEX_SUITS].map((s) => [`C${s}`, 10, s]);
  Object.assign(Myrmex.prototype, {
    base: "myrmex",
    family: "myrmex",
    cards: new CardSet([...aces, ...numerals, ...crowns]),
    deckTokens: [...aces, ...numerals, ...crowns, ...numerals].map((c) => c[0]),
    columns: 8,
    firstDeal: Array(8).fill(4),
    stockDeals: [...Array(3).fill([0, 1, 2, 3, 4, 5, 6, 7]), [0, 1, 2, 3]],
  });
}
