// Players: a profile (races per variant, wins, win rate, best time, streaks, rating and its
// history, the last races with links to their replays and to their records as JSON), the
// rating leaderboards (humans and bots apart), and the end screen's parts about ratings: each player's change and the
// rematch. Names are not unique: a name shared in a list gets the player id's last 4
// characters beside it (`#d0b7`).

import { BASES } from "./rules.js";
import { $, fill, fmtTime, h } from "./dom.js";
import { join } from "./race.js";
import { app, membership, session, STATUS_TEXT } from "./state.js";
import { provide, show } from "./ui.js";

/** The id's short tag. */
export const tag = (player) => String(player || "").slice(-4);

/** `name`, with its tag when another player of `all` ({player, name} each) has it too. */
export function shownName(name, player, all = []) {
  const shared = all.some((o) => o.player !== player && o.name === name);
  return shared ? `${name} #${tag(player)}` : name;
}

/** A player's name as a link to their profile. */
export function profileLink(name, player, all = []) {
  return h("a", { href: "#", class: "profile-link", dataset: { player }, onclick: (e) => (e.preventDefault(), openProfile(player)) }, shownName(name, player, all));
}

/** A rating as shown: the number, with `?` while provisional. */
export const ratingText = (rating, provisional) => `${rating}${provisional ? "?" : ""}`;

/** Show the profile of `who` (a player id, or a name; by default this page's player). */
export async function openProfile(who = null) {
  app.profile = { who, reply: null, error: null };
  show("profile");
  try {
    let reply = await session.request(who ? { type: "profile", player: who } : { type: "profile" });
    if (!reply.found && who) reply = await session.request({ type: "profile", name: who });
    if (app.profile?.who === who) app.profile.reply = reply;
  } catch (e) {
    if (app.profile?.who === who) app.profile.error = e.message;
  }
  if (app.screen === "profile") renderProfile();
}

function renderProfile() {
  const root = $("#screen");
  const state = app.profile || { reply: null };
  const r = state.reply;
  const back = h("button", { id: "profile-back", type: "button", "data-autofocus": true, onclick: () => show("lobby") }, "Back to the lobby");
  let body;
  if (state.error) body = h("p", { class: "error", role: "alert" }, state.error);
  else if (!r) body = h("p", { class: "muted" }, "Loading…");
  else if (!r.found) body = h("p", { class: "muted", id: "profile-empty" }, `No finished race of ${state.who || "yours"} yet.`);
  else body = profileBody(r);
  fill(root, h("div", { class: "profile" }, h("div", { class: "card-panel", id: "profile" }, body, h("div", { class: "row" }, back)), ladderPanel()));
}

