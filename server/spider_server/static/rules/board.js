// One game's position: parsed from a position or a view, its legal moves, moves applied
// and taken back (for replays), and the seeded deal.

import { shuffle } from "./deal.js";
import { HiddenCardError, IllegalMoveError, NotationError, UNKNOWN, Move, asMove, columnLetter } from "./notation.js";
import { columnsByKey } from "./variant.js";
import { findVariant } from "./variants.js";

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

  dealsLeft() {
    return this.variant.stockDeals.length - this.variant.dealAt.get(this.stock.length);
  }

  /** How many cards at the end of column i may move together. */
  movable(i) {
    return this.variant.movable(this.cols[i], this.cols[i].length - this.down[i]);
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

  /** Apply a legal move and settle; IllegalMoveError or HiddenCardError (nothing changed)
   * otherwise. */
  push(move) {
    move = asMove(move);
    if (!this.isLegal(move)) throw new IllegalMoveError(`illegal move ${move.text}`);
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
}
