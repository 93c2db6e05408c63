// Following a race: joining it (again after a reconnect or a reload), the player's view,
// and every message from the server, taken into the mirror (mirror.js) and shown.

import { Board } from "./rules.js";
import { takeAck, takeEvent, takeJoined as mirrorJoined } from "./mirror.js";
import { $ } from "./dom.js";
import { app, me, membership, remember, routeCode, screenFor, session } from "./state.js";
import { clearMessage, redraw, render, say, show } from "./ui.js";

/** The server welcomed this page: back to its race, or to a race its link names. */
export function onWelcome() {
  if (app.code && app.role) {
    rejoin();
    return;
  }
  const code = routeCode();
  const role = code && membership()[code];
  if (code && role) {
    join(code, role);
    return;
  }
  const name = $("#name");
  if (app.screen === "lobby" && name && !name.value) name.value = session.name;
}

/** Join race `code` as `role` (player or spectator); since the last version seen when it
 * is the race this page follows. */
export async function join(code, role) {
  app.unsupported = [];
  const since = app.code === code && app.role === role ? app.version : null;
  // a quick match called off while this join is on its way: its race is gone, and the
  // lobby says so already (a join of a race called off before is answered as any other)
  const before = app.calledOff.has(code);
  const calledOff = () => !before && app.calledOff.has(code);
  try {
    const joined = await session.request({ type: "join", code, role, since });
    if (!calledOff()) takeJoined(joined);
  } catch (e) {
    if (e.code === "not_found") remember(code, null);
    if (calledOff()) return;
    if (app.code === code && e.code !== "offline" && e.code !== "timeout") {
      app.code = app.role = null;
    }
    // the server's reason names the race already ("no race ZZZZZ"): not said twice
    app.lobbyError = e.message.includes(code) ? e.message : `${code}: ${e.message}`;
    if (app.code === null) show("lobby");
    else say(e.message, "error");
  }
}

/** Join the race this page follows again (after a reconnect, or when asked to). */
export function rejoin() {
  if (app.code && app.role) join(app.code, app.role);
}

/** Take a `joined` reply (to join, create_race or daily_race): the race, the player's view,
 * the screen it calls for. */
export function takeJoined(j) {
  if (mirrorJoined(app, j)) {
    app.view = null;
    app.viewSeq = -1;
    app.board = null;
    app.replay = null;
    app.selection = null;
    app.hint = null;
    app.seen = null;
    app.focus = null;
  }
  remember(app.code, app.role);
  if (routeCode() !== app.code) history.pushState(null, "", `/r/${app.code}`);
  if (j.role === "player") {
    const before = app.viewSeq;
    if (j.view && j.seq >= app.viewSeq) setView(j.view, j.seq);
    // how many actions an undo may take back: known from the deal on (acks count it), not
    // after a reload in the middle of a game (then Undo stays on and the server judges)
    const p = me();
    if (p && p.moves === 0) app.undoDepth = 0;
    else if (j.seq !== before) app.undoDepth = null;
    session.enterRace(app.code, j.seq);
  } else {
    session.leaveRace();
  }
  show(screenFor());
  session.follow(app.code); // race affinity: to the race's URL, rejoined on the welcome
}

/** The player's view (its text and the seq of the action it follows). */
function setView(text, seq) {
  app.view = text;
  app.viewSeq = seq;
  try {
    app.board = Board.fromText(text);
  } catch (e) {
    app.board = null;
    say(`cannot show this position: ${e.message}`, "error");
  }
}

/** An applied action's ack: the actions an undo may take back (app.undoDepth; null when
 * not known). */
function countUndo(ack) {
  if (ack.seq === 0) app.undoDepth = 0;
  else if (app.undoDepth === null || app.undoDepth === undefined) return;
  else if (ack.move === "undo") app.undoDepth = Math.max(0, app.undoDepth - 1);
  else if (ack.move && ack.move !== "resign") app.undoDepth += 1;
}

/** A message from the server that is not a request's reply: acks, errors, race events. */
export function onMessage(msg) {
  if (msg.type === "ack") {
    if (msg.code !== app.code) return;
    if (msg.seq > app.viewSeq && !msg.duplicate) countUndo(msg);
    if (msg.seq >= app.viewSeq) setView(msg.view, msg.seq);
    takeAck(app, msg, session.player);
    if (msg.seq > 0 && !msg.duplicate) clearMessage();
    app.selection = null;
    if (app.screen === "game") redraw("board"), redraw("players");
    else show(screenFor());
    return;
  }
  if (msg.type === "error") {
    if (app.screen === "lobby") {
      app.lobbyError = msg.message;
      redraw("lobby");
    } else say(msg.message, "error");
    return;
  }
  if (!msg.race || !takeEvent(app, msg)) return;
  if (msg.type === "started" && app.role === "player") {
    // the deal comes as an ack with seq 0; ask for it by rejoining if it does not
    setTimeout(() => app.role === "player" && !app.view && rejoin(), 1500);
  }
  const next = screenFor();
  if (next !== app.screen) show(next);
  else if (next === "game") redraw("players");
  else if (next === "watch") redraw("watch");
  else render();
}

/** Speak under the name in the lobby's field; false (and the lobby says so) when empty. */
export async function takeName() {
  if (session.account) return true; // an account plays under its own name
  const name = $("#name")?.value.trim();
  if (!name) {
    app.lobbyError = "Pick a name first.";
    redraw("lobby");
    $("#name").focus();
    return false;
  }
  await session.rename(name);
  if (session.refusedName) {
    app.lobbyError = `The name ${session.refusedName}.`;
    redraw("lobby");
    $("#name")?.focus();
    return false;
  }
  return true;
}

/** Leave the race's screens for the lobby (the race stays in this browser's list). */
export function toLobby() {
  app.code = app.role = app.race = null;
  app.view = null;
  app.board = null;
  app.viewSeq = -1;
  session.leaveRace();
  history.pushState(null, "", "/");
  show("lobby");
}

window.addEventListener("popstate", () => {
  const code = routeCode();
  if (!code) {
    if (app.screen !== "lobby") toLobby();
    return;
  }
  const role = membership()[code];
  if (role) join(code, role);
  else {
    app.code = null;
    show("lobby");
  }
});
