// The rules of shared spec rules.md and alt-decks.md in the browser: cards, variants, the
// seeded deal (§4), moves (§5), positions and views (§6), legal moves, push/pop and scores.
// A port of engine/spider_engine, checked against the spec's vectors and against the
// engine itself by tests/web/test_rules_js.py. The page uses it for hints (which moves a
// click or a drop may make) and for replays; the server remains the judge of every move.

import { sha256 } from "./sha256.js";

export const UNKNOWN = 0;
const TOKEN = /\?\?|\*[0-9]+|@|(?:[A-Z]|[0-9]+)[a-z]+/y;
const STANDARD_RANKS = "A23456789TJQK";

export class NotationError extends Error {}
export class IllegalMoveError extends Error {}
export class HiddenCardError extends Error {}

// -- cards -----------------------------------------------------------------------------------

/** The distinct cards of a variant: card c is tokens[c], rank[c], suits[c]; 0 is unknown. */
export class CardSet {
  constructor(list) {
    this.tokens = ["??", ...list.map((c) => c[0])];
    this.rank = [0, ...list.map((c) => c[1])];
    this.suits = ["", ...list.map((c) => c[2])];
    this.index = new Map(this.tokens.map((t, c) => [t, c]));
    this.index.delete("??");
  }

  get size() {
    return this.tokens.length - 1;
  }

  card(token) {
    const c = this.index.get(token);
    if (c === undefined) throw new NotationError(`no card '${token}' in this variant's deck`);
    return c;
  }

  /** Cards of a run of tokens (`??` and `*N` give unknown cards). */
  parse(text, what = "cards") {
    const cards = [];
    TOKEN.lastIndex = 0;
    let pos = 0;
    while (pos < text.length) {
      TOKEN.lastIndex = pos;
      const m = TOKEN.exec(text);
      if (!m) break;
      const token = m[0];
      pos = TOKEN.lastIndex;
      if (token === "??") cards.push(UNKNOWN);
      else if (token[0] === "*") {
        const count = parseInt(token.slice(1), 10);
        if (count < 1) throw new NotationError(`empty stretch of unknown cards '${token}' in ${what}`);
        for (let i = 0; i < count; i++) cards.push(UNKNOWN);
      } else cards.push(this.card(token));
    }
    if (pos !== text.length) throw new NotationError(`malformed ${what} '${text}' at character ${pos + 1}`);
    return cards;
  }

  /** Text of cards, each maximal stretch of unknown ones as `*N`. */
  format(cards) {
    let out = "";
    let unknown = 0;
    for (const c of cards) {
      if (c === UNKNOWN) {
        unknown++;
        continue;
      }
      if (unknown) {
        out += `*${unknown}`;
        unknown = 0;
      }
      out += this.tokens[c];
    }
    if (unknown) out += `*${unknown}`;
    return out;
  }
}

function standardCards(suits, ranks = STANDARD_RANKS) {
  const list = [];
  for (const s of suits) [...ranks].forEach((r, i) => list.push([`${r}${s}`, i + 1, s]));
  return list;
}

// -- moves -----------------------------------------------------------------------------------

export const columnLetter = (i) => String.fromCharCode(97 + i);
const columnIndex = (ch) => ch.charCodeAt(0) - 97;

/** A move: kind "move" (src, count, dst), "deal", "set" (columns) or "joker" (src, depth as
 * count, dst); `text` is its notation. */
export class Move {
  constructor(kind, src = -1, count = 0, dst = -1, columns = []) {
    this.kind = kind;
    this.src = src;
    this.count = count;
    this.dst = dst;
    this.columns = columns;
    if (kind === "deal") this.text = "+";
    else if (kind === "move") this.text = `${columnLetter(src)}${count}${columnLetter(dst)}`;
    else if (kind === "set") this.text = "x" + columns.map(columnLetter).join("");
    else this.text = `*${columnLetter(src)}${count}${columnLetter(dst)}`;
  }

