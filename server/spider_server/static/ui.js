// The page's frame: the screen shown and its parts redrawn, the header, the message line
// above the board, the clock. Each screen's module provides its drawing by name (screens:
// lobby, room, game, watch, end; the game's parts: board, players), so that what changes the
// state redraws without knowing the screens.

import { $, fill, fmtTime, h } from "./dom.js";
import { IDLE_WARNING, TERMINAL, app, me, session } from "./state.js";

const drawings = {};

/** A screen's (or a part's) drawing, by name. */
export function provide(name, draw) {
  drawings[name] = draw;
}

/** Draw screen or part `name` again, if its module provided it. */
export function redraw(name) {
  drawings[name]?.();
}

/** Show `screen` (lobby, room, game, watch or end). */
export function show(screen) {
  app.screen = screen;
  render();
}

/** Draw the current screen again; while a drag is on, when the drag ends. */
export function render() {
  if (app.drag) {
    app.deferred = true;
    return;
  }
  const focused = document.activeElement?.id;
  const root = $("#screen");
  root.className = `screen-${app.screen}`;
  document.body.dataset.screen = app.screen;
  renderHeader();
  redraw(app.screen);
  if (focused) document.getElementById(focused)?.focus();
  // a new screen's main action takes the focus, for keyboards (not the board: its keys
  // are the game's)
  if (!document.activeElement || document.activeElement === document.body) $("#screen [data-autofocus]")?.focus();
}

/** The header: the race's code, and whether this page watches it or it is a daily deal. */
export function renderHeader() {
  const code = $("#race-code");
  fill(code);
  if (app.code && app.screen !== "lobby") {
    code.append(h("span", { class: "label" }, "race "), h("strong", { id: "code" }, app.code));
    if (app.role === "spectator") code.append(h("span", { class: "badge" }, "watching"));
    if (app.race?.daily) code.append(h("span", { class: "badge", id: "daily-badge" }, `daily deal ${app.race.daily}`));
  }
}

/** Say `text` above the board, or in the room (kind: info or error) for a few seconds
 * (`ms`, by default 4 s for info and 8 s for an error). */
export function say(text, kind = "info", ms = kind === "error" ? 8000 : 4000) {
  app.message = { text, kind };
  clearTimeout(app.messageTimer);
  app.messageTimer = setTimeout(clearMessage, ms);
  const el = $("#message");
  if (el) {
    el.textContent = text;
    el.className = `message ${kind}`;
  }
}

/** Clear the message above the board. */
export function clearMessage() {
  app.message = null;
  const el = $("#message");
  if (el) {
    el.textContent = "";
    el.className = "message";
  }
}

/** The clock in the header, the room's countdown, and the warning before this page's
 * player is out for making no move. */
export function tick() {
  const race = app.race;
  const clock = $("#clock");
  const now = session.now();
  if (!race || app.screen === "lobby") clock.textContent = "";
  else if (race.state === "running") {
    const p = me();
    const elapsed = p && TERMINAL.has(p.status) && p.time ? p.time : now - race.starts_at;
    clock.textContent = `${fmtTime(elapsed)} · ${fmtTime(race.ends_at - now)} left`;
  } else if (race.state === "countdown") clock.textContent = `starts in ${Math.max(0, Math.ceil(race.starts_at - now))}`;
  else clock.textContent = "";
  const countdown = $("#countdown");
  if (countdown && race?.state === "countdown") {
    const left = Math.max(0, Math.ceil(race.starts_at - now));
    countdown.textContent = left > 0 ? `Starting in ${left}…` : "Go!";
  }
  warnIdle(race, now);
}

/** In the last IDLE_WARNING seconds before this page's player's idle deadline (`idle_at`,
 * server time), the game says how long is left to make a move (rules.md §7a: then they
 * are out as `idle`); hidden otherwise. */
function warnIdle(race, now) {
  const el = $("#idle-warning");
  if (!el) return;
  const p = me();
  const playing = app.role === "player" && race?.state === "running" && p?.status === "playing";
  const left = playing && p.idle_at ? p.idle_at - now : Infinity;
  const on = left <= IDLE_WARNING;
  el.textContent = on ? `Make a move within ${Math.max(0, Math.ceil(left))} s, or you are out of the race.` : "";
  el.classList.toggle("on", on);
}
