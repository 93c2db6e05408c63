// Watching a race: every player's progress live, with their place; with live boards each
// player's board, one of them (or the leader's, followed as the lead changes) at full size.

import { Board, findVariant } from "./rules.js";
import { boardElement, fitColumns, playerCard, renderFoundation, renderStock } from "./boardview.js";
import { $, fill, fmtTime, h } from "./dom.js";
import { app, describeRace } from "./state.js";
import { leader, leaders, newsSince, placeText, standings } from "./standings.js";
import { provide, tick } from "./ui.js";

function parse(view) {
  try {
    return view ? Board.fromText(view) : null;
  } catch {
    return null;
  }
}

/** The player whose board is shown at full size: the one picked, or the leader when
 * followed; null when none (or without live boards). */
function focused(race) {
  if (!race.live_boards || !app.focus) return null;
  if (app.focus === "leader") return leader(race.players);
  return race.players.find((p) => p.player === app.focus) || null;
}

function focus(player) {
  app.focus = player;
  renderWatch();
}

function renderWatch() {
  const race = app.race;
  const v = findVariant(race.variant);
  const total = v.setCount();
  const root = $("#screen");
  const live = race.live_boards;
  const places = standings(race.players);
  const sorted = [...race.players].sort((a, b) => places.get(a.player) - places.get(b.player));
  const big = focused(race);
  const news = newsSince(app.seen, race.players, null, fmtTime);
  app.seen = news.seen;
  if (news.texts.length) app.watchNews = { text: news.texts.join(" "), until: Date.now() + 10000 };
  const notice = app.watchNews && app.watchNews.until > Date.now() ? app.watchNews.text : "";
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
        h("p", { class: `race-notice ${notice ? "on" : ""}`, id: "race-notice", role: "status" }, notice),
      ),
      live
        ? h(
            "div",
            { class: "watch-tools" },
            h("label", { class: "check" }, h("input", { type: "checkbox", id: "follow-leader", checked: app.focus === "leader", onchange: (e) => focus(e.target.checked ? "leader" : null) }), "follow the leader at full size"),
            app.focus && app.focus !== "leader" ? h("button", { type: "button", id: "close-focus", onclick: () => focus(null) }, "Back to every board") : null,
          )
        : null,
      big ? focusBoard(big, places) : null,
      h(
        "div",
        { class: `watch-grid ${live ? "live" : ""}`, id: "watch-grid" },
        sorted.map((p) => {
          const view = app.boards[p.player];
          const board = live ? parse(view) : null;
          return h(
            "div",
            { class: "watch-player", dataset: { player: p.player } },
            playerCard(p, total, race.players.length > 1 ? placeText(places, p.player) : ""),
            board ? liveBoard(board, p.player, view) : live ? h("p", { class: "muted" }, "no board yet") : null,
            board && big?.player !== p.player ? h("button", { type: "button", class: "open-board", dataset: { player: p.player }, onclick: () => focus(p.player) }, "Full size") : null,
          );
        }),
      ),
    ),
  );
  const el = $("#focus-board");
  if (el) fitColumns(el, Math.max(window.innerHeight * 0.8, 300));
  tick();
}

function focusBoard(p, places) {
  const view = app.boards[p.player];
  const board = parse(view);
  if (!board) return h("div", { class: "watch-focus", id: "watch-focus" }, h("h2", {}, p.name), h("p", { class: "muted" }, "no board yet"));
  const el = boardElement(board, {});
  el.id = "focus-board";
  el.dataset.player = p.player;
  el.dataset.view = view;
  const stock = h("div", {});
  const foundation = h("div", { class: "foundation" });
  renderStock(board, stock, false);
  renderFoundation(board, foundation);
  const place = placeText(places, p.player);
  const leads = app.focus === "leader" && leaders(app.race.players).some((x) => x.player === p.player);
  return h(
    "div",
    { class: "watch-focus", id: "watch-focus", dataset: { player: p.player } },
    h("h2", {}, p.name, place ? ` · ${place}` : "", leads ? " · leading" : ""),
    h("div", { class: "toolbar" }, stock, foundation),
    el,
  );
}

function liveBoard(board, player, view) {
  const el = boardElement(board, { mini: true });
  el.dataset.player = player;
  el.dataset.view = view;
  return el;
}

provide("watch", renderWatch);
