// A player's replay: the revealed seed dealt with the spec's algorithm, the player's actions
// applied (undos included) with the page's rules, stepped through by hand or played by itself
// at a chosen speed, each action listed in words and notation (and the race time it was
// made at, when the race kept it); it says whether it ends on
// the final board the server published. The deal's par line plays the same way (the "Par
// line" tab, once the server has it).

import { Board } from "./rules.js";
import { boardElement, fitColumns, renderFoundation, renderStock } from "./boardview.js";
import { $, fill, h } from "./dom.js";
import { app } from "./state.js";
import { count, moveWords } from "./words.js";

/** The speeds the replay plays at, in actions a second. */
export const SPEEDS = [0.5, 1, 2, 4, 8];

/** The replay key of the par line (no player id has a colon). */
export const PAR_LINE = ":par";

/** Replay `player`'s actions (or with `PAR_LINE`, the par line) from the revealed seed. */
export function openReplay(player) {
  const race = app.race;
  const actions = player === PAR_LINE ? race.par?.line : race.replays?.[player];
  if (!actions) return;
  stopPlaying();
  const positions = [];
  const words = [];
  let board;
  let error = null;
  try {
    board = Board.deal(race.variant, race.seed);
    positions.push(board.copy());
    for (const a of actions) {
      words.push(moveWords(board, a));
      if (a === "undo") board.pop();
      else if (a !== "resign") board.push(a);
      positions.push(board.copy());
    }
  } catch (e) {
    error = e.message;
  }
  const final = player === PAR_LINE ? null : app.boards[player];
  const speed = app.replay?.speed ?? 2;
  const times = race.replay_times?.[player]?.length === actions.length ? race.replay_times[player] : null;
  app.replay = { player, actions, words, times, positions, index: 0, error, speed, timer: null, matches: board && !error && final ? board.text() === final : null };
  renderReplay();
}

function stopPlaying() {
  const r = app.replay;
  if (r?.timer) {
    clearInterval(r.timer);
    r.timer = null;
  }
}

/** Play the replay by itself from where it is (from the deal when at its end), or pause. */
export function togglePlay() {
  const r = app.replay;
  if (!r) return;
  if (r.timer) {
    stopPlaying();
    showStep();
    return;
  }
  if (r.index >= r.positions.length - 1) r.index = 0;
  r.timer = setInterval(() => {
    if (!document.contains($("#replay-board")) || app.replay !== r) return stopPlaying();
    step(r.index + 1);
    if (r.index >= r.positions.length - 1) {
      stopPlaying();
      showStep();
    }
  }, 1000 / r.speed);
  showStep();
}

function setSpeed(speed) {
  const r = app.replay;
  r.speed = speed;
  if (r.timer) {
    stopPlaying();
    togglePlay();
  }
}

/** Go to step `i` of the replay (0: the deal). */
export function step(i) {
  const r = app.replay;
  r.index = Math.max(0, Math.min(r.positions.length - 1, i));
  showStep();
}

function stepText(r) {
  if (r.index === 0) return `the deal · ${count(r.actions.length, "action")}`;
  const [words, action] = [r.words[r.index - 1], r.actions[r.index - 1]];
  const at = r.times ? ` · at ${raceTime(r.times[r.index - 1])}` : "";
  return `${r.index}/${r.actions.length}: ${words}${words === action ? "" : ` (${action})`}${at}`;
}

