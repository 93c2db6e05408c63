// The lobby: the name (or the account), a race created (variant, options, time limit, …) or joined by its
// code, the daily deal's panel, and "Your races": the player's races as the server lists
// them (`my_races`), each with its state and a way to leave it, and the races watched.

import { store } from "./net.js";
import { accountBar } from "./account.js";
import { BASES } from "./rules.js";
import { dailyPanel } from "./daily.js";
import { lobbyPanels } from "./openraces.js";
import { $, fill, h } from "./dom.js";
import { join, takeJoined, takeName } from "./race.js";
import { app, membership, remember, routeCode, session, STATUS_TEXT, TERMINAL } from "./state.js";
import { baseLabel, openHowTo } from "./howto.js";
import { openProfile } from "./profile.js";
import { provide, renderHeader } from "./ui.js";

function variantOptions(base) {
  return BASES[base] || [];
}

let drawnFor = null; // the account the lobby was drawn for ("": a guest)

/** Once welcomed: the lobby drawn again when the page's account changed, else its account
 * line only. */
export function welcomedInLobby() {
  if ((session.account || "") !== drawnFor) renderLobby();
  else $("#account-bar")?.replaceWith(accountBar());
}

function renderLobby() {
  drawnFor = session.account || "";
  app.screen = "lobby";
  document.body.dataset.screen = "lobby";
  renderHeader();
  const root = $("#screen");
  root.className = "screen-lobby";
  const code = routeCode();
  const saved = store.get("lobby", {});
  // a newcomer starts with one suit: the easiest Spider
  const base = saved.base || "spider1";
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
    Object.keys(BASES).map((b) => h("option", { value: b, selected: b === base }, baseLabel(b))),
  );
  const nameInput = h("input", {
    id: "name",
    name: "name",
    maxlength: 24,
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
    h(
      "div",
      { class: "row" },
      h("label", { for: "variant" }, "Variant"),
      baseSelect,
      optionBoxes,
      h("button", { id: "lobby-how-to", type: "button", title: "What each variant and option is", onclick: () => openHowTo($("#variant").value) }, "How to play"),
    ),
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
      h("label", { class: "check", title: "players who say they are bots may watch, not play (an honour rule)" }, h("input", { type: "checkbox", id: "humans-only", name: "humans_only", checked: saved.humans_only ?? false }), "humans only"),
      h("label", { class: "check", title: "the finish moves the players' ratings: for accounts only (not with a chosen seed)" }, h("input", { type: "checkbox", id: "rated", name: "rated", checked: saved.rated ?? false }), "rated"),
      h("label", { class: "check", title: "show it in the lobby's open races until it starts" }, h("input", { type: "checkbox", id: "public", name: "public" }), "list it"),
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
  const mine = myRacesPanel();
  fill(root,
    h(
      "div",
      { class: "lobby" },
      h("div", { class: "card-panel intro" }, h("h1", {}, "Race your friends at Spider"), session.account ? null : h("div", { class: "row" }, h("label", { for: "name" }, "Your name"), nameInput), accountBar()),
      error,
      code ? joinForm : create,
      code ? create : joinForm,
      daily,
      ...lobbyPanels(),
      mine,
      h("div", { class: "row", id: "lobby-players" }, h("button", { id: "my-profile", type: "button", onclick: () => openProfile() }, "Your profile"), h("button", { id: "ratings", type: "button", onclick: () => openProfile() }, "Rating leaderboards")),
      h("p", { class: "hint" }, "Everyone in a race plays the same deal. New to Spider? Start with spider1 and read ", h("a", { href: "#", id: "lobby-rules", onclick: (e) => (e.preventDefault(), openHowTo($("#variant")?.value)) }, "how to play"), ". Keys on the board: ", h("kbd", {}, "?"), " shows them."),
    ),
  );
  (!session.account && !nameInput.value ? nameInput : code ? $("#join") : $("#create")).focus();
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
  const wanted = ["hints", "winnable", "humans_only", "rated", "public"].filter((o) => data.get(o) === "on");
  for (const o of wanted) msg[o] = true;
  store.set("lobby", { base, options, minutes, undo: msg.undo, live_boards: msg.live_boards, hints: wanted.includes("hints"), winnable: wanted.includes("winnable"), humans_only: wanted.includes("humans_only"), rated: wanted.includes("rated"), max_players: msg.max_players, countdown: msg.countdown });
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

const STATE_TEXT = { open: "waiting for players", countdown: "counting down", running: "running", finished: "finished" };

/** The panel of "Your races": filled from the server once the page is welcomed. */
function myRacesPanel() {
  const panel = h("div", { class: "card-panel", id: "my-races", hidden: true }, h("h2", {}, "Your races"));
  session.whenWelcomed().then(() => loadMyRaces(panel));
  return panel;
}

/** A race's line: its code (a link back to it), variant, state, players, and Leave. */
function raceLine(r, reload) {
  const mine = r.role === "player";
  const state = r.preparing && r.state === "open" ? "finding a winnable deal" : STATE_TEXT[r.state] || r.state;
  const over = mine && TERMINAL.has(r.status) && r.state !== "finished" ? ` · you ${STATUS_TEXT[r.status] || r.status}` : "";
  const leave = async () => {
    try {
      if (mine) await session.request({ type: "leave", code: r.code });
    } catch (e) {
      app.lobbyError = `${r.code}: ${e.message}`;
      renderLobby();
      return;
    }
    remember(r.code, null);
    store.set(`pending.${r.code}`, null);
    reload();
  };
  const canLeave = !mine || (r.state !== "finished" && !TERMINAL.has(r.status));
  return h(
    "li",
    { dataset: { code: r.code, state: r.state, role: r.role, counts: r.counts ? "1" : "0" } },
    h("a", { href: `/r/${r.code}`, onclick: (e) => (e.preventDefault(), join(r.code, r.role)) }, r.code),
    r.state ? [" ", h("span", { class: "variant" }, r.variant), " · ", h("span", { class: "race-state" }, state + over), ` · ${r.players} ${r.players === 1 ? "player" : "players"}`] : null,
    mine ? "" : " · watching",
    canLeave ? h("button", { type: "button", class: "leave-race", title: mine ? "leave this race" : "stop watching", onclick: leave }, mine ? "Leave" : "Forget") : null,
  );
}

async function loadMyRaces(panel) {
  let reply;
  try {
    reply = await session.request({ type: "my_races" });
  } catch {
    reply = null; // a server without my_races: the races this browser remembers
  }
  if (!panel.isConnected) return;
  const reload = () => loadMyRaces(panel);
  const local = Object.entries(membership());
  const races = reply ? [...reply.races] : local.map(([code, role]) => ({ code, role, variant: "", state: "", players: 0 }));
  const listed = new Set(races.map((r) => r.code));
  for (const [code, role] of local) {
    if (role === "spectator" && !listed.has(code)) races.push({ code, role, variant: "", state: "", players: 0 });
  }
  const counting = races.filter((r) => r.counts).length;
  fill(
    panel,
    h("h2", {}, "Your races"),
    reply ? h("p", { class: "muted", id: "my-races-count" }, `${counting} of at most ${reply.limit} races at once waiting or running`) : null,
    h("ul", {}, races.map((r) => raceLine(r, reload))),
  );
  panel.hidden = races.length === 0;
}

provide("lobby", renderLobby);
