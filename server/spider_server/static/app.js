// The spider-race page: lobby, race room, board, players' progress, end screen, spectating
// and replays. It speaks docs/protocol.md over /ws through net.js; rules.js gives it the
// legal moves for hints and the seeded deal for replays, and the server judges every move.

import { cardFace, foundationFace } from "./cards.js";
import { Session, store } from "./net.js";
import { BASES, Board, Move, bestDestination, columnLetter, findVariant } from "./rules.js";
import { fromHex, sha256, toHex } from "./sha256.js";

const RESERVE = 25; // column index of "z", Wizard's Tower's reserve with `weave`
const TERMINAL = new Set(["won", "stuck", "resigned", "left", "timeout"]);
const STATUS_TEXT = { won: "won", stuck: "stuck", resigned: "resigned", left: "left", timeout: "out of time", playing: "playing", waiting: "waiting" };

// -- tiny DOM helpers ----------------------------------------------------------------------------

function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
const $ = (sel, root = document) => root.querySelector(sel);
/** Replace an element's children (null, undefined and false are left out). */
function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}
const fmtTime = (s) => {
  if (s === null || s === undefined || !isFinite(s)) return "–";
  s = Math.max(0, Math.floor(s));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
};

// -- state -----------------------------------------------------------------------------------------

const wsUrl = `${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`;
const app = {
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
};
const session = new Session(wsUrl, {
  onWelcome,
  onMessage,
  onStatus: (s) => {
    const el = $("#conn");
    el.textContent = s;
    el.dataset.state = s;
  },
  onActionError: (error) => {
    say(error.message || error.error, "error");
    renderBoardOnly();
  },
  onResync: () => rejoin(),
});
window.spiderRace = { app, session }; // for the curious, and for tests

const membership = () => store.get("races", {});
function remember(code, role) {
  const races = membership();
  if (role) races[code] = role;
  else delete races[code];
  store.set("races", races);
}

function routeCode() {
  const m = /^\/r\/([A-Za-z0-9]{5})\/?$/.exec(location.pathname);
  return m ? m[1].toUpperCase() : null;
}

function me() {
  return app.race?.players.find((p) => p.player === session.player) || null;
}

function iAmPlaying() {
  return app.role === "player" && app.race?.state === "running" && me()?.status === "playing" && app.board;
}

// -- messages from the server ----------------------------------------------------------------------

