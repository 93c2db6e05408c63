// The player's actions: a move, a deal, an undo or a resignation sent (one at a time, kept by
// net.js until acked), a hint asked for, and what a click on a card does.

import { cardFace } from "./cards.js";
import { columnLetter, Move, RESERVE } from "./rules.js";
import { clickMove } from "./moves.js";
import { app, iAmPlaying, me, session, TERMINAL } from "./state.js";
import { redraw, say } from "./ui.js";

/** Send an action (move, undo or resign) of this page's player, when one may: false, and
 * the page says why, when not. */
export function act(type, move) {
  if (!iAmPlaying()) {
    if (app.race?.state === "running" && me() && TERMINAL.has(me().status)) say("Your game is over.", "info");
    return false;
  }
  if (session.busy()) {
    say("Waiting for the server…", "info");
    return false;
  }
  if (type === "undo" && !app.race.undo) {
    say("This race has no undo.", "error");
    return false;
  }
  app.selection = null;
  session.act(type, move);
  redraw("board");
  return true;
}

/** Deal from the stock. */
export function deal() {
  if (!app.board) return;
  act("move", "+");
}

/** Ask the server for a hint (races with hints only; each is counted in the results). */
export async function askHint() {
  if (!iAmPlaying() || !app.race.hints) return;
  try {
    const reply = await session.request({ type: "hint", code: app.code });
    if (!reply.move) say("No move left to suggest.", "info");
    else say(`Hint: ${describeMove(app.board, reply.move)}`, "info");
  } catch (e) {
    say(e.message, "error");
  }
}

function describeMove(board, text) {
  try {
    const m = Move.parse(text);
    if (m.kind === "deal") return "deal (+)";
    if (m.kind !== "move" || m.src >= board.cols.length) return text;
    const col = board.cols[m.src];
    const face = cardFace(board.variant.family, board.variant.cards.tokens[col[col.length - m.count]]);
    return `${face.rank}${face.suit} from ${columnLetter(m.src)} to ${m.dst === RESERVE ? "the reserve" : columnLetter(m.dst)} (${text})`;
  } catch {
    return text;
  }
}

let resignArmed = 0;
/** Resign, on a second press within four seconds. */
export function resign() {
  if (Date.now() - resignArmed > 4000) {
    resignArmed = Date.now();
    say("Press Resign again to give up this game.", "info");
    return;
  }
  resignArmed = 0;
  act("resign");
}

/** A click on card `index` of column `col`: its move sent, or the reason why none. */
export function onCardClick(col, index) {
  const board = app.board;
  if (!board) return;
  if (col === RESERVE && board.extra[0] < 0) return;
  const { move, reason } = clickMove(board, col, index);
  if (move) act("move", move);
  else say(reason, "error");
}
