// Watching a race: every player's progress live, and with live boards each player's board.

import { Board, findVariant } from "./rules.js";
import { boardElement, playerCard } from "./boardview.js";
import { $, fill, h } from "./dom.js";
import { app, describeRace } from "./state.js";
import { provide, tick } from "./ui.js";

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

provide("watch", renderWatch);
