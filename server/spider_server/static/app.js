// The spider-race page: lobby, race room, board, players' progress, end screen, spectating
// and replays. It speaks docs/protocol.md over /ws through net.js; rules.js gives it the
// legal moves that light a drag's way and the seeded deal for replays, and the server judges
// every move. This module starts it: the screens (each provides its drawing to ui.js), the
// input, the session's handlers, the clock.
//
// state.js    what the page shows, and the session      mirror.js  the race kept from events
// ui.js       screens shown, header, messages, clock    race.js    joining, messages taken in
// lobby.js    daily.js    room.js    game.js    watch.js    end.js    replay.js
// profile.js (profiles, rating leaderboards, the end's ratings and rematch): the screens
// boardview.js  boards drawn     moves.js  which move a click, drop or key makes
// actions.js    moves sent, hints     drag.js   pointer input     keys.js   keyboard input
// words.js      counts, places, moves in words     standings.js  places and news in a race
// panel.js      panels over the page                howto.js      how to play each variant
// account.js    sign up, sign in, the account's panel, the lobby's line of who plays
// passkeys.js   passkeys: sign up and in with one, add, remove     email.js  mailed links
// accountcalls.js  what those share: the /account/... requests, their refusals in words

import { $, fill, h } from "./dom.js";
import { openMailLink } from "./email.js";
import "./daily.js";
import "./end.js";
import "./game.js";
import "./keys.js";
import "./profile.js";
import "./room.js";
import "./watch.js";
import { welcomedInLobby } from "./lobby.js";
import { onMessage, onWelcome, rejoin } from "./race.js";
import { app, membership, routeCode, session } from "./state.js";
import { redraw, say, tick } from "./ui.js";
import { readableReason } from "./words.js";

session.handlers = {
  onWelcome: (welcome) => {
    onWelcome(welcome);
    if (app.screen === "lobby") welcomedInLobby();
  },
  onMessage,
  onStatus: (s) => {
    const el = $("#conn");
    el.textContent = s;
    el.dataset.state = s;
  },
  onActionError: (error) => {
    say(readableReason(error.message || error.error, app.board?.variant), "error");
    redraw("board");
  },
  onResync: () => rejoin(),
  onNameRefused: (reason) => {
    app.lobbyError = `The name ${reason}.`;
    if (app.screen === "lobby") redraw("lobby");
  },
};
window.spiderRace = { app, session }; // for the curious, and for tests

setInterval(tick, 250);
{
  // coming back to a race (a reload, or its link again): say so until it is rejoined
  const code = routeCode();
  if (code && membership()[code]) fill($("#screen"), h("p", { class: "loading", id: "rejoining" }, `Rejoining race ${code}…`));
  else redraw("lobby");
}
openMailLink(); // a link of a mail (an address verified, a password reset), if opened from one
window.addEventListener("hashchange", openMailLink);
session.connect();