/** A race time in ms as m:ss.s (the time an action was made, from the start). */
export function raceTime(ms) {
  const tenths = Math.floor(ms / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = ((tenths % 600) / 10).toFixed(1).padStart(4, "0");
  return `${minutes}:${seconds}`;
}

/** The replay: a tab per player, the steps' controls and speed, the board at the step,
 * the list of actions. */
export function renderReplay() {
  const slot = $("#replay");
  const r = app.replay;
  if (!slot) return;
  const race = app.race;
  if (!r) {
    const hidden = race.daily && !race.seed;
    fill(slot, h("p", { class: "muted", id: hidden ? "daily-hidden" : null }, hidden ? `The deal and the replays of the daily deal are shown once its day (${race.daily}, UTC) is over.` : "No replay."));
    return;
  }
  const names = Object.fromEntries(race.players.map((p) => [p.player, p.name]));
  (race.results || []).forEach((x) => (names[x.player] = x.name));
  fill(slot,
    h("h2", {}, "Replay"),
    h(
      "div",
      { class: "row tabs", role: "tablist" },
      Object.keys(race.replays || {}).map((p) =>
        h("button", { type: "button", role: "tab", class: p === r.player ? "on" : "", "aria-selected": p === r.player ? "true" : "false", dataset: { player: p }, onclick: () => openReplay(p) }, names[p] || p),
      ),
      race.par?.line
        ? h("button", { type: "button", role: "tab", id: "replay-par", class: r.player === PAR_LINE ? "on" : "", "aria-selected": r.player === PAR_LINE ? "true" : "false", dataset: { player: PAR_LINE }, onclick: () => openReplay(PAR_LINE) }, `Par line (${race.par.moves})`)
        : null,
    ),
    h(
      "div",
      { class: "row controls" },
      h("button", { id: "replay-first", type: "button", title: "first (Home)", onclick: () => step(0) }, "⇤"),
      h("button", { id: "replay-prev", type: "button", title: "back (←)", onclick: () => step(r.index - 1) }, "◀"),
      h("button", { id: "replay-play", type: "button", title: "play by itself, or pause (p)", onclick: togglePlay }, "Play"),
      h("button", { id: "replay-next", type: "button", title: "forward (→)", onclick: () => step(r.index + 1) }, "▶"),
      h("button", { id: "replay-last", type: "button", title: "last (End)", onclick: () => step(r.positions.length - 1) }, "⇥"),
      h(
        "select",
        { id: "replay-speed", class: "speed", "aria-label": "speed", title: "speed", onchange: (e) => setSpeed(parseFloat(e.target.value)) },
        SPEEDS.map((s) => h("option", { value: String(s), selected: s === r.speed }, `${s} / s`)),
      ),
      h("input", { id: "replay-slider", type: "range", min: 0, max: r.positions.length - 1, value: r.index, "aria-label": "step", oninput: (e) => step(parseInt(e.target.value, 10)) }),
    ),
    h("p", { id: "replay-step", class: "muted", "aria-live": "off" }),
    r.error ? h("p", { class: "error" }, `This replay could not be played: ${r.error}`) : null,
    r.matches === true ? h("p", { class: "fairness ok", id: "replay-check" }, "✓ Replayed from the seed, it ends on the server's final board.") : null,
    r.matches === false ? h("p", { class: "fairness bad", id: "replay-check" }, "✗ Replayed from the seed, it does not end on the server's final board!") : null,
    r.player === PAR_LINE ? h("p", { class: "muted", id: "par-about" }, parAbout(race.par)) : null,
    h("div", { class: "replay-board", id: "replay-board-slot" }),
    h(
      "ol",
      { class: "replay-moves", id: "replay-moves", "aria-label": "actions" },
      r.words.map((w, i) => h("li", { dataset: { step: String(i + 1), ...(r.times ? { ms: String(r.times[i]) } : {}) }, onclick: () => step(i + 1) }, w, w === r.actions[i] ? null : h("code", {}, r.actions[i]), r.times ? h("span", { class: "at" }, ` ${raceTime(r.times[i])}`) : null)),
    ),
  );
  showStep();
}

/** What the par line is: the shortest winning line known so far, or the solver's. */
function parAbout(par) {
  if (par.provisional) return "The shortest winning line known when the race ended (the deal's proof, or a winner's moves); the server's solver is looking for a shorter one.";
  const first = par.first === null ? "its solver found no line within its budget" : `its solver's first line took ${count(par.first, "move")}`;
  return `The deal's par: the shortest winning line the server knows (${first}).`;
}

/** The step shown: the board, the slider, the words, the action marked in the list. */
function showStep() {
  const r = app.replay;
  const slot = $("#replay-board-slot");
  if (!r || !slot) return;
  const board = r.positions[r.index];
  $("#replay-step").textContent = stepText(r);
  $("#replay-slider").value = String(r.index);
  $("#replay-play").textContent = r.timer ? "Pause" : "Play";
  $("#replay-play").classList.toggle("on", Boolean(r.timer));
  const list = $("#replay-moves");
  list.querySelector("li.on")?.classList.remove("on");
  const current = list.querySelector(`li[data-step="${r.index}"]`);
  if (current) {
    current.classList.add("on");
    const top = current.offsetTop - list.offsetTop;
    if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - current.offsetHeight) list.scrollTop = top - list.clientHeight / 2;
  }
  if (!board) {
    fill(slot);
    return;
  }
  const el = boardElement(board, {});
  el.id = "replay-board";
  el.dataset.position = board.text();
  fill(slot, h("div", { class: "toolbar" }, h("div", { class: "replay-stock" }), h("div", { class: "foundation replay-foundation" })), el);
  renderStock(board, slot.querySelector(".replay-stock"), false);
  renderFoundation(board, slot.querySelector(".replay-foundation"));
  fitColumns(el, Math.max(window.innerHeight * 0.75, 240));
}

/** The arrows, Home and End step through the replay; p plays or pauses it. */
export function onReplayKey(e) {
  const r = app.replay;
  if (e.key === "p") return togglePlay(), true;
  const moves = { ArrowLeft: r.index - 1, ArrowRight: r.index + 1, Home: 0, End: r.positions.length - 1 };
  if (!(e.key in moves)) return false;
  step(moves[e.key]);
  return true;
}
