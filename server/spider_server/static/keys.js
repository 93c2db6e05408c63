// Input by keyboard: column letters pick a source and a destination, digits a count; the
// other decks' moves, deal, undo, hint; the replay's arrows.

import { columnLetter, RESERVE } from "./rules.js";
import { act, askHint, deal } from "./actions.js";
import { renderBoardOnly, toggleHelp } from "./game.js";
import { autoCount, bestFromColumn, keyColumn, selectedCount } from "./moves.js";
import { openPanelId } from "./panel.js";
import { onReplayKey } from "./replay.js";
import { app, iAmPlaying } from "./state.js";
import { clearMessage, say } from "./ui.js";

function showSelection() {
  const sel = app.selection;
  if (!sel) clearMessage();
  else if (sel.set) say(`Set: ${sel.set.map(columnLetter).join(" ")} — pick four columns`, "info");
  else if (sel.joker && sel.src === undefined) say("Joker: pick the column, the depth, then where the card goes", "info");
  else if (sel.src !== undefined) {
    const n = selectedCount(app.board, sel);
    say(`${columnLetter(sel.src === RESERVE ? 25 : sel.src)}: ${n} card${n === 1 ? "" : "s"} — a column letter moves ${n === 1 ? "it" : "them"} there, Enter to the best column`, "info");
  }
  renderBoardOnly();
}

function onGameKey(e) {
  const board = app.board;
  const key = e.key;
  if (key === "?") return toggleHelp(), true;
  // the buttons' keys: each does what its button does, or says why it cannot
  if (key === "+" || key === "=" || key === "s") return deal(), true;
  if (key === "u" || key === "Backspace") return act("undo"), true;
  if (key === "!") return askHint(), true;
  if (!iAmPlaying()) return false;
  const sel = app.selection;
  if (key === "Escape") {
    app.selection = null;
    showSelection();
    return true;
  }
  if (key === "x" && board.variant.family === "sparrow") {
    app.selection = { set: [] };
    showSelection();
    return true;
  }
  if (key === "*" && board.variant.family === "starfish") {
    app.selection = { joker: true, typed: "" };
    showSelection();
    return true;
  }
  if (/^[0-9]$/.test(key)) {
    if (!sel || sel.src === undefined || sel.set) return true;
    const typed = (sel.typed + key).replace(/^0+/, "").slice(-2);
    sel.typed = typed;
    showSelection();
    return true;
  }
  if (key === "Enter" || key === " ") {
    if (!sel || sel.src === undefined) return false;
    if (sel.joker) return true;
    const { move, reason } = bestFromColumn(board, sel.src, sel.typed);
    app.selection = null;
    if (move) act("move", move);
    else say(reason, "error"), renderBoardOnly();
    return true;
  }
  const col = keyColumn(key, board);
  if (col === null) return false;
  if (sel?.set) {
    if (!sel.set.includes(col)) sel.set.push(col);
    if (sel.set.length === 4) {
      app.selection = null;
      act("move", "x" + [...sel.set].sort((a, b) => a - b).map(columnLetter).join(""));
    } else showSelection();
    return true;
  }
  if (!sel || sel.src === undefined) {
    app.selection = { ...(sel || {}), src: col, typed: "" };
    if (!sel?.joker && col !== RESERVE && !board.cols[col].length) {
      app.selection = null;
      say(`column ${columnLetter(col)} is empty`, "error");
    }
    showSelection();
    return true;
  }
  if (col === sel.src) {
    app.selection = null;
    showSelection();
    return true;
  }
  app.selection = null;
  if (sel.joker) {
    act("move", `*${columnLetter(sel.src)}${parseInt(sel.typed, 10) || 2}${columnLetter(col)}`);
    return true;
  }
  const count = sel.src === RESERVE ? 1 : sel.typed ? parseInt(sel.typed, 10) : autoCount(board, sel.src, col);
  const from = sel.src === RESERVE ? "z" : columnLetter(sel.src);
  act("move", `${from}${count}${col === RESERVE ? "z" : columnLetter(col)}`);
  return true;
}

document.addEventListener("keydown", (e) => {
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const t = e.target;
  if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement) return;
  if (t instanceof HTMLButtonElement && (e.key === "Enter" || e.key === " ")) return;
  let handled = false;
  // a panel open (keys, how to play) takes no game key but its own: ? closes the keys
  if (openPanelId()) handled = e.key === "?" && openPanelId() === "help" && (toggleHelp(), true);
  else if (app.screen === "game") handled = onGameKey(e);
  else if (app.screen === "end" && app.replay) handled = onReplayKey(e);
  if (handled) e.preventDefault();
});
