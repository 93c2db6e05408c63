// The page's state: one object for what it shows (the race it follows, mirrored from the
// server's events by mirror.js, the player's view, the screen, the pick, the drag), the
// session that speaks to the server, and what the screens ask of them.

import { Session, store } from "./net.js";

export const TERMINAL = new Set(["won", "stuck", "resigned", "left", "abandoned", "idle", "timeout"]);
export const STATUS_TEXT = { won: "won", stuck: "stuck", resigned: "resigned", left: "left", abandoned: "abandoned", idle: "out: no move in time", timeout: "out of time", playing: "playing", waiting: "waiting" };
/** Seconds before a player's idle deadline (`idle_at`) from which the game warns them. */
export const IDLE_WARNING = 10;

const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
/** What the page shows. `code`, `role`, `race`, `version` and `boards` are the race's
 * mirror (mirror.js); the rest is the page's own. */
export const app = {
  screen: "lobby",
  code: null,
  role: null,
  race: null,
  version: 0,
  view: null, // my view's text
  viewSeq: -1,
  board: null, // my view as a Board
  boards: {}, // player -> view text (live boards) or final full position
  selection: null, // keyboard: {src, typed} | {set: []} | {joker: true, src?, typed}
  message: null,
  messageTimer: null,
  drag: null,
  deferred: false,
  replay: null,
  help: false,
  lobbyError: null,
  viewAsked: 0,
  undoDepth: null, // actions an undo may take back (null: not known, after a reload)
  hint: null, // {view, pending} while asked, then {view, moves, index, move, verdict} (move: the one shown, null: no legal move)
  seen: null, // player -> status last shown, for the notices when one wins or is out
  focus: null, // a spectator's board shown at full size: a player id, "leader", or null
  noticeTimer: null,
  watchNews: null, // a spectator's notice: {text, until}
  calledOff: new Set(), // the quick matches called off that this page was in
};
/** The connection; app.js gives it its handlers before it connects. */
export const session = new Session(wsUrl, {});

export const membership = () => store.get("races", {});
/** Keep (or forget, when `role` is null) the races this browser is in. */
export function remember(code, role) {
  const races = membership();
  if (role) races[code] = role;
  else delete races[code];
  store.set("races", races);
}

/** The race code of a shareable link's path (`/r/K7QX2`), or null. */
export function routeCode() {
  const m = /^\/r\/([A-Za-z0-9]{5})\/?$/.exec(location.pathname);
  return m ? m[1].toUpperCase() : null;
}

/** This page's player in the race, or null (a spectator, or no race). */
export function me() {
  return app.race?.players.find((p) => p.player === session.player) || null;
}

/** Whether this page's player has a game in play. */
export function iAmPlaying() {
  return app.role === "player" && app.race?.state === "running" && me()?.status === "playing" && app.board;
}

/** The screen the race's state calls for. */
export function screenFor() {
  const state = app.race?.state;
  if (!state) return "lobby";
  if (state === "finished") return "end";
  if (state === "open" || state === "countdown") return "room";
  return app.role === "player" ? "game" : "watch";
}

/** A race's settings in one line. */
export function describeRace(race) {
  const parts = [race.variant, `${Math.round(race.time_limit / 60)} min`, race.undo ? "undo" : "no undo", race.live_boards ? "live boards" : "boards hidden until the end"];
  if (race.idle_limit && race.idle_limit < race.time_limit) parts.push(`out after ${race.idle_limit % 60 ? `${race.idle_limit} s` : `${race.idle_limit / 60} min`} without a move`);
  if (race.hints) parts.push("hints");
  if (race.humans_only) parts.push("humans only");
  if (race.rated) parts.push("rated");
  if (race.daily) parts.unshift(`daily deal of ${race.daily}`);
  else if (race.winnable) parts.push("winnable deal");
  return parts.join(" · ");
}