  static parse(text) {
    if (typeof text !== "string") throw new NotationError("a move is text");
    if (text === "+") return new Move("deal");
    let m = /^([a-z])([1-9][0-9]*)([a-z])$/.exec(text);
    if (m) return new Move("move", columnIndex(m[1]), parseInt(m[2], 10), columnIndex(m[3]));
    m = /^x([a-z]{2,})$/.exec(text);
    if (m) return new Move("set", -1, 0, -1, [...m[1]].map(columnIndex));
    m = /^\*([a-z])([1-9][0-9]*)([a-z])$/.exec(text);
    if (m) return new Move("joker", columnIndex(m[1]), parseInt(m[2], 10), columnIndex(m[3]));
    throw new NotationError(`malformed move '${text.slice(0, 20)}': expected '+' or <from><count><to> such as 'd1j'`);
  }
}

const asMove = (move) => (move instanceof Move ? move : Move.parse(move));

// -- variants ----------------------------------------------------------------------------------

const rankKey = (rank) => (rank > 1 ? `r${rank}` : null);

/** The rules of one variant id; get one with findVariant(id). Hooks as in the engine. */
class Variant {
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

  isWon(board) {
    return board.stock.length === 0 && board.cols.every((c) => !c.length);
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

  completeRunsAtEnds(board) {
    let count = 0;
    board.cols.forEach((col, i) => {
      if (col.length && this.completed(col, col.length - board.down[i])) count++;
    });
    return count;
  }

  isWon(board) {
    if (!this.keep) return super.isWon(board);
    if (board.stock.length) return false;
    return board.cols.every(
      (col, i) => !col.length || (col.length === 13 && !board.down[i] && this.completed(col, 13)),
    );
  }
}
SpiderFamily.optionsAllowed = ["keep", "open", "relaxed"];
SpiderFamily.prototype.columns = 10;
SpiderFamily.prototype.firstDeal = [6, 6, 6, 6, 5, 5, 5, 5, 5, 5];
SpiderFamily.prototype.stockDeals = Array(5).fill([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

function spiderBase(base, suitOrder, copies, layout = {}) {
  const cls = class extends SpiderFamily {};
  Object.assign(cls.prototype, { base, suitOrder, copies, cards: new CardSet(standardCards(suitOrder)), ...layout });
  return cls;
}

// -- the other decks (alt-decks.md) --------------------------------------------------------------

class AltDeck extends Variant {
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

class Myrmex extends AltDeck {
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

const WIZARD_SUITS = "wcds";
const WIZARD_RANKS = "A23456789TPNQK";
const TRUMPS = 22;
const RESERVE = columnIndex("z");
const EMPTY = -1;

class WizardsTower extends AltDeck {
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

  isWon(board) {
    return board.cols.every((c) => !c.length) && !(this.weave && board.extra[0] !== EMPTY);
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

const SPARROW_SUITS = "bcm";
const WINDS = ["Ew", "Sw", "Ww", "Nw"];
const SET_NAMES = { w: "Winds", f: "Flowers and Seasons" };

class Sparrow extends AltDeck {
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

const STARFISH_SUITS = "shdcrq";

class Starfish extends AltDeck {
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

const REGISTRY = {
  spider1: spiderBase("spider1", "s", 8),
  spider2: spiderBase("spider2", "sh", 4),
  spider4: spiderBase("spider4", "shdc", 2),
  spiderette: spiderBase("spiderette", "shdc", 1, {
    columns: 7,
    firstDeal: [1, 2, 3, 4, 5, 6, 7],
    stockDeals: [...Array(3).fill([0, 1, 2, 3, 4, 5, 6]), [0, 1, 2]],
  }),
  myrmex: Myrmex,
  wizard: WizardsTower,
  sparrow: Sparrow,
  starfish: Starfish,
};

/** Every variant base with the options it allows. */
export const BASES = Object.fromEntries(Object.entries(REGISTRY).map(([b, cls]) => [b, cls.optionsAllowed]));

const cache = new Map();

/** The variant of an id such as `spider4+open+relaxed`; NotationError when unknown. */
export function findVariant(id) {
  let v = cache.get(id);
  if (v) return v;
  if (typeof id !== "string" || !id) throw new NotationError("a variant id is a non-empty text");
  const [base, ...options] = id.split("+");
  const cls = REGISTRY[base];
  if (!cls) throw new NotationError(`unknown variant '${base}'`);
  for (const o of options) {
    if (!cls.optionsAllowed.includes(o)) throw new NotationError(`option '${o}' is not an option of ${base}`);
  }
  if (options.join("+") !== [...new Set(options)].sort().join("+")) {
    throw new NotationError(`malformed variant id '${id}': options go once each, in alphabetical order`);
  }
  v = new cls(new Set(options));
  cache.set(id, v);
  return v;
}

function columnsByKey(v, board) {
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

// -- the seeded deal (rules.md §4) --------------------------------------------------------------

const encoder = new TextEncoder();
const PREFIX = encoder.encode("spider-race/deal/v1\0");
const TWO64 = 1n << 64n;

function* randomWords(seed) {
  const seedBytes = encoder.encode(String(seed));
  const head = new Uint8Array(PREFIX.length + seedBytes.length + 1 + 8);
  head.set(PREFIX);
  head.set(seedBytes, PREFIX.length);
  const kAt = PREFIX.length + seedBytes.length + 1;
  const view = new DataView(head.buffer);
  for (let k = 0; ; k++) {
    view.setBigUint64(kAt, BigInt(k));
    const digest = sha256(head);
    yield new DataView(digest.buffer).getBigUint64(0);
  }
}

/** Fisher–Yates with uniform(n) by rejection, exactly as §4 says. */
export function shuffle(deck, seed) {
  const cards = [...deck];
  const words = randomWords(seed);
  for (let i = cards.length - 1; i > 0; i--) {
    const n = BigInt(i + 1);
    const limit = TWO64 - (TWO64 % n);
    let w;
    do w = words.next().value;
    while (w >= limit);
    const j = Number(w % n);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}

// -- the board ---------------------------------------------------------------------------------

/** One game: `cols[i]` column i from the deepest card, `down[i]` its face-down count, `stock`
 * the cards still to deal in order, `foundation` the sets gone, `extra` the variant's state. */
export class Board {
  constructor(variant, cols, down, stock, foundation = [], extra = null) {
    this.variant = variant;
    this.cols = cols;
    this.down = down;
    this.stock = stock;
    this.foundation = foundation;
    this.extra = extra === null ? variant.initialExtra() : extra;
    this.stack = [];
  }

  /** The seeded deal of `seed` (text), settled. */
  static deal(variantId, seed) {
    const v = typeof variantId === "string" ? findVariant(variantId) : variantId;
    const cards = shuffle(v.canonicalDeck(), String(seed));
    const cols = v.firstDeal.map(() => []);
    let pos = 0;
    const rows = Math.max(0, ...v.firstDeal);
    for (let row = 0; row < rows; row++) {
      v.firstDeal.forEach((wanted, c) => {
        if (row < wanted) cols[c].push(cards[pos++]);
      });
    }
    const down = cols.map((c) => (v.open ? 0 : Math.max(c.length - 1, 0)));
    const board = new Board(v, cols, down, cards.slice(pos));
    cols.forEach((_, i) => board.settle(i));
    if (v.hasSettleStep) board.settleMore();
    return board;
  }

  /** A position (full or a view) from the spec's notation; NotationError when malformed,
   * not fitting its variant or not settled. */
  static fromText(text) {
    if (typeof text !== "string") throw new NotationError("a position is text");
    const fields = text.split(" ");
    const v = findVariant(fields[0]);
    const names = ["variant", "tableau", "stock", "foundation", ...v.extraFields];
    if (fields.length !== names.length) {
      throw new NotationError(`a position of ${v.id} has ${names.length} fields separated by single spaces; got ${fields.length}`);
    }
    const columnTexts = fields[1].split("/");
    if (columnTexts.length !== v.columns) throw new NotationError(`${v.id} has ${v.columns} columns; the tableau has ${columnTexts.length}`);
    const cols = [];
    const down = [];
    columnTexts.forEach((t, i) => {
      const name = `column ${columnLetter(i)}`;
      const parts = t.split("|");
      if (parts.length !== 2) throw new NotationError(`${name} '${t}' needs exactly one '|'`);
      const hidden = v.cards.parse(parts[0], name);
      const shown = v.cards.parse(parts[1], name);
      if (shown.includes(UNKNOWN)) throw new NotationError(`${name}: a face-up card must be known`);
      if (hidden.length && v.open) throw new NotationError(`${name}: ${v.id} deals every tableau card face up`);
      cols.push([...hidden, ...shown]);
      down.push(hidden.length);
    });
    const stock = fields[2] === "-" ? [] : v.cards.parse(fields[2], "the stock");
    if (fields[2] !== "-" && !stock.length) throw new NotationError("an empty stock is written '-'");
    if (!v.dealAt.has(stock.length)) throw new NotationError(`${v.id}'s stock may not hold ${stock.length} cards`);
    const foundation = [];
    if (fields[3] !== "-") {
      const allowed = v.foundationTokens();
      for (const t of fields[3]) {
        if (!allowed.has(t)) throw new NotationError(`'${t}' is not a foundation token of ${v.id}`);
        foundation.push(t);
      }
    }
    const extra = v.extraFields.length ? v.parseExtra(fields.slice(4)) : null;
    const board = new Board(v, cols, down, stock, foundation, extra);
    board.cols.forEach((col, i) => {
      if (col.length && board.down[i] === col.length) throw new NotationError(`column ${columnLetter(i)} ends in a face-down card`);
      if (col.length && !v.keep && v.completed(col, col.length - board.down[i])) {
        throw new NotationError(`column ${columnLetter(i)} ends in a complete run`);
      }
    });
    const reason = v.unsettled(board);
    if (reason) throw new NotationError(reason);
    return board;
  }

  copy() {
    return new Board(this.variant, this.cols.map((c) => [...c]), [...this.down], [...this.stock], [...this.foundation], [...this.extra]);
  }

  text() {
    const v = this.variant;
    const cols = this.cols.map((col, i) => v.cards.format(col.slice(0, this.down[i])) + "|" + v.cards.format(col.slice(this.down[i])));
    let text = `${v.id} ${cols.join("/")} ${v.cards.format(this.stock) || "-"} ${this.foundation.join("") || "-"}`;
    if (v.extraFields.length) text += " " + v.formatExtra(this.extra).join(" ");
    return text;
  }

  /** The player's view: every face-down and stock card unknown. */
  view() {
    const board = this.copy();
    board.cols.forEach((col, i) => col.fill(UNKNOWN, 0, board.down[i]));
    board.stock.fill(UNKNOWN);
    return board;
  }

  viewText() {
    return this.view().text();
  }

  stockLeft() {
    return this.stock.length;
  }

  dealsLeft() {
    return this.variant.stockDeals.length - this.variant.dealAt.get(this.stock.length);
  }

  faceUp(i) {
    return this.cols[i].slice(this.down[i]);
  }

  /** How many cards at the end of column i may move together. */
  movable(i) {
    return this.variant.movable(this.cols[i], this.cols[i].length - this.down[i]);
  }

  isWon() {
    return this.variant.isWon(this);
  }

  // -- moves ---------------------------------------------------------------------------------

  /** Every legal move (Move objects, unordered). */
  generateMoves() {
    const v = this.variant;
    const out = [];
    const { byKey, empties } = columnsByKey(v, this);
    this.cols.forEach((col, i) => {
      const n = col.length;
      if (!n) return;
      const run = v.movable(col, n - this.down[i]);
      for (let k = 1; k <= run; k++) {
        const card = col[n - k];
        for (const w of v.want[card]) {
          for (const j of byKey.get(w) || []) {
            if (j !== i && (!v.filtersMoves || v.moveRefused(this, i, k, j) === null)) out.push(new Move("move", i, k, j));
          }
        }
        if (k < n) {
          for (const j of empties) {
            if (!v.filtersMoves || v.moveRefused(this, i, k, j) === null) out.push(new Move("move", i, k, j));
          }
        }
      }
    });
    if (this.stock.length && v.mayDeal(this)) out.push(new Move("deal"));
    if (v.hasExtraMoves) out.push(...v.extraMoves(this));
    return out;
  }

  /** The legal moves' texts, sorted by code point as the spec prints them. */
  legalMoves() {
    return this.generateMoves()
      .map((m) => m.text)
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  isLegal(move) {
    move = asMove(move);
    const v = this.variant;
    if (move.kind === "deal") return this.stock.length > 0 && v.mayDeal(this);
    if (move.kind !== "move") return v.hasExtraMoves && v.checkExtra(this, move) === null;
    const { src, count, dst } = move;
    const ncols = this.cols.length;
    if (!(src >= 0 && src < ncols && dst >= 0 && dst < ncols)) return v.hasExtraMoves && v.checkExtra(this, move) === null;
    if (src === dst) return false;
    const col = this.cols[src];
    const n = col.length;
    if (count < 1 || count > v.movable(col, n - this.down[src])) return false;
    const target = this.cols[dst];
    const legal = target.length ? v.want[col[n - count]].includes(v.key[target[target.length - 1]]) : count < n;
    if (legal && v.filtersMoves) return v.moveRefused(this, src, count, dst) === null;
    return legal;
  }

  /** Why `move` is not legal here, in one line (the engine's words). */
  explainIllegal(move) {
    move = asMove(move);
    const v = this.variant;
    const t = v.cards.tokens;
    if (move.kind === "deal") {
      if (!this.stock.length) return "the stock is empty";
      return "the stock may not deal while a column is empty";
    }
    const { src, count, dst } = move;
    const ncols = this.cols.length;
    const inside = (c) => c >= 0 && c < ncols;
    if (v.hasExtraMoves && (move.kind !== "move" || !inside(src) || !inside(dst))) {
      return v.checkExtra(this, move) || `${move.text} is legal`;
    }
    if (move.kind !== "move") return `${move.text}: this variant has no such move`;
    for (const c of [src, dst]) {
      if (!inside(c)) return `there is no column ${columnLetter(c)} (columns a-${columnLetter(ncols - 1)})`;
    }
    if (src === dst) return "a move goes to another column";
    const col = this.cols[src];
    const run = v.movable(col, col.length - this.down[src]);
    if (!col.length) return `column ${columnLetter(src)} is empty`;
    if (count > run) return `column ${columnLetter(src)} has a movable run of ${run}, not ${count}`;
    if (count < 1) return "a move takes at least one card";
    const target = this.cols[dst];
    if (!target.length) {
      if (count >= col.length) return `${move.text} would move all of column ${columnLetter(src)} into an empty column`;
    } else if (!v.want[col[col.length - count]].includes(v.key[target[target.length - 1]])) {
      return `${t[col[col.length - count]]} does not go onto ${t[target[target.length - 1]]} in column ${columnLetter(dst)}`;
    }
    if (v.filtersMoves) {
      const reason = v.moveRefused(this, src, count, dst);
      if (reason !== null) return reason;
    }
    return `${move.text} is legal`;
  }

  /** Apply a legal move and settle; IllegalMoveError or HiddenCardError (nothing changed)
   * otherwise. */
  push(move) {
    move = asMove(move);
    if (!this.isLegal(move)) throw new IllegalMoveError(`illegal move ${move.text}: ${this.explainIllegal(move)}`);
    const saved = this.copy();
    const v = this.variant;
    try {
      if (move.kind === "deal") {
        const targets = v.stockDeals[v.dealAt.get(this.stock.length)];
        const cards = this.stock.splice(0, targets.length);
        if (cards.includes(UNKNOWN)) throw new HiddenCardError("the view does not know the stock's cards: only the full position can deal");
        targets.forEach((j, k) => this.cols[j].push(cards[k]));
        for (const j of targets) this.settle(j);
      } else if (move.kind === "move" && move.src < this.cols.length && move.dst < this.cols.length) {
        const moved = this.cols[move.src].splice(this.cols[move.src].length - move.count);
        this.cols[move.dst].push(...moved);
        this.settle(move.src);
        this.settle(move.dst);
      } else {
        for (const i of v.applyExtra(this, move)) this.settle(i);
      }
      if (v.hasSettleStep) this.settleMore();
    } catch (e) {
      Object.assign(this, { cols: saved.cols, down: saved.down, stock: saved.stock, foundation: saved.foundation, extra: saved.extra });
      throw e;
    }
    this.stack.push([move, saved]);
  }

  /** Take back the last move with all it caused; returns it. */
  pop() {
    const [move, saved] = this.stack.pop();
    Object.assign(this, { cols: saved.cols, down: saved.down, stock: saved.stock, foundation: saved.foundation, extra: saved.extra });
    return move;
  }

  settle(i) {
    const v = this.variant;
    const col = this.cols[i];
    while (col.length) {
      const n = col.length;
      if (this.down[i] === n) {
        if (col[n - 1] === UNKNOWN) throw new HiddenCardError(`the view does not know the card that turns up in column ${columnLetter(i)}`);
        this.down[i] -= 1;
        continue;
      }
      if (v.keep) return;
      const done = v.completed(col, n - this.down[i]);
      if (!done) return;
      col.splice(n - done[0]);
      this.foundation.push(done[1]);
    }
  }

  settleMore() {
    for (;;) {
      const i = this.variant.settleStep(this);
      if (i === null) return;
      this.settle(i);
    }
  }

  // -- scores ----------------------------------------------------------------------------------

  classicScore(actions) {
    let sets = this.foundation.length;
    if (this.variant.keep && this.variant.completeRunsAtEnds) sets += this.variant.completeRunsAtEnds(this);
    return 500 - actions + 100 * sets;
  }

  suitedScore() {
    let score = 12 * this.foundation.length;
    this.cols.forEach((col, i) => {
      for (let k = this.down[i] + 1; k < col.length; k++) if (this.variant.follows(col[k - 1], col[k])) score++;
    });
    return score;
  }
}

// -- helpers for the page ------------------------------------------------------------------------

/** The column a click sends `count` cards of column `src` to: a column ending one rank
 * higher in the moving card's own suit first, then any legal column, else the first empty
 * one; null when the cards may go nowhere. */
export function bestDestination(board, src, count) {
  const col = board.cols[src];
  if (!col.length || count < 1) return null;
  const card = col[col.length - count];
  const v = board.variant;
  const legal = [];
  for (let j = 0; j < board.cols.length; j++) {
    if (j !== src && board.isLegal(new Move("move", src, count, j))) legal.push(j);
  }
  const onto = (j) => board.cols[j].length > 0;
  const suited = legal.find((j) => onto(j) && v.follows(board.cols[j][board.cols[j].length - 1], card));
  if (suited !== undefined) return suited;
  const any = legal.find(onto);
  if (any !== undefined) return any;
  const empty = legal.find((j) => !onto(j));
  return empty === undefined ? null : empty;
}
