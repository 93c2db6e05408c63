// The player's actions: a move, a deal, an undo or a resignation sent (one at a time, kept by
// net.js until acked), a hint asked for, and what a click on a card does.

import { Move, RESERVE } from "./rules.js";
import { clickMove } from "./moves.js";
import { app, me, session, TERMINAL } from "./state.js";
import { moveWords } from "./words.js";
import { clearMessage, redraw, say } from "./ui.js";

/** Why this page's player cannot `action` now (undo, deal, hint, resign, move), in words
 * for a button's tooltip and the message line; null when they can. */
export function whyNot(action) {
  const race = app.race;
  const p = me();
  if (app.role !== "player" || !race || !p) return "You are not playing in this race.";
  if (race.state === "finished" || TERMINAL.has(p.status)) return "Your game is over.";
  if (race.state !== "running") return "The race has not started.";
  const board = app.board;
  if (!board) return "Waiting for the deal…";
  if (action === "undo") {
    if (!race.undo) return "This race has no undo.";
    if (app.undoDepth === 0) return "Nothing to undo.";
  }
  if (action === "deal") {
    const v = board.variant;
    if (!v.stockDeals.length) return `${v.family === "wizard" ? "Wizard's Tower" : v.base} has no stock: every card is dealt at the start.`;
    if (!board.dealsLeft()) return "No deals left.";
    if (!board.isLegal("+")) return "No deal while a column is empty: fill every column first.";
  }
  if (action === "hint" && !race.hints) return "This race was created without hints.";
  return null;
}

/** Send an action (move, undo or resign) of this page's player, when one may: false, and
 * the page says why, when not. */
export function act(type, move) {
  const reason = whyNot(type === "move" ? (move === "+" ? "deal" : "move") : type);
  if (reason) {
    if (app.race?.state === "running" && me()) say(reason, reason === "Your game is over." ? "info" : "error");
    return false;
  }
  if (session.busy()) {
    say("Waiting for the server…", "info");
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

/** Ask the server for a hint (races with hints only; each is counted in the results). While
 * the server thinks the Hint button spins; its reply is shown on the board (the cards to
 * move and where they go, app.hint, drawn by boardview.js) and in words. The reply lists
 * up to three suggestions, best first: a second press on the same position shows the next
 * one without asking again (and after the last, the first again). */
export async function askHint() {
  const reason = whyNot("hint");
  if (reason) {
    if (app.race?.state === "running" && me()) say(reason, reason === "Your game is over." ? "info" : "error");
    return;
  }
  if (app.hint?.pending) return;
  if (app.hint && app.hint.view === app.view) {
    const n = app.hint.moves.length;
    if (n > 1) app.hint.index = (app.hint.index + 1) % n;
    app.hint.move = app.hint.moves[app.hint.index] ?? null;
    showHint(app.hint, true);
    return;
  }
  const view = app.view;
  app.hint = { pending: true, view };
  say("Looking for a move…", "info", 120000);
  redraw("board");
  try {
    const reply = await session.request({ type: "hint", code: app.code });
    let moves = reply.moves?.length ? reply.moves : reply.move ? [reply.move] : [];
    // no line wins, and a deal is left: the deal is suggested first
    if (reply.verdict === "lost" && moves.length && app.view === view && app.board?.isLegal("+")) moves = ["+", ...moves.filter((m) => m !== "+")];
    app.hint = { view, moves, index: 0, move: moves[0] ?? null, verdict: reply.verdict ?? "" };
    if (app.view === view) showHint(app.hint, false);
    else say("That hint was for an earlier position: ask again.", "info");
  } catch (e) {
    app.hint = null;
    say(e.message, "error");
  }
  redraw("board");
}

/** The hint in words: no move left; no move helps but a deal (the deal is the only
 * suggestion; the stock is lit); else the suggestion shown, numbered when there are others
 * (a deal among them: "Hint: deal (+) — 1 of 3."), with the solver's word when no line
 * wins. A hint that offers other moves never says that no move helps. */
function showHint(hint, again) {
  if (hint.view !== app.view) return;
  if (hint.move === null) say(`No move left${app.race.undo ? ": undo?" : "."}`, "info", 10000);
  else if (hint.move === "+" && hint.moves.length === 1) say("No move helps: deal?", "info", 10000);
  else {
    const n = hint.moves.length;
    const which = n > 1 ? ` — ${hint.index + 1} of ${n}` : "";
    const words = hint.move === "+" ? "deal" : moveWords(app.board, hint.move);
    const lost = hint.verdict === "lost" ? " No line wins from here." : "";
    say(`${hint.index ? "Or" : "Hint"}: ${words} (${hint.move})${which}.${lost}`, "info", 10000);
  }
  if (again) redraw("board");
}

/** The hint shown on the board, for the hint of the position shown (else null): `cards`
 * `[column, first index, end index]` of the cards to move (a Joker move: the card it
 * replaces), `target` the column they go to, `stock` for a deal, `set` a Sparrow set's
 * columns, `reserve` when the Tower's reserve card moves. */
export function hintMarks(board) {
  const hint = app.hint;
  if (!hint || hint.pending || hint.view !== app.view || !hint.move) return null;
  if (hint.move === "+") return { cards: null, target: null, stock: true };
  try {
    const m = Move.parse(hint.move);
    if (m.kind === "set") return { set: m.columns, cards: null, target: null, stock: false };
    if (m.src === RESERVE) return { reserve: true, cards: null, target: m.dst, stock: false };
    const len = board.cols[m.src].length;
    const from = m.kind === "joker" ? [len - m.count, len - m.count + 1] : [len - m.count, len];
    return { cards: [m.src, ...from], target: m.dst, stock: false };
  } catch {
    return null;
  }
}

/** How long a first press of Resign waits for the second (ms). */
export const RESIGN_WINDOW = 4000;
let resignPrompt = null;
/** Resign, on a second press while the first press's prompt shows: the prompt is the
 * window (it goes after RESIGN_WINDOW, or when another message takes its place, and a
 * press then asks again; while it shows, however late its timer, a press resigns). */
export function resign() {
  const armed = resignPrompt !== null && app.message === resignPrompt.message && app.code === resignPrompt.code;
  if (!armed) {
    say("Press Resign again to give up this game.", "info", RESIGN_WINDOW);
    resignPrompt = { message: app.message, code: app.code };
    return;
  }
  resignPrompt = null;
  clearMessage();
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