function profileBody(r) {
  return [
    h("h1", { id: "profile-name" }, r.name, h("span", { class: "muted" }, ` #${r.tag}`), r.guest ? h("span", { class: "guest-mark" }, " (guest)") : null, r.bot ? h("span", { class: "badge" }, "bot") : null),
    h(
      "table",
      { id: "profile-variants" },
      h("thead", {}, h("tr", {}, ["variant", "races", "won", "win rate", "best time", "streak", "best streak", "rating", "best"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        r.variants.map((v) =>
          h(
            "tr",
            { dataset: { variant: v.variant } },
            h("td", {}, v.variant),
            h("td", { class: "played" }, String(v.played)),
            h("td", {}, String(v.won)),
            h("td", {}, `${Math.round(v.win_rate * 100)}%`),
            h("td", {}, v.best_time === null ? "–" : fmtTime(v.best_time)),
            h("td", {}, String(v.streak)),
            h("td", {}, String(v.best_streak)),
            h("td", { class: "rating" }, v.rated ? ratingText(v.rating, v.provisional) : "–"),
            h("td", {}, v.best_rating ?? "–"),
          ),
        ),
      ),
    ),
    h("h2", {}, "Last races"),
    h(
      "ul",
      { id: "profile-races" },
      r.races.map((line) =>
        h(
          "li",
          { dataset: { code: line.code } },
          h("a", { href: line.replay, onclick: (e) => (e.preventDefault(), join(line.code, membership()[line.code] || "spectator")) }, line.code),
          ` · ${line.variant} · #${line.rank} of ${line.of} · ${STATUS_TEXT[line.status] || line.status}`,
          line.time !== null ? ` in ${fmtTime(line.time)}` : "",
          line.rated ? ` · rating ${line.before} → ${line.after}` : "",
          " · ",
          h("a", { class: "race-download", href: `/races/${encodeURIComponent(line.code)}.json`, download: `spider-race-${line.code}.json`, title: "Download the race (JSON)" }, "JSON"),
        ),
      ),
    ),
  ];
}

// -- the rating leaderboards ------------------------------------------------------------------

function ladderPanel() {
  const saved = app.ladder || { variant: "spider1", pool: "humans", reply: null };
  return h(
    "form",
    { class: "card-panel", id: "ladder-form", onsubmit: (e) => (e.preventDefault(), loadLadder($("#ladder-variant").value, $("#ladder-pool").value)) },
    h("h2", {}, "Rating leaderboard"),
    h(
      "div",
      { class: "row" },
      h("select", { id: "ladder-variant" }, Object.keys(BASES).map((b) => h("option", { value: b, selected: b === saved.variant }, b))),
      h("select", { id: "ladder-pool" }, ["humans", "bots"].map((p) => h("option", { value: p, selected: p === saved.pool }, p))),
      h("button", { id: "ladder-show", type: "submit" }, "Show"),
    ),
    h("div", { id: "ladder-slot" }, saved.reply ? ladderTable(saved.reply) : null),
  );
}

/** Show a variant's rating leaderboard of a pool in the profile screen. */
export async function loadLadder(variant, pool) {
  let reply = null;
  try {
    reply = await session.request({ type: "rating_leaderboard", variant, pool });
  } catch (e) {
    fill($("#ladder-slot"), h("p", { class: "error" }, e.message));
    return;
  }
  app.ladder = { variant, pool, reply };
  const slot = $("#ladder-slot");
  if (slot) fill(slot, ladderTable(reply));
}

function ladderTable(reply) {
  if (!reply.entries.length) return h("p", { class: "muted", id: "rating-ladder" }, `Nobody on the ${reply.pool}' ladder in ${reply.variant} yet: a rating is on it once it is not provisional (about 20 rated races).`);
  const row = (e) =>
    h("tr", { class: e.player === session.player ? "me" : "", dataset: { player: e.player } }, h("td", {}, String(e.rank)), h("td", {}, profileLink(e.name, e.player, reply.entries)), h("td", {}, ratingText(e.rating, e.provisional)));
  const mine = reply.me && !reply.entries.some((e) => e.player === reply.me.player) ? row(reply.me) : null;
  return h("table", { id: "rating-ladder", dataset: { variant: reply.variant, pool: reply.pool } }, h("thead", {}, h("tr", {}, ["#", "player", "rating"].map((t) => h("th", {}, t)))), h("tbody", {}, reply.entries.map(row), mine));
}

// -- the end screen's parts --------------------------------------------------------------------

/** The end screen's rating changes (a rated race): asked again a few times until the server
 * has written the race's results. */
export async function endRatings(race) {
  if (!race.rated || app.endRatings?.code === race.code) return;
  app.endRatings = { code: race.code, reply: null };
  for (let tries = 0; tries < 20; tries++) {
    let reply = null;
    try {
      reply = await session.request({ type: "rating_changes", code: race.code });
    } catch {
      reply = null;
    }
    if (app.endRatings?.code !== race.code) return;
    if (reply?.applied) {
      app.endRatings.reply = reply;
      const slot = $("#rating-changes");
      if (slot) fill(slot, ratingChanges(reply));
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** The slot of the end screen that shows each player's rating change. */
export function ratingSlot(race) {
  if (!race.rated) return null;
  const reply = app.endRatings?.code === race.code ? app.endRatings.reply : null;
  return h("div", { id: "rating-changes" }, reply ? ratingChanges(reply) : h("p", { class: "muted" }, "Ratings…"));
}

function ratingChanges(reply) {
  return h(
    "ul",
    { class: "rating-changes" },
    reply.changes.map((c) => {
      const delta = c.after - c.before;
      return h("li", { dataset: { player: c.player, delta: String(delta) } }, profileLink(c.name, c.player, reply.changes), `: ${c.before} → ${ratingText(c.after, c.provisional)} (${delta >= 0 ? "+" : ""}${delta})`);
    }),
  );
}

/** The end screen's Rematch button and what the offer says. */
export function rematchPart(race) {
  if (race.daily || app.role !== "player") return null;
  const offer = app.rematch && app.rematch.race === race.code ? app.rematch : null;
  const accepted = offer?.accepted || [];
  if (offer?.code && accepted.includes(session.player) && app.rematchJoined !== offer.code) {
    app.rematchJoined = offer.code;
    setTimeout(() => join(offer.code, "player"), 0);
  }
  const mine = accepted.includes(session.player);
  const names = accepted.map((p) => race.players.find((x) => x.player === p)?.name || p);
  return h(
    "div",
    { class: "row", id: "rematch-row" },
    h("button", { id: "rematch", type: "button", disabled: mine, onclick: () => askRematch(race.code) }, mine ? "Waiting for the others…" : "Rematch"),
    accepted.length ? h("span", { class: "muted", id: "rematch-accepted" }, `Rematch: ${names.join(", ")}`) : null,
  );
}

async function askRematch(code) {
  try {
    await session.request({ type: "rematch", code });
  } catch (e) {
    const el = $("#rematch-accepted") || $("#rematch-row");
    if (el) el.append(h("span", { class: "error" }, ` ${e.message}`));
  }
}

provide("profile", renderProfile);
