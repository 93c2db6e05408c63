// The rules of the spec (rules.md, alt-decks.md) that the page needs without asking the
// server: positions and views parsed from their text (rules/board.js), the legal moves that
// light a drag's way and make a click's move (rules/board.js, with each deck's own rules in
// rules/<deck>.js), and the seeded deal and moves applied and taken back, for replays
// (rules/deal.js, rules/board.js). A port of engine/spider_engine, checked against the
// spec's vectors and the engine by tests/web/test_rules_js.py. It does not judge, explain
// or score: the server says why a move is refused, sends every score, and makes every view.

import { Board } from "./rules/board.js";
import { Move, columnLetter } from "./rules/notation.js";
import { BASES, findVariant } from "./rules/variants.js";
import { RESERVE } from "./rules/wizard.js";

/** RESERVE: the column index of `z`, Wizard's Tower's reserve with `weave`. */
export { BASES, Board, Move, RESERVE, columnLetter, findVariant };

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
