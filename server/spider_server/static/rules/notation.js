// Cards and moves in the spec's notation (rules.md §5, §6): the distinct cards of a deck and
// the text of their runs, and the moves the page sends.

export const UNKNOWN = 0;
const TOKEN = /\?\?|\*[0-9]+|@|(?:[A-Z]|[0-9]+)[a-z]+/y;
export const STANDARD_RANKS = "A23456789TJQK";

/** Text that is not a card, a move, a variant or a position of the spec's notation. */
export class NotationError extends Error {}
/** A move that is not legal in the position. */
export class IllegalMoveError extends Error {}
/** A move a view cannot apply: it would turn up or deal a card the view does not know. */
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

/** The cards of the standard ranks in `suits`, as [token, rank, suit]. */
export function standardCards(suits, ranks = STANDARD_RANKS) {
  const list = [];
  for (const s of suits) [...ranks].forEach((r, i) => list.push([`${r}${s}`, i + 1, s]));
  return list;
}

// -- moves -----------------------------------------------------------------------------------

export const columnLetter = (i) => String.fromCharCode(97 + i);
export const columnIndex = (ch) => ch.charCodeAt(0) - 97;

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

export const asMove = (move) => (move instanceof Move ? move : Move.parse(move));