function onWelcome() {
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

async function join(code, role) {
  app.unsupported = [];
  const since = app.code === code && app.role === role ? app.version : null;
  try {
    const joined = await session.request({ type: "join", code, role, since });
    takeJoined(joined);
  } catch (e) {
    if (e.code === "not_found") remember(code, null);
    if (app.code === code && e.code !== "offline" && e.code !== "timeout") {
      app.code = app.role = null;
    }
    app.lobbyError = `${code}: ${e.message}`;
    if (app.code === null) show("lobby");
    else say(e.message, "error");
  }
}

function rejoin() {
  if (app.code && app.role) join(app.code, app.role);
}

function takeJoined(j) {
  const newRace = j.race.code !== app.code;
  if (newRace) {
    app.view = null;
    app.viewSeq = -1;
    app.board = null;
    app.boards = {};
    app.replay = null;
    app.selection = null;
  }
  app.code = j.race.code;
  app.role = j.role;
  app.race = j.race;
  app.version = j.race.version;
  remember(app.code, app.role);
  if (routeCode() !== app.code) history.pushState(null, "", `/r/${app.code}`);
  if (j.boards) Object.assign(app.boards, j.boards);
  for (const e of j.events || []) if (e.type === "board") app.boards[e.player] = e.view;
  if (j.role === "player") {
    if (j.view && j.seq >= app.viewSeq) setView(j.view, j.seq);
    session.enterRace(app.code, j.seq);
  } else {
    session.leaveRace();
  }
  show(screenFor());
}

function screenFor() {
  const state = app.race?.state;
  if (!state) return "lobby";
  if (state === "finished") return "end";
  if (state === "open" || state === "countdown") return "room";
  return app.role === "player" ? "game" : "watch";
}

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

function onMessage(msg) {
  if (msg.type === "ack") {
    if (msg.code !== app.code) return;
    if (msg.seq >= app.viewSeq) setView(msg.view, msg.seq);
    const p = me();
    if (p) Object.assign(p, { status: msg.status, moves: msg.moves, score: msg.score });
    if (msg.seq > 0 && !msg.duplicate) clearMessage();
    app.selection = null;
    if (app.screen === "game") renderBoardOnly(), renderPlayers();
    else show(screenFor());
    return;
  }
  if (msg.type === "error") {
    if (app.screen === "lobby") {
      app.lobbyError = msg.message;
      renderLobby();
    } else say(msg.message, "error");
    return;
  }
  if (!msg.race || msg.race !== app.code || !app.race) return;
  if (msg.version <= app.version) return;
  app.version = msg.version;
  applyEvent(msg);
}

function putPlayer(info) {
  const players = app.race.players;
  const i = players.findIndex((p) => p.player === info.player);
  if (i >= 0) players[i] = info;
  else players.push(info);
}

function applyEvent(e) {
  const race = app.race;
  race.version = Math.max(race.version, e.version);
  switch (e.type) {
    case "player_joined":
    case "progress":
      putPlayer(e.player);
      break;
    case "player_left":
      if (race.state === "open" || race.state === "countdown") race.players = race.players.filter((p) => p.player !== e.player);
      else race.players.forEach((p) => p.player === e.player && Object.assign(p, { status: "left", connected: false }));
      break;
    case "player_ready":
      race.players.forEach((p) => p.player === e.player && (p.ready = e.ready));
      if (!e.ready && race.state === "countdown") Object.assign(race, { state: "open", starts_at: null });
      break;
    case "countdown":
      Object.assign(race, { state: "countdown", starts_at: e.starts_at });
      break;
    case "started":
      Object.assign(race, { state: "running", starts_at: e.started_at, ends_at: e.ends_at, commitment: e.commitment });
      race.players.forEach((p) => p.status === "waiting" && (p.status = "playing"));
      if (app.role === "player") {
        // the deal comes as an ack with seq 0; ask for it by rejoining if it does not
        setTimeout(() => app.role === "player" && !app.view && rejoin(), 1500);
      }
      break;
    case "board":
      app.boards[e.player] = e.view;
      break;
    case "prepared":
      race.preparing = false;
      break;
    case "finished":
      Object.assign(race, { state: "finished", results: e.results, seed: e.seed, salt: e.salt, replays: e.replays, commitment: e.commitment });
      Object.assign(app.boards, e.boards);
      for (const r of e.results) race.players.forEach((p) => p.player === r.player && Object.assign(p, { status: r.status, time: r.time }));
      break;
    default:
      return;
  }
  const next = screenFor();
  if (next !== app.screen) show(next);
  else if (next === "game") renderPlayers();
  else if (next === "watch") renderWatch();
  else render();
}

// -- screens ---------------------------------------------------------------------------------------

function show(screen) {
  app.screen = screen;
  render();
}

function render() {
  if (app.drag) {
    app.deferred = true;
    return;
  }
  const focused = document.activeElement?.id;
  const root = $("#screen");
  root.className = `screen-${app.screen}`;
  document.body.dataset.screen = app.screen;
  renderHeader();
  if (app.screen === "lobby") renderLobby();
  else if (app.screen === "room") renderRoom();
  else if (app.screen === "game") renderGame();
  else if (app.screen === "watch") renderWatch();
  else if (app.screen === "end") renderEnd();
  if (focused) document.getElementById(focused)?.focus();
  // a new screen's main action takes the focus, for keyboards (not the board: its keys
  // are the game's)
  if (!document.activeElement || document.activeElement === document.body) $("#screen [data-autofocus]")?.focus();
}

function renderHeader() {
  const code = $("#race-code");
  fill(code);
  if (app.code && app.screen !== "lobby") {
    code.append(h("span", { class: "label" }, "race "), h("strong", { id: "code" }, app.code));
    if (app.role === "spectator") code.append(h("span", { class: "badge" }, "watching"));
    if (app.race?.daily) code.append(h("span", { class: "badge", id: "daily-badge" }, `daily deal ${app.race.daily}`));
  }
}

function variantOptions(base) {
  return BASES[base] || [];
}

function renderLobby() {
  app.screen = "lobby";
  document.body.dataset.screen = "lobby";
  renderHeader();
  const root = $("#screen");
  root.className = "screen-lobby";
  const code = routeCode();
  const saved = store.get("lobby", {});
  const base = saved.base || "spider4";
  const optionBoxes = h("span", { id: "options" });
  const fillOptions = (b) => {
    fill(optionBoxes,
      ...variantOptions(b).map((o) =>
        h("label", { class: "check" }, h("input", { type: "checkbox", name: "option", value: o, checked: (saved.options || []).includes(o) }), o),
      ),
    );
  };
  fillOptions(base);
  const baseSelect = h(
    "select",
    { id: "variant", name: "variant", onchange: (e) => fillOptions(e.target.value) },
    Object.keys(BASES).map((b) => h("option", { value: b, selected: b === base }, b)),
  );
  const nameInput = h("input", {
    id: "name",
    name: "name",
    maxlength: 32,
    autocomplete: "nickname",
    value: session.name,
    placeholder: "your name",
    required: true,
    // Enter in the name field does what the page offers first: join the linked race, or create
    onkeydown: (e) => {
      if (e.key !== "Enter") return;
      e.preventDefault();
      if (code) $("#join-form").requestSubmit($("#join"));
      else $("#create-form").requestSubmit($("#create"));
    },
  });
  const error = app.lobbyError ? h("p", { class: "error", id: "lobby-error", role: "alert" }, app.lobbyError) : null;
  app.lobbyError = null;

  const create = h(
    "form",
    { id: "create-form", class: "card-panel", onsubmit: (e) => (e.preventDefault(), createRace(e.target)) },
    h("h2", {}, "Create a race"),
    h("div", { class: "row" }, h("label", { for: "variant" }, "Variant"), baseSelect, optionBoxes),
    h(
      "div",
      { class: "row" },
      h("label", { for: "time-limit" }, "Time limit"),
      h("input", { id: "time-limit", name: "time_limit", type: "number", min: 1, max: 240, value: saved.minutes || 30 }),
      "minutes",
    ),
    h(
      "div",
      { class: "row checks" },
      h("label", { class: "check" }, h("input", { type: "checkbox", id: "undo", name: "undo", checked: saved.undo ?? true }), "undo"),
      h("label", { class: "check" }, h("input", { type: "checkbox", id: "live-boards", name: "live_boards", checked: saved.live_boards ?? false }), "live boards for spectators"),
      h("label", { class: "check", title: "a solver may suggest a move (if the server offers it)" }, h("input", { type: "checkbox", id: "hints", name: "hints", checked: saved.hints ?? false }), "hints"),
      h("label", { class: "check", title: "deal only a seed that a solver has proved winnable (if the server offers it)" }, h("input", { type: "checkbox", id: "winnable", name: "winnable", checked: saved.winnable ?? false }), "winnable deal"),
    ),
    h(
      "details",
      { class: "more" },
      h("summary", {}, "More"),
      h("div", { class: "row" }, h("label", { for: "max-players" }, "Players"), h("input", { id: "max-players", name: "max_players", type: "number", min: 1, max: 16, value: saved.max_players || 8 })),
      h("div", { class: "row" }, h("label", { for: "countdown" }, "Countdown"), h("input", { id: "countdown", name: "countdown", type: "number", min: 0, max: 60, value: saved.countdown ?? 3 }), "seconds"),
      h("div", { class: "row" }, h("label", { for: "seed" }, "Seed"), h("input", { id: "seed", name: "seed", maxlength: 200, placeholder: "random (secret until the end)" })),
    ),
    h("button", { id: "create", type: "submit", class: "primary" }, "Create race"),
  );
  const joinForm = h(
    "form",
    { id: "join-form", class: "card-panel", onsubmit: (e) => (e.preventDefault(), joinFromLobby(e.submitter?.value || "player")) },
    h("h2", {}, "Join a race"),
    h(
      "div",
      { class: "row" },
      h("label", { for: "join-code" }, "Code"),
      h("input", { id: "join-code", name: "code", value: code || "", placeholder: "K7QX2", maxlength: 5, autocomplete: "off", autocapitalize: "characters", spellcheck: "false" }),
    ),
    h("div", { class: "row" }, h("button", { id: "join", type: "submit", value: "player", class: "primary" }, "Join"), h("button", { id: "watch", type: "submit", value: "spectator" }, "Watch")),
  );
  const daily = dailyPanel();
  const races = Object.entries(membership());
  const mine = races.length
    ? h(
        "div",
        { class: "card-panel", id: "my-races" },
        h("h2", {}, "Your races"),
        h("ul", {}, races.map(([c, role]) => h("li", {}, h("a", { href: `/r/${c}`, onclick: (e) => (e.preventDefault(), join(c, role)) }, c), ` (${role})`))),
      )
    : null;
  fill(root,
    h(
      "div",
      { class: "lobby" },
      h("div", { class: "card-panel intro" }, h("h1", {}, "Race your friends at Spider"), h("div", { class: "row" }, h("label", { for: "name" }, "Your name"), nameInput)),
      error,
      code ? joinForm : create,
      code ? create : joinForm,
      daily,
      mine,
      h("p", { class: "hint" }, "Everyone in a race plays the same deal. Keys on the board: ", h("kbd", {}, "?"), " shows them."),
    ),
  );
  (!nameInput.value ? nameInput : code ? $("#join") : $("#create")).focus();
}

// -- the daily deal: a variant's deal of the UTC day, raced alone, and its leaderboard --------------

function dailyPanel() {
  const saved = store.get("daily", {});
  const variant = saved.variant || "spider4";
  const shown = app.leaderboard?.variant === variant ? app.leaderboard : null;
  return h(
    "form",
    { id: "daily-form", class: "card-panel", onsubmit: (e) => (e.preventDefault(), e.submitter?.value === "board" ? showLeaderboard() : playDaily()) },
    h("h2", {}, "Daily deal"),
    h("p", { class: "muted" }, "The day's deal (UTC) of a variant, the same for everyone and proved winnable: one race a day, alone. The day's winners rank by time, then moves."),
    h(
      "div",
      { class: "row" },
      h("label", { for: "daily-variant" }, "Variant"),
      h(
        "select",
        { id: "daily-variant", name: "variant", onchange: (e) => (store.set("daily", { variant: e.target.value }), (app.leaderboard = null), fill($("#daily-slot"))) },
        Object.keys(BASES).map((b) => h("option", { value: b, selected: b === variant }, b)),
      ),
      h("button", { id: "daily-play", type: "submit", value: "play", class: "primary" }, "Play today's deal"),
      h("button", { id: "daily-board", type: "submit", value: "board" }, "Leaderboard"),
    ),
    h("div", { id: "daily-slot" }, shown ? leaderboardTable(shown) : null),
  );
}

async function playDaily() {
  const variant = $("#daily-variant").value;
  store.set("daily", { variant });
  if (!(await takeName())) return;
  try {
    takeJoined(await session.request({ type: "daily_race", variant }));
  } catch (e) {
    app.lobbyError = `Daily deal: ${e.message}`;
    renderLobby();
  }
}

async function showLeaderboard() {
  const variant = $("#daily-variant").value;
  store.set("daily", { variant });
  try {
    app.leaderboard = await session.request({ type: "leaderboard", variant });
  } catch (e) {
    app.leaderboard = null;
    app.lobbyError = `Leaderboard: ${e.message}`;
    renderLobby();
    return;
  }
  const slot = $("#daily-slot");
  if (slot && $("#daily-variant")?.value === variant) fill(slot, leaderboardTable(app.leaderboard));
}

/** A `leaderboard_reply` as a table: rank, name, time, moves (the player's row marked). */
function leaderboardTable(reply) {
  const caption = h("caption", {}, `Leaderboard · ${reply.variant} · ${reply.day}`);
  if (!reply.entries.length) {
    return h("div", { class: "leaderboard", id: "daily-leaderboard", dataset: { variant: reply.variant, day: reply.day } }, h("p", { class: "muted" }, `Leaderboard · ${reply.variant} · ${reply.day}: nobody has won this deal yet.`));
  }
  return h(
    "div",
    { class: "leaderboard", id: "daily-leaderboard", dataset: { variant: reply.variant, day: reply.day } },
    h(
      "table",
      {},
      caption,
      h("thead", {}, h("tr", {}, ["#", "player", "time", "moves"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        reply.entries.map((e) =>
          h(
            "tr",
            { class: e.player === session.player ? "me" : "", dataset: { player: e.player, rank: String(e.rank) } },
            h("td", {}, String(e.rank)),
            h("td", {}, e.name, e.player === session.player ? " (you)" : ""),
            h("td", {}, fmtTime(e.time)),
            h("td", {}, String(e.moves)),
          ),
        ),
      ),
    ),
  );
}

/** The end of a daily race: its day's leaderboard, asked again a few times while a win of
 * this page's player is not on it yet (the server records it just after the finish). */
async function endLeaderboard(race) {
  const key = `${race.code}`;
  if (app.endBoard?.code === key) return;
  app.endBoard = { code: key, reply: null };
  const won = (race.results || []).some((r) => r.player === session.player && r.status === "won");
  for (let tries = 0; tries < 15; tries++) {
    let reply;
    try {
      reply = await session.request({ type: "leaderboard", variant: race.variant, day: race.daily });
    } catch {
      reply = null;
    }
    if (app.endBoard?.code !== key) return;
    if (reply) {
      app.endBoard.reply = reply;
      const slot = $("#end-leaderboard");
      if (slot) fill(slot, h("h2", {}, "The day's leaderboard"), leaderboardTable(reply));
      if (!won || reply.entries.some((e) => e.player === session.player)) return;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function takeName() {
  const name = $("#name")?.value.trim();
  if (!name) {
    app.lobbyError = "Pick a name first.";
    renderLobby();
    $("#name").focus();
    return false;
  }
  await session.rename(name);
  return true;
}

async function createRace(form) {
  const data = new FormData(form);
  if (!(await takeName())) return;
  const options = data.getAll("option").sort();
  const base = data.get("variant");
  const minutes = Math.max(1, Math.min(240, parseInt(data.get("time_limit"), 10) || 30));
  const msg = {
    type: "create_race",
    variant: [base, ...options].join("+"),
    seed: data.get("seed")?.trim() || null,
    max_players: parseInt(data.get("max_players"), 10) || 8,
    time_limit: minutes * 60,
    undo: data.get("undo") === "on",
    live_boards: data.get("live_boards") === "on",
    countdown: parseInt(data.get("countdown"), 10) || 0,
  };
  // newer race options: sent only when asked for (a server that does not know them yet
  // ignores them, and the room then says so)
  const wanted = ["hints", "winnable"].filter((o) => data.get(o) === "on");
  for (const o of wanted) msg[o] = true;
  store.set("lobby", { base, options, minutes, undo: msg.undo, live_boards: msg.live_boards, hints: wanted.includes("hints"), winnable: wanted.includes("winnable"), max_players: msg.max_players, countdown: msg.countdown });
  try {
    const joined = await session.request(msg);
    app.unsupported = wanted.filter((o) => !(o in joined.race));
    takeJoined(joined);
  } catch (e) {
    app.lobbyError = e.message;
    renderLobby();
  }
}

async function joinFromLobby(role) {
  const code = $("#join-code").value.trim().toUpperCase();
  if (!(await takeName())) return;
  if (!/^[A-Z0-9]{5}$/.test(code)) {
    app.lobbyError = "A race code has five letters and digits, such as K7QX2.";
    renderLobby();
    return;
  }
  join(code, role);
}

function describeRace(race) {
  const parts = [race.variant, `${Math.round(race.time_limit / 60)} min`, race.undo ? "undo" : "no undo", race.live_boards ? "live boards" : "boards hidden until the end"];
  if (race.hints) parts.push("hints");
  if (race.daily) parts.unshift(`daily deal of ${race.daily}`);
  else if (race.winnable) parts.push("winnable deal");
  return parts.join(" · ");
}

function shareLink() {
  return `${location.origin}/r/${app.code}`;
}

function renderRoom() {
  const race = app.race;
  const mine = me();
  const countdown = race.state === "countdown";
  const players = race.players.map((p) =>
    h(
      "li",
      { class: `player ${p.ready ? "ready" : ""}`, dataset: { player: p.player } },
      h("span", { class: "name" }, p.name, p.player === session.player ? " (you)" : ""),
      h("span", { class: "state" }, p.ready ? "✓ ready" : "not ready"),
      p.connected ? null : h("span", { class: "away" }, "away"),
    ),
  );
  const link = shareLink();
  fill($("#screen"),
    h(
      "div",
      { class: "room card-panel" },
      race.daily ? h("h1", {}, "Daily deal ", h("span", { class: "code" }, race.daily)) : h("h1", {}, "Race ", h("span", { class: "code" }, race.code)),
      race.daily
        ? h("p", { class: "share", id: "daily-note" }, "Today's deal, alone against the clock: it starts when you are ready. Your time and moves go on the day's leaderboard if you win.")
        : h(
            "p",
            { class: "share" },
            "Invite friends with this link: ",
            h("a", { id: "share-link", href: link }, link),
            " ",
            h("button", { id: "copy-link", type: "button", onclick: () => copyLink(link) }, "Copy"),
          ),
      h("p", { class: "settings", id: "settings" }, describeRace(race)),
      app.unsupported?.length ? h("p", { class: "notice" }, `This server does not offer ${app.unsupported.join(" and ")} yet: the race was created without.`) : null,
      race.preparing ? h("p", { class: "notice", id: "preparing" }, "Finding a deal the solver proves winnable…") : null,
      h("h2", {}, `Players (${race.players.length}/${race.max_players})`, race.spectators ? ` · ${race.spectators} watching` : ""),
      h("ul", { class: "players", id: "room-players" }, players),
      countdown ? h("p", { class: "countdown", id: "countdown", "aria-live": "assertive" }, "") : null,
      h(
        "div",
        { class: "row" },
        mine
          ? h("button", { id: "ready", class: "primary", type: "button", "data-autofocus": true, disabled: countdown, onclick: () => setReady(!mine.ready) }, mine.ready ? "Not ready" : "Ready")
          : h("p", {}, "You are watching: the race starts when every player is ready."),
        mine ? h("button", { id: "leave", type: "button", onclick: leaveRace }, "Leave") : h("button", { id: "to-lobby", type: "button", onclick: toLobby }, "Lobby"),
      ),
    ),
  );
  tick();
}

function copyLink(link) {
  const done = () => say("Link copied.", "info");
  if (navigator.clipboard?.writeText) navigator.clipboard.writeText(link).then(done, () => selectLink());
  else selectLink();
}

function selectLink() {
  const range = document.createRange();
  range.selectNodeContents($("#share-link"));
  getSelection().removeAllRanges();
  getSelection().addRange(range);
}

async function setReady(ready) {
  try {
    await session.request({ type: "ready", code: app.code, ready });
  } catch (e) {
    say(e.message, "error");
  }
}

async function leaveRace() {
  const code = app.code;
  try {
    await session.request({ type: "leave", code });
  } catch (e) {
    say(e.message, "error");
    return;
  }
  remember(code, null);
  store.set(`pending.${code}`, null);
  toLobby();
}

function toLobby() {
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

// -- the game --------------------------------------------------------------------------------------

function say(text, kind = "info") {
  app.message = { text, kind };
  clearTimeout(app.messageTimer);
  app.messageTimer = setTimeout(clearMessage, kind === "error" ? 8000 : 4000);
  const el = $("#message");
  if (el) {
    el.textContent = text;
    el.className = `message ${kind}`;
  }
}

function clearMessage() {
  app.message = null;
  const el = $("#message");
  if (el) {
    el.textContent = "";
    el.className = "message";
  }
}

function renderGame() {
  const race = app.race;
  const variant = findVariant(race.variant);
  const root = $("#screen");
  fill(root,
    h(
      "div",
      { class: "game" },
      h(
        "section",
        { class: "table", id: "table" },
        h(
          "div",
          { class: "toolbar" },
          h("div", { id: "stock-slot" }),
          h("div", { id: "foundation", class: "foundation", "aria-label": "completed runs" }),
          variant.base === "wizard" && variant.options.has("weave") ? h("div", { id: "reserve-slot" }) : null,
          h(
            "div",
            { class: "actions" },
            h("button", { id: "undo", type: "button", title: "Undo (u)", disabled: !race.undo, onclick: (e) => (e.currentTarget.blur(), act("undo")) }, "Undo"),
            h("button", { id: "deal", type: "button", title: "Deal (+)", onclick: (e) => (e.currentTarget.blur(), deal()) }, "Deal"),
            race.hints ? h("button", { id: "hint", type: "button", title: "Hint (!) — counted in the results", onclick: (e) => (e.currentTarget.blur(), askHint()) }, "Hint") : null,
            h("button", { id: "resign", type: "button", title: "Resign", onclick: (e) => (e.currentTarget.blur(), resign()) }, "Resign"),
            h("button", { id: "keys", type: "button", title: "Keys (?)", onclick: (e) => (e.currentTarget.blur(), toggleHelp()) }, "?"),
          ),
        ),
        h("div", { id: "message", class: `message ${app.message?.kind || ""}`, role: "status", "aria-live": "polite" }, app.message?.text || ""),
        h("div", { id: "board-slot" }),
        app.help ? helpPanel() : null,
      ),
      h("aside", { id: "players", class: "players-panel", "aria-label": "players" }),
    ),
  );
  renderBoardOnly();
  renderPlayers();
  tick();
}

function helpPanel() {
  return h(
    "div",
    { class: "help card-panel", id: "help" },
    h("h2", {}, "Keys"),
    h(
      "dl",
      {},
      h("dt", {}, "a … j"),
      h("dd", {}, "pick a column, then another: its run goes there"),
      h("dt", {}, "1 … 9"),
      h("dd", {}, "after a column: how many cards to move"),
      h("dt", {}, "Enter, Space"),
      h("dd", {}, "move the picked cards to the best column"),
      h("dt", {}, "+  or  s"),
      h("dd", {}, "deal from the stock"),
      h("dt", {}, "u  or  Backspace"),
      h("dd", {}, "undo"),
      h("dt", {}, "!"),
      h("dd", {}, "ask for a hint (races with hints)"),
      h("dt", {}, "x, *, z"),
      h("dd", {}, "Sparrow's sets (or drag a tile of a set onto the runs), Starfish's Jokers (or drag one from the Troupe onto a card, or drag away a card that is not free), the Tower's reserve"),
      h("dt", {}, "Esc"),
      h("dd", {}, "cancel the pick"),
    ),
  );
}

function toggleHelp() {
  app.help = !app.help;
  if (app.screen === "game") renderGame();
}

function renderBoardOnly() {
  if (app.screen !== "game") return;
  if (app.drag) {
    app.deferred = true;
    return;
  }
  const slot = $("#board-slot");
  if (!slot) return;
  const board = app.board;
  if (!board) {
    fill(slot, h("p", { class: "waiting-deal" }, "Waiting for the deal…"));
    return;
  }
  const p = me();
  const over = p && TERMINAL.has(p.status);
  const el = boardElement(board, { interactive: !over, id: "board" });
  el.dataset.view = app.view;
  el.dataset.moves = p ? p.moves : 0;
  el.dataset.status = p ? p.status : "";
  if (session.busy()) el.classList.add("waiting");
  const children = [el];
  if (over) {
    const text =
      p.status === "won"
        ? `You won${p.time ? ` in ${fmtTime(p.time)}` : ""}!`
        : `Your game is over: ${STATUS_TEXT[p.status] || p.status}.`;
    children.push(h("div", { class: "game-over", id: "game-over" }, text, h("br"), "Waiting for the others…"));
  }
  fill(slot, ...children);
  renderStock(board, $("#stock-slot"), true);
  renderFoundation(board, $("#foundation"));
  const reserve = $("#reserve-slot");
  if (reserve) renderReserve(board, reserve);
  fitColumns(el);
}

function renderStock(board, slot, interactive) {
  if (!slot) return;
  if (!board.variant.stockDeals.length) {
    fill(slot);
    return;
  }
  const deals = board.dealsLeft();
  fill(slot,
    h(
      "div",
      {
        id: interactive ? "stock" : null,
        class: `stock ${deals ? "" : "empty"}`,
        role: interactive ? "button" : null,
        tabindex: interactive ? "0" : null,
        title: interactive ? "Deal (+)" : null,
        "aria-label": `stock: ${deals} deals left`,
        onclick: interactive ? () => deal() : null,
        onkeydown: interactive ? (e) => (e.key === "Enter" || e.key === " ") && (e.preventDefault(), e.stopPropagation(), deal()) : null,
      },
      h("span", { class: "deals" }, String(deals)),
      h("span", { class: "label" }, deals === 1 ? "deal left" : "deals left"),
    ),
  );
}

function renderFoundation(board, el) {
  if (!el) return;
  const v = board.variant;
  const total = v.setCount();
  fill(el,
    h("span", { class: "label" }, "runs "),
    h("span", { class: "count", id: interactiveId(el, "runs-count") }, `${board.foundation.length}/${total}`),
    ...board.foundation.map((t) => {
      const f = foundationFace(v.family, t);
      return h("span", { class: `run ${f.cls}`, title: "completed" }, f.label);
    }),
    v.family === "starfish" ? troupe(board, el.id === "foundation") : null,
  );
}

/** Starfish's Troupe: the Jokers left; on the player's own board a Joker drags from it. */
function troupe(board, interactive) {
  const n = board.extra[0];
  const live = interactive && n > 0;
  return h(
    "span",
    {
      class: `troupe ${live ? "live" : ""}`,
      id: interactive ? "troupe" : null,
      dataset: { jokers: String(n) },
      title: live ? "Jokers left in the Troupe: drag one onto a card to replace it" : "Jokers left in the Troupe",
      onpointerdown: live ? onTroupeDown : null,
    },
    " · ",
    h("span", { class: "joker-chip", "aria-hidden": "true" }, "☆"),
    ` Jokers ${n}`,
  );
}

function interactiveId(el, id) {
  return el.id === "foundation" ? id : null;
}

function renderReserve(board, slot) {
  const card = board.extra[0];
  const v = board.variant;
  const content = card >= 0 ? cardElement(v, v.cards.tokens[card], { col: RESERVE, index: 0, up: true }) : h("div", { class: "card slot-empty" }, "reserve");
  fill(slot, h("div", { class: "column reserve", dataset: { col: String(RESERVE) }, title: "reserve (z)" }, content));
}

function cardElement(v, token, { col, index, up, after, movable, selected }) {
  if (!up) return h("div", { class: `card down ${after ? `after-${after}` : ""}`, dataset: { col: String(col), index: String(index), card: "??" }, "aria-label": "face-down card" });
  const f = cardFace(v.family, token);
  // a Decktet card's suits each in their own colour
  const symbols = (text) => (f.parts ? f.parts.map(([sym, cls]) => h("span", { class: cls }, sym)) : text);
  return h(
    "div",
    {
      class: `card up ${f.cls} ${after ? `after-${after}` : ""} ${movable ? "movable" : ""} ${selected ? "selected" : ""}`,
      dataset: { col: String(col), index: String(index), card: token },
      "aria-label": f.name,
      title: f.name,
    },
    h("span", { class: "corner" }, h("span", { class: "rank" }, f.rank), h("span", { class: "suit" }, symbols(f.suit))),
    h("span", { class: "big" }, symbols(f.big)),
  );
}

/** A board's columns (interactive: my own board in play). */
function boardElement(board, { interactive = false, id = null, mini = false } = {}) {
  const v = board.variant;
  const sel = interactive ? app.selection : null;
  const columns = board.cols.map((col, i) => {
    const down = board.down[i];
    const run = board.movable(i);
    const selCount = sel && sel.src === i ? selectedCount(board, sel) : 0;
    const cards = col.map((c, k) =>
      cardElement(v, v.cards.tokens[c], {
        col: i,
        index: k,
        up: k >= down,
        after: k === 0 ? null : k - 1 < down ? "down" : "up",
        movable: interactive && k >= col.length - run,
        selected: selCount && k >= col.length - selCount,
      }),
    );
    return h(
      "div",
      { class: `column ${sel && sel.src === i ? "picked" : ""} ${sel?.set?.includes(i) ? "picked" : ""}`, dataset: { col: String(i), letter: columnLetter(i) } },
      h("span", { class: "letter", "aria-hidden": "true" }, columnLetter(i)),
      cards.length ? cards : h("div", { class: "card slot-empty", dataset: { col: String(i) } }),
    );
  });
  const el = h("div", { id, class: `board ${mini ? "mini" : ""} ${interactive ? "interactive" : ""}`, style: `--cols:${board.cols.length}`, dataset: { family: v.family } }, columns);
  if (interactive) el.addEventListener("pointerdown", onPointerDown);
  return el;
}

/** Squeeze long columns so that each fits the height left on screen (or `room` pixels). */
function fitColumns(el, room = null) {
  if (room === null) room = Math.max(window.innerHeight - el.getBoundingClientRect().top - 12, 160);
  for (const column of el.querySelectorAll(".column")) {
    const w = column.getBoundingClientRect().width || 1;
    const downs = column.querySelectorAll(".card.after-down").length;
    const ups = column.querySelectorAll(".card.after-up").length;
    const natural = w * (1.4 + 0.18 * downs + 0.42 * ups) + 14;
    column.style.removeProperty("--sd");
    column.style.removeProperty("--su");
    if (natural > room && downs + ups) {
      const scale = Math.max(0.3, (room / w - 1.4 - 14 / w) / (0.18 * downs + 0.42 * ups));
      column.style.setProperty("--sd", `${(18 * scale).toFixed(2)}%`);
      column.style.setProperty("--su", `${(42 * Math.min(1, scale)).toFixed(2)}%`);
    }
  }
}
window.addEventListener("resize", () => {
  const el = $("#board");
  if (el) fitColumns(el);
});

function renderPlayers() {
  const panel = $("#players");
  if (!panel || !app.race) return;
  const v = findVariant(app.race.variant);
  const total = v.setCount();
  const sorted = [...app.race.players].sort((a, b) => (a.player === session.player ? -1 : b.player === session.player ? 1 : 0));
  fill(panel,
    h("h2", {}, "Players", app.race.spectators ? h("span", { class: "muted" }, ` · ${app.race.spectators} watching`) : null),
    ...sorted.map((p) => playerCard(p, total)),
  );
}

function playerCard(p, total) {
  return h(
    "div",
    { class: `player status-${p.status} ${p.player === session.player ? "me" : ""}`, dataset: { player: p.player, status: p.status, moves: String(p.moves) } },
    h(
      "div",
      { class: "head" },
      h("span", { class: "dot", title: p.connected ? "connected" : "away", dataset: { on: p.connected ? "1" : "0" } }),
      h("span", { class: "name" }, p.name, p.player === session.player ? " (you)" : ""),
      h("span", { class: "status" }, STATUS_TEXT[p.status] || p.status, p.time ? ` ${fmtTime(p.time)}` : ""),
    ),
    h(
      "div",
      { class: "stats" },
      stat("runs", `${p.runs}/${total}`),
      stat("turned up", p.turned_up),
      stat("deals left", p.deals_left),
      stat("moves", p.moves),
      p.hints ? stat("hints", p.hints) : null,
    ),
    h("div", { class: "bar", "aria-hidden": "true" }, h("span", { style: `width:${Math.round((100 * p.runs) / Math.max(1, total))}%` })),
  );
}

function stat(label, value) {
  return h("span", { class: "stat" }, h("b", {}, String(value)), ` ${label}`);
}

// -- acting ------------------------------------------------------------------------------------------

function act(type, move) {
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
  renderBoardOnly();
  return true;
}

function deal() {
  if (!app.board) return;
  act("move", "+");
}

/** Ask the server for a hint (races with hints only; each is counted in the results). */
async function askHint() {
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
function resign() {
  if (Date.now() - resignArmed > 4000) {
    resignArmed = Date.now();
    say("Press Resign again to give up this game.", "info");
    return;
  }
  resignArmed = 0;
  act("resign");
}

/** The move a click on card `index` of column `col` makes, or a reason why none. */
function clickMove(board, col, index) {
  const column = board.cols[col];
  const count = column.length - index;
  const v = board.variant;
  const token = v.cards.tokens[column[index]];
  const name = cardFace(v.family, token).name;
  if (col === RESERVE) {
    const card = board.extra[0];
    const moves = board.generateMoves().filter((m) => m.src === RESERVE);
    const suited = moves.find((m) => board.cols[m.dst].length && v.follows(board.cols[m.dst].at(-1), card));
    const any = moves.find((m) => board.cols[m.dst].length) || moves[0];
    return suited || any ? { move: (suited || any).text } : { reason: "the reserve's card has nowhere to go" };
  }
  const moves = board.generateMoves();
  if (count === 1 && v.family === "sparrow") {
    const set = moves.find((m) => m.kind === "set" && m.columns.includes(col));
    if (set) return { move: set.text };
  }
  if (count <= board.movable(col)) {
    const dst = bestDestination(board, col, count);
    if (dst !== null) return { move: new Move("move", col, count, dst).text };
    return { reason: `${name} has nowhere to go` };
  }
  const joker = bestJoker(board, col, count, moves);
  if (joker) return { move: joker.text };
  return { reason: `${name} is not free: only the run at the end of a column moves` };
}

/** Starfish: the Joker moves that replace the card `depth` cards from column `col`'s end. */
function jokerMoves(board, col, depth, moves = board.generateMoves()) {
  return moves.filter((m) => m.kind === "joker" && m.src === col && m.count === depth);
}

/** The Joker move a click (or a Joker dropped from the Troupe) makes for that card: the
 * replaced card goes where a click would send it (one rank higher in its own suit first,
 * then any column that takes it, else an empty column); null when it may go nowhere. */
function bestJoker(board, col, depth, moves) {
  const jokers = jokerMoves(board, col, depth, moves);
  if (!jokers.length) return null;
  const v = board.variant;
  const card = board.cols[col].at(-depth);
  return jokers.find((m) => board.cols[m.dst].length && v.follows(board.cols[m.dst].at(-1), card)) || jokers.find((m) => board.cols[m.dst].length) || jokers[0];
}

/** Sparrow: the set a drag of column `col`'s end tile to the foundation takes off (of the
 * legal sets with that column, the first in the notation's order), or null. */
function setWith(board, col) {
  const sets = board.generateMoves().filter((m) => m.kind === "set" && m.columns.includes(col));
  sets.sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  return sets[0] || null;
}

/** Sparrow: the set move a drop of column `col`'s end tile on the foundation sends when no
 * set is legal, for the server to say why: that column and the next ones whose end tiles are
 * of the same kind (Winds, or Flowers and Seasons), then the next columns, four in all. */
function setAttempt(board, col) {
  const v = board.variant;
  const kind = v.blocker(board.cols[col].at(-1));
  const others = board.cols.map((_, j) => j).filter((j) => j !== col);
  const alike = others.filter((j) => board.cols[j].length && v.blocker(board.cols[j].at(-1)) === kind);
  const rest = others.filter((j) => !alike.includes(j));
  const columns = [col, ...alike, ...rest].slice(0, 4).sort((a, b) => a - b);
  return new Move("set", -1, 0, -1, columns).text;
}

function onCardClick(col, index) {
  const board = app.board;
  if (!board) return;
  if (col === RESERVE && board.extra[0] < 0) return;
  const { move, reason } = clickMove(board, col, index);
  if (move) act("move", move);
  else say(reason, "error");
}

// pointer input: a press and release in place is a click; a press and move drags the card
// with the cards on it. The other decks' own moves drag too: a Starfish card that is not
// free is replaced by a Joker (the card alone goes where it is dropped), a Joker dragged
// from the Troupe onto a card replaces it, and a Sparrow Wind or Flower dropped on the
// foundation takes off its set.

function onPointerDown(e) {
  if (e.button !== 0 || !iAmPlaying()) return;
  const cardEl = e.target.closest(".card.up");
  if (!cardEl) return;
  e.preventDefault();
  const col = parseInt(cardEl.dataset.col, 10);
  const index = parseInt(cardEl.dataset.index, 10);
  app.press = { x: e.clientX, y: e.clientY, col, index, el: cardEl, id: e.pointerId };
}

function onTroupeDown(e) {
  if (e.button !== 0 || !iAmPlaying() || !(app.board.extra[0] > 0)) return;
  e.preventDefault();
  app.press = { x: e.clientX, y: e.clientY, troupe: true, el: e.currentTarget, id: e.pointerId };
}

document.addEventListener("pointermove", (e) => {
  const press = app.press;
  if (!press || e.pointerId !== press.id) return;
  if (!app.drag) {
    if (Math.hypot(e.clientX - press.x, e.clientY - press.y) < 6) return;
    startDrag(press);
  }
  moveDrag(e.clientX, e.clientY);
});

document.addEventListener("pointerup", (e) => {
  const press = app.press;
  if (!press || e.pointerId !== press.id) return;
  app.press = null;
  if (app.drag) endDrag(e.clientX, e.clientY);
  else if (press.troupe) say("Drag a Joker onto a card to replace it: the card goes to another column.", "info");
  else onCardClick(press.col, press.index);
});

document.addEventListener("pointercancel", () => {
  app.press = null;
  if (app.drag) cancelDrag();
});

function cardsOf(col, index) {
  if (col === RESERVE) return [$("#reserve-slot .card.up")].filter(Boolean);
  return [...document.querySelectorAll(`#board .column[data-col="${col}"] .card`)].filter((c) => parseInt(c.dataset.index, 10) >= index);
}

const columnEl = (j) => (j === RESERVE ? $("#reserve-slot .column") : $(`#board .column[data-col="${j}"]`));
const cardEl = (col, index) => $(`#board .column[data-col="${col}"] .card[data-index="${index}"]`);

/** What a drag of the pressed cards does: "move" (a run, or the reserve's card), "joker" (a
 * Starfish card that is not free: a Joker takes its place), "troupe" (a Joker from the
 * Troupe). */
function dragKind(board, press, count) {
  if (press.troupe) return "troupe";
  if (board.variant.family === "starfish" && press.col !== RESERVE && count >= 2 && count > board.movable(press.col)) return "joker";
  return "move";
}

function startDrag(press) {
  const board = app.board;
  const count = press.troupe ? 1 : press.col === RESERVE ? 1 : board.cols[press.col].length - press.index;
  const kind = dragKind(board, press, count);
  // the cards that leave: the run from the pressed card, or the one card a Joker replaces
  let cards;
  let ghostCards;
  if (kind === "troupe") {
    cards = [];
    const card = $("#board .card");
    const width = card ? card.getBoundingClientRect().width : 60;
    ghostCards = [cardElement(board.variant, "@", { col: -1, index: 0, up: true })];
    ghostCards[0].style.width = `${width}px`;
  } else {
    cards = kind === "joker" ? [press.el] : cardsOf(press.col, press.index);
    ghostCards = cards.map((c) => {
      const copy = c.cloneNode(true);
      copy.classList.remove("after-down");
      return copy;
    });
  }
  const first = (kind === "troupe" ? press.el : cards[0]).getBoundingClientRect();
  const width = kind === "troupe" ? ghostCards[0].style.width : `${first.width}px`;
  const ghost = h("div", { class: "ghost board", id: "ghost", style: `width:${width};left:${first.left}px;top:${first.top}px` }, ghostCards);
  for (const c of cards) c.classList.add(kind === "joker" ? "joker-slot" : "lifted");
  document.body.append(ghost);
  // a Joker hangs below and right of the pointer, to leave the card it is on in sight
  const dx = kind === "troupe" ? -0.3 * parseFloat(width) : press.x - first.left;
  const dy = kind === "troupe" ? -14 : press.y - first.top;
  app.drag = { ...press, kind, ghost, cards, dx, dy, origin: first, count };
  // light up where the cards may go (a hint: the server decides)
  const target = (j) => columnEl(j)?.classList.add("target");
  if (kind === "troupe") {
    // every card a Joker may replace, and its column
    for (const m of board.generateMoves()) {
      if (m.kind !== "joker") continue;
      cardEl(m.src, board.cols[m.src].length - m.count)?.classList.add("joker-target");
      target(m.src);
    }
    return;
  }
  if (kind === "joker") {
    for (const m of jokerMoves(board, press.col, count)) target(m.dst);
    return;
  }
  for (let j = 0; j < board.cols.length; j++) {
    const text = press.col === RESERVE ? `z1${columnLetter(j)}` : `${columnLetter(press.col)}${count}${columnLetter(j)}`;
    if (j !== press.col && board.isLegal(text)) target(j);
  }
  if (press.col !== RESERVE && board.isLegal(`${columnLetter(press.col)}${count}z`)) target(RESERVE);
  // Sparrow: a Wind or a Flower at a column's end may take its set off to the foundation
  if (board.variant.family === "sparrow" && count === 1 && press.col !== RESERVE && board.variant.blocker(board.cols[press.col].at(-1))) {
    app.drag.set = setWith(board, press.col);
    if (app.drag.set) {
      $("#foundation")?.classList.add("target");
      for (const j of app.drag.set.columns) if (j !== press.col) cardEl(j, board.cols[j].length - 1)?.classList.add("in-set");
    }
  }
}

function moveDrag(x, y) {
  const d = app.drag;
  d.ghost.style.left = `${x - d.dx}px`;
  d.ghost.style.top = `${y - d.dy}px`;
  document.querySelectorAll(".drop-over").forEach((c) => c.classList.remove("drop-over"));
  const toFoundation = d.kind === "move" && d.set !== undefined && overFoundation(x, y);
  d.ghost.classList.toggle("to-foundation", toFoundation);
  if (toFoundation) {
    $("#foundation")?.classList.add("drop-over");
    return;
  }
  const over = columnAt(x, y);
  if (over !== null) columnEl(over)?.classList.add("drop-over");
  if (d.kind === "troupe") {
    const spot = jokerSpot(x, y);
    if (spot) cardEl(spot.col, spot.index)?.classList.add("drop-over");
  }
}

function columnAt(x, y) {
  const el = document.elementFromPoint(x, y)?.closest(".column");
  if (el) return parseInt(el.dataset.col, 10);
  // between columns or below them: the column whose span covers x
  for (const c of document.querySelectorAll("#board .column")) {
    const r = c.getBoundingClientRect();
    if (x >= r.left && x <= r.right && y >= r.top - 20) return parseInt(c.dataset.col, 10);
  }
  return null;
}

function overFoundation(x, y) {
  const el = $("#foundation");
  if (!el) return false;
  const r = el.getBoundingClientRect();
  return x >= r.left - 8 && x <= r.right + 8 && y >= r.top - 8 && y <= r.bottom + 8;
}

/** The card a Joker dropped at (x, y) replaces: the card under the pointer, else the card
 * of the column under the pointer that a Joker may replace nearest to it; null off the
 * board's cards. */
function jokerSpot(x, y) {
  const under = document.elementFromPoint(x, y)?.closest("#board .card:not(.slot-empty)");
  if (under) return { col: parseInt(under.dataset.col, 10), index: parseInt(under.dataset.index, 10) };
  const col = columnAt(x, y);
  if (col === null || col === RESERVE) return null;
  let best = null;
  for (const c of document.querySelectorAll(`#board .column[data-col="${col}"] .card.joker-target`)) {
    const r = c.getBoundingClientRect();
    const distance = Math.abs(y - (r.top + 8));
    if (!best || distance < best.distance) best = { col, index: parseInt(c.dataset.index, 10), distance };
  }
  return best;
}

function endDrag(x, y) {
  const d = app.drag;
  const board = app.board;
  if (d.kind === "troupe") {
    const spot = jokerSpot(x, y);
    snapBack(d);
    if (!spot) return;
    const depth = board.cols[spot.col].length - spot.index;
    const move = bestJoker(board, spot.col, depth, board.generateMoves());
    if (move) act("move", move.text);
    else {
      // sent all the same, for the server's reason (the card has nowhere to go, or it is
      // not a card a Joker may replace)
      const onto = board.cols.findIndex((c, j) => j !== spot.col && c.length);
      const dst = onto >= 0 ? onto : (spot.col + 1) % board.cols.length;
      act("move", `*${columnLetter(spot.col)}${depth}${columnLetter(dst)}`);
    }
    return;
  }
  const onFoundation = d.kind === "move" && d.set !== undefined && overFoundation(x, y);
  const dst = onFoundation ? null : columnAt(x, y);
  snapBack(d);
  if (onFoundation) {
    act("move", d.set ? d.set.text : setAttempt(board, d.col));
    return;
  }
  if (dst === null || dst === d.col) return;
  if (d.kind === "joker") {
    act("move", `*${columnLetter(d.col)}${d.count}${columnLetter(dst)}`);
    return;
  }
  const text = d.col === RESERVE ? `z1${columnLetter(dst)}` : `${columnLetter(d.col)}${d.count}${columnLetter(dst)}`;
  // sent even when the page thinks it illegal: the server's reason is shown
  act("move", text);
}

function cancelDrag() {
  snapBack(app.drag);
}

function snapBack(d) {
  app.drag = null;
  d.ghost.classList.add("snap");
  d.ghost.style.left = `${d.origin.left}px`;
  d.ghost.style.top = `${d.origin.top}px`;
  setTimeout(() => d.ghost.remove(), 150);
  for (const c of d.cards) c.classList.remove("lifted", "joker-slot");
  for (const cls of ["target", "drop-over", "joker-target", "in-set"]) document.querySelectorAll(`.${cls}`).forEach((c) => c.classList.remove(cls));
  if (app.deferred) {
    app.deferred = false;
    render();
  }
}

// keyboard: column letters pick a source and a destination, digits a count

function selectedCount(board, sel) {
  if (sel.src === RESERVE) return 1;
  if (sel.typed) return parseInt(sel.typed, 10);
  return board.movable(sel.src);
}

function keyColumn(key, board) {
  if (key.length !== 1) return null;
  if (key === "z" && board.variant.base === "wizard" && board.variant.options.has("weave")) return RESERVE;
  const i = key.charCodeAt(0) - 97;
  return i >= 0 && i < board.cols.length ? i : null;
}

function autoCount(board, src, dst) {
  if (src === RESERVE) return 1;
  for (let k = board.movable(src); k >= 1; k--) if (board.isLegal(new Move("move", src, k, dst))) return k;
  return Math.max(1, board.movable(src));
}

function bestFromColumn(board, src, typed) {
  if (src === RESERVE) return clickMove(board, RESERVE, 0);
  const column = board.cols[src];
  if (!column.length) return { reason: `column ${columnLetter(src)} is empty` };
  if (typed) return clickMove(board, src, column.length - parseInt(typed, 10));
  let empty = null;
  for (let k = board.movable(src); k >= 1; k--) {
    const dst = bestDestination(board, src, k);
    if (dst === null) continue;
    if (board.cols[dst].length) return { move: new Move("move", src, k, dst).text };
    if (empty === null) empty = new Move("move", src, k, dst).text;
  }
  return empty ? { move: empty } : clickMove(board, src, column.length - 1);
}

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
  if (!iAmPlaying()) return false;
  const sel = app.selection;
  if (key === "Escape") {
    app.selection = null;
    showSelection();
    return true;
  }
  if (key === "+" || key === "=" || key === "s") return deal(), true;
  if (key === "u" || key === "Backspace") return act("undo"), true;
  if (key === "!") return askHint(), true;
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
  if (app.screen === "game") handled = onGameKey(e);
  else if (app.screen === "end" && app.replay) handled = onReplayKey(e);
  if (handled) e.preventDefault();
});

// -- spectating --------------------------------------------------------------------------------------

function renderWatch() {
  const race = app.race;
  const v = findVariant(race.variant);
  const total = v.setCount();
  const root = $("#screen");
  const live = race.live_boards;
  fill(root,
    h(
      "div",
      { class: "watch" },
      h(
        "div",
        { class: "watch-head" },
        h("h1", {}, "Watching race ", h("span", { class: "code" }, race.code)),
        h("p", { class: "settings" }, describeRace(race)),
        live ? null : h("p", { class: "muted" }, "Boards are hidden while the race runs; they and every move are shown at the end."),
      ),
      h(
        "div",
        { class: `watch-grid ${live ? "live" : ""}`, id: "watch-grid" },
        race.players.map((p) => {
          const view = app.boards[p.player];
          let board = null;
          if (live && view) {
            try {
              board = Board.fromText(view);
            } catch {
              board = null;
            }
          }
          return h(
            "div",
            { class: "watch-player" },
            playerCard(p, total),
            board ? liveBoard(board, p.player, view) : live ? h("p", { class: "muted" }, "no board yet") : null,
          );
        }),
      ),
    ),
  );
  tick();
}

function liveBoard(board, player, view) {
  const el = boardElement(board, { mini: true });
  el.dataset.player = player;
  el.dataset.view = view;
  return el;
}

// -- the end: ranking and replays ----------------------------------------------------------------------

function renderEnd() {
  const race = app.race;
  const results = race.results || [];
  const mine = results.find((r) => r.player === session.player);
  const winner = results.find((r) => r.rank === 1);
  const hints = results.some((r) => r.hints);
  const headline = endHeadline(race, mine, winner);
  const root = $("#screen");
  fill(root,
    h(
      "div",
      { class: "end" },
      h(
        "div",
        { class: "card-panel results" },
        h("h1", { id: "headline" }, headline),
        h("p", { class: "settings" }, describeRace(race)),
        h(
          "table",
          { id: "results" },
          h("thead", {}, h("tr", {}, ["#", "player", "result", "time", "runs", "moves", "score", hints ? "hints" : null].map((t) => t && h("th", {}, t)))),
          h(
            "tbody",
            {},
            results.map((r) =>
              h(
                "tr",
                { class: r.player === session.player ? "me" : "", dataset: { player: r.player, rank: String(r.rank), status: r.status } },
                h("td", {}, String(r.rank)),
                h("td", {}, r.name),
                h("td", {}, STATUS_TEXT[r.status] || r.status),
                h("td", {}, r.time === null ? "–" : fmtTime(r.time)),
                h("td", {}, String(r.runs)),
                h("td", {}, String(r.moves)),
                h("td", {}, String(r.score)),
                hints ? h("td", {}, String(r.hints || 0)) : null,
              ),
            ),
          ),
        ),
        h("div", { class: "row" }, h("button", { id: "new-race", type: "button", class: "primary", "data-autofocus": true, onclick: toLobby }, "New race")),
        fairness(race),
      ),
      race.daily
        ? h("div", { class: "card-panel results", id: "end-leaderboard" }, h("h2", {}, "The day's leaderboard"), app.endBoard?.code === race.code && app.endBoard.reply ? leaderboardTable(app.endBoard.reply) : h("p", { class: "muted" }, "Loading…"))
        : null,
      h("div", { class: "card-panel replay", id: "replay" }),
    ),
  );
  if (race.daily) endLeaderboard(race);
  if (!app.replay && race.replays && race.seed) openReplay(results[0]?.player || Object.keys(race.replays)[0]);
  else renderReplay();
}

function endHeadline(race, mine, winner) {
  if (mine && race.daily) {
    return mine.status === "won" ? `You won the daily deal in ${fmtTime(mine.time)}!` : `Daily deal: ${STATUS_TEXT[mine.status] || mine.status}`;
  }
  if (mine) return mine.rank === 1 && mine.status === "won" ? "You won the race!" : `You finished #${mine.rank}`;
  return winner ? `${winner.name} won` : "The race is over";
}

function fairness(race) {
  if (!race.seed || !race.salt || !race.commitment) return null;
  const salt = fromHex(race.salt);
  let ok = false;
  if (salt) {
    const seed = new TextEncoder().encode(race.seed);
    const joined = new Uint8Array(salt.length + seed.length);
    joined.set(salt);
    joined.set(seed, salt.length);
    ok = toHex(sha256(joined)) === race.commitment;
  }
  return h(
    "p",
    { class: `fairness ${ok ? "ok" : "bad"}`, id: "fairness" },
    ok ? "✓ " : "✗ ",
    `Seed ${race.seed}: `,
    ok ? "it matches the commitment announced at the start." : "it does NOT match the commitment announced at the start!",
  );
}

function openReplay(player) {
  const race = app.race;
  const actions = race.replays?.[player];
  if (!actions) return;
  const positions = [];
  let board;
  let error = null;
  try {
    board = Board.deal(race.variant, race.seed);
    positions.push(board.copy());
    for (const a of actions) {
      if (a === "undo") board.pop();
      else if (a !== "resign") board.push(a);
      positions.push(board.copy());
    }
  } catch (e) {
    error = e.message;
  }
  const final = app.boards[player];
  app.replay = { player, actions, positions, index: 0, error, matches: board && !error && final ? board.text() === final : null };
  renderReplay();
}

function renderReplay() {
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
  const board = r.positions[r.index];
  const step = (i) => {
    r.index = Math.max(0, Math.min(r.positions.length - 1, i));
    renderReplay();
  };
  const last = r.positions.length - 1;
  fill(slot,
    h("h2", {}, "Replay"),
    h(
      "div",
      { class: "row tabs", role: "tablist" },
      Object.keys(race.replays || {}).map((p) =>
        h("button", { type: "button", role: "tab", class: p === r.player ? "on" : "", "aria-selected": p === r.player ? "true" : "false", dataset: { player: p }, onclick: () => openReplay(p) }, names[p] || p),
      ),
    ),
    h(
      "div",
      { class: "row controls" },
      h("button", { id: "replay-first", type: "button", title: "first (Home)", onclick: () => step(0) }, "⇤"),
      h("button", { id: "replay-prev", type: "button", title: "back (←)", onclick: () => step(r.index - 1) }, "◀"),
      h("input", { id: "replay-slider", type: "range", min: 0, max: last, value: r.index, "aria-label": "move", oninput: (e) => step(parseInt(e.target.value, 10)) }),
      h("button", { id: "replay-next", type: "button", title: "forward (→)", onclick: () => step(r.index + 1) }, "▶"),
      h("button", { id: "replay-last", type: "button", title: "last (End)", onclick: () => step(last) }, "⇥"),
      h("span", { id: "replay-step", class: "muted" }, r.index === 0 ? `the deal · ${r.actions.length} actions` : `${r.index}/${r.actions.length}: ${r.actions[r.index - 1]}`),
    ),
    r.error ? h("p", { class: "error" }, `This replay could not be played: ${r.error}`) : null,
    r.matches === true ? h("p", { class: "fairness ok", id: "replay-check" }, "✓ Replayed from the seed, it ends on the server's final board.") : null,
    r.matches === false ? h("p", { class: "fairness bad", id: "replay-check" }, "✗ Replayed from the seed, it does not end on the server's final board!") : null,
    board
      ? h(
          "div",
          { class: "replay-board" },
          h("div", { class: "toolbar" }, h("div", { class: "replay-stock" }), h("div", { class: "foundation replay-foundation" })),
          (() => {
            const el = boardElement(board, {});
            el.id = "replay-board";
            el.dataset.position = board.text();
            return el;
          })(),
        )
      : null,
  );
  if (board) {
    renderStock(board, slot.querySelector(".replay-stock"), false);
    renderFoundation(board, slot.querySelector(".replay-foundation"));
    fitColumns(slot.querySelector("#replay-board"), Math.max(window.innerHeight * 0.75, 240));
  }
}

function onReplayKey(e) {
  const r = app.replay;
  const moves = { ArrowLeft: r.index - 1, ArrowRight: r.index + 1, Home: 0, End: r.positions.length - 1 };
  if (!(e.key in moves)) return false;
  r.index = Math.max(0, Math.min(r.positions.length - 1, moves[e.key]));
  renderReplay();
  return true;
}

// -- the clock ----------------------------------------------------------------------------------------

function tick() {
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
}
setInterval(tick, 250);

// -- start --------------------------------------------------------------------------------------------

{
  // coming back to a race (a reload, or its link again): say so until it is rejoined
  const code = routeCode();
  if (code && membership()[code]) fill($("#screen"), h("p", { class: "loading", id: "rejoining" }, `Rejoining race ${code}…`));
  else renderLobby();
}
session.connect();
