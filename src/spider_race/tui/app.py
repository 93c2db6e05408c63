"""The terminal UI: play a race, or watch one, against a spider-race server.

:class:`RaceApp` is one textual application for both jobs:

- **play** (``role="player"``): without a code it opens the lobby (create a race with its
  options, join one by code or from the open races, or queue for a quick match); then the
  race screen: your board, everyone's progress, the countdown, the clock, and the results
  at the end.
- **watch** (``role="spectator"``): the race screen without a board of your own: every
  player's progress, and their boards when the race shows them (live-board races, and
  everyone's after the race).

The screens are :class:`~.lobby.LobbyScreen` and :class:`~.race_screen.RaceScreen` (whose
docstring lists its keys); they reach the app through :class:`~.host.RaceHost`.

The app talks to the server through one :class:`~spider_client.Client`; every event
redraws the screen, a timer redraws the clocks. The lobby connects at once and follows the
open races (:meth:`~spider_client.Client.watch_open_races`) until a race is shown; a name
changed in the lobby says hello again with the same token, so that the race knows the
player by the new name.

With ``credentials`` (:class:`~spider_race.credentials.Credentials`, as ``spider-race
play`` gives it) a player keeps their identity: the app says hello with the token stored
for the server's URL, and stores the token of every connection it makes; a token the server
refuses (:class:`~spider_client.BadToken`) is dropped, and the app goes on as a new player,
saying so. Joining a running race the player is in (``play CODE``, or the lobby's
unfinished races, from :meth:`~spider_client.Client.my_races`) then rejoins it as that
player.

``ctrl+c`` quits, as ``ctrl+q`` does. ``q`` on the race screen quits too, but while the
player's game goes on (counting down or running) it asks first (:class:`~.quit.QuitScreen`):
the game goes on without them, and they may come back. The server's refusals are shown by
their message alone (``no race ZZZZZ``), which already says what was refused.
"""

from __future__ import annotations

import asyncio
import getpass
from typing import Any

from textual import work
from textual.app import App
from textual.binding import Binding
from textual.widgets import Static

from spider_client import (
    BadToken,
    Client,
    Disconnected,
    Reconnected,
    SpiderClientError,
    TooManyRaces,
)
from spider_client.protocol import Away, Back, Finished, OpenRace, Role
from spider_client.protocol import Error as ErrorMessage

from ..credentials import Credentials, StoredPlayer
from ..words import error_text
from .lobby import LobbyScreen
from .openraces import OpenRaces
from .race_screen import RaceScreen
from .render import cards_as_shown

__all__ = ["LobbyScreen", "RaceApp", "RaceScreen"]


class RaceApp(App[int]):
    """Play (``role="player"``) or watch (``role="spectator"``) a race at ``url``.

    With ``code`` it joins that race at once; a player without a code gets the lobby, or
    with ``create`` (the options of ``create_race``) creates that race at once. A player
    with ``credentials`` comes back as the player stored there for ``url`` (by default
    under the stored name) and keeps the token of every connection there. The app's return
    value is 0, or 1 when it could not connect."""

    TITLE = "spider-race"
    BINDINGS = [Binding("ctrl+c", "quit", "quit", show=False, priority=True)]

    def __init__(
        self,
        *,
        url: str | list[str],
        name: str | None = None,
        code: str | None = None,
        role: Role = "player",
        create: dict[str, Any] | None = None,
        client_options: dict[str, Any] | None = None,
        credentials: Credentials | None = None,
    ) -> None:
        super().__init__()
        self.url = url
        self.credentials = credentials if role == "player" else None
        self.stored: StoredPlayer | None = self._stored()
        """The player stored for ``url`` when the app started (None: a new player)."""
        stored_name = self.stored.name if self.stored is not None else None
        self.player_name = name or stored_name or _default_name()
        self.code = code
        self.role = role
        self.create_options = create
        self.client_options = client_options or {}
        self.client: Client | None = None
        self._hello_name = ""
        """The name the client said hello with."""
        self._connecting = asyncio.Lock()
        self.queued = False
        """Whether the player may be in a quick-match queue (asked, not yet matched)."""
        self.race_screen: RaceScreen | None = None
        self.exit_message = ""
        """Why the app gave up, or how to come back to the game it left (printed once it has
        left the terminal), or empty."""
        self.identity_note = ""
        """Why the stored player was not used (its token refused), or empty."""

    @property
    def server_key(self) -> str:
        """The server's URL as the credentials file knows it."""
        return self.url if isinstance(self.url, str) else " ".join(self.url)

    def _stored(self) -> StoredPlayer | None:
        if self.credentials is None:
            return None
        return self.credentials.get(self.server_key)

    async def on_mount(self) -> None:
        if self.code is not None:
            self.start(code=self.code)
        elif self.create_options is not None:
            self.start(create=self.create_options)
        else:
            await self.push_screen(LobbyScreen(name=self.player_name))
            self.follow_open_races()
            self.show_unfinished()

    @work(exclusive=True, group="connect")
    async def start(
        self,
        *,
        code: str | None = None,
        create: dict[str, Any] | None = None,
        quick: dict[str, Any] | None = None,
    ) -> None:
        """Connect, then create or join the race (or queue for a quick match of
        ``quick``'s variant until the server made one), and show it."""
        try:
            client = await self._connected()
            if self.queued and quick is None:
                await self._leave_queue(client)
            if create is not None:
                self.code = await client.create_race(**create)
            elif quick is not None:
                self.queued = True
                self.code = await client.quick_match(**quick)
                self.queued = False
            else:
                assert code is not None
                await client.join(code, self.role)
                self.code = code
        except (SpiderClientError, OSError, TimeoutError) as e:
            what = "create the race" if create else "quick match" if quick else "join"
            why = f"could not {what}: {error_text(e)}"
            self.queued = False
            if isinstance(self.screen, LobbyScreen):
                self.screen.matching(None)
                self.notify(why, severity="error")
                self.screen.query_one("#lobby-message", Static).update(why)
                if isinstance(e, TooManyRaces):
                    self.list_races()
                return
            self.exit_message = f"spider-race: {why}"
            self.exit(1, message=self.exit_message)
            return
        self.workers.cancel_group(self, "lobby")
        self.workers.cancel_group(self, "unfinished")
        self.race_screen = RaceScreen()
        await self.push_screen(self.race_screen)
        if self.identity_note:
            self.race_screen.say(self.identity_note)
        self.follow()

    async def _connected(self) -> Client:
        """The client, connected first when it is not yet; a player whose name changed
        since says hello again, with the same token (the lobby's following starts again)."""
        async with self._connecting:
            client = self.client
            if client is not None and (
                self.role != "player" or self.player_name == self._hello_name
            ):
                return client
            options = dict(self.client_options)
            if client is not None:
                self.workers.cancel_group(self, "lobby")
                options["token"] = client.token
                self.client = None
                await client.close()
            elif self.stored is not None and "token" not in options:
                options["token"] = self.stored.token
            name = self.player_name  # a spectator is shown as one by the race, not its name
            try:
                self.client = await Client.connect(self.url, name=name, **options)
            except BadToken as e:
                if self.stored is None or options.get("token") != self.stored.token:
                    raise
                self._forget_stored(e)
                del options["token"]
                self.client = await Client.connect(self.url, name=name, **options)
            self._hello_name = self.player_name
            self._store(self.client)
            if client is not None and isinstance(self.screen, LobbyScreen):
                self.follow_open_races()
            return self.client

    def _forget_stored(self, refusal: BadToken) -> None:
        """Drop the stored player whose token the server refused, and say so."""
        self.stored = None
        self.identity_note = (
            f"the server refused your stored player ({error_text(refusal)}): "
            "you play as a new player now"
        )
        try:
            if self.credentials is not None:
                self.credentials.drop(self.server_key)
        except OSError as e:
            self.identity_note += f" (the credentials file: {e})"
        self.notify(self.identity_note, severity="warning", timeout=10)
        if isinstance(self.screen, LobbyScreen):
            self.screen.query_one("#lobby-message", Static).update(self.identity_note)

    def _store(self, client: Client) -> None:
        """Keep the player's token for the server's URL (with their id and name)."""
        if self.credentials is None or client.token is None:
            return
        try:
            self.credentials.put(
                self.server_key, token=client.token, player=client.player, name=client.name
            )
        except OSError as e:
            self.notify(f"could not store your player: {e}", severity="warning", timeout=10)
            return
        self.stored = self.credentials.get(self.server_key)

    @work(exclusive=True, group="lobby", exit_on_error=False)
    async def follow_open_races(self) -> None:
        """Keep the lobby's open races from the client's subscription to them, by the
        changes it yields (each race listed now, then each change)."""
        client: Client | None = None
        races: dict[str, OpenRace] = {}
        try:
            client = await self._connected()
            self._show_open_races(races, client.player)
            async for change in client.watch_open_races():
                if change.race is None:
                    races.pop(change.code, None)
                else:
                    races[change.code] = change.race
                self._show_open_races(races, client.player)
        except (SpiderClientError, OSError, TimeoutError) as e:
            if isinstance(self.screen, LobbyScreen) and self.client is client:
                self.screen.query_one(OpenRaces).unavailable(error_text(e))

    def _show_open_races(self, races: dict[str, OpenRace], me: str | None) -> None:
        if isinstance(self.screen, LobbyScreen):
            self.screen.show_open_races(list(races.values()), me)

    @work(group="match")
    async def cancel_match(self) -> None:
        """Stop waiting for a quick match and leave the queue."""
        self.workers.cancel_group(self, "connect")
        if self.client is not None and self.queued:
            try:
                await self._leave_queue(self.client)
            except (SpiderClientError, OSError, TimeoutError) as e:
                if isinstance(self.screen, LobbyScreen):
                    self.screen.query_one("#lobby-message", Static).update(error_text(e))

    @work(exclusive=True, group="unfinished", exit_on_error=False)
    async def show_unfinished(self) -> None:
        """Show the player's unfinished races in the lobby, to rejoin (nothing when the
        server cannot be reached: the open races say so)."""
        try:
            client = await self._connected()
            races = await client.my_races()
        except (SpiderClientError, OSError, TimeoutError):
            return
        if isinstance(self.screen, LobbyScreen):
            self.screen.show_unfinished(races)

    @work(exclusive=True, group="races")
    async def list_races(self, *, leave: str | None = None) -> None:
        """Show the player's races in the lobby, after leaving the race ``leave`` if given."""
        try:
            client = await self._connected()
            if leave:
                await client.leave(leave)
            races = await client.my_races()
        except (SpiderClientError, OSError, TimeoutError) as e:
            if isinstance(self.screen, LobbyScreen):
                self.screen.show_races([], error_text(e))
            return
        if isinstance(self.screen, LobbyScreen):
            self.screen.show_races(races, f"you left {leave.upper()}" if leave else "")

    @work(group="events")
    async def follow(self) -> None:
        """Redraw on every event the client yields."""
        client = self.client
        assert client is not None
        async for event in client.events():
            screen = self.race_screen
            if screen is None:
                continue
            if isinstance(event, Disconnected):
                screen.say(
                    "connection lost: " + ("reconnecting…" if event.reconnecting else event.reason)
                )
            elif isinstance(event, Reconnected):
                screen.say(f"reconnected to {event.node}")
            elif isinstance(event, ErrorMessage):
                screen.say(event.message or event.error)
            elif isinstance(event, Finished):
                screen.say("the race is over")
            elif isinstance(event, Away | Back):
                screen.say(_presence_line(client, event))
            screen.redraw()

    @work(group="actions")
    async def act(self, what: str, **kwargs: Any) -> None:
        """Send one action (``move``, ``undo``, ``resign``) or ``ready``; show the server's
        refusal, if any, on the message line."""
        client = self.client
        screen = self.race_screen
        if client is None or screen is None:
            return
        try:
            if what == "move":
                await client.move(kwargs["move"])
            elif what == "undo":
                await client.undo()
            elif what == "resign":
                await client.resign()
            elif what == "ready":
                await client.ready(kwargs.get("ready", True))
        except SpiderClientError as e:
            view = client.view
            screen.say(cards_as_shown(view, error_text(e)) if view is not None else error_text(e))
        screen.redraw()

    async def _leave_queue(self, client: Client) -> None:
        await client.cancel_match()
        self.queued = False

    async def quit_app(self, message: str = "") -> None:
        """Close the connection and leave (``message``: printed once the app has left the
        terminal)."""
        if self.client is not None:
            await self.client.close()
        self.exit_message = message or self.exit_message
        self.exit(0, message=message or None)

    def come_back(self, code: str) -> str:
        """The command that comes back to race ``code`` as this player, or empty when
        the app keeps no credentials (the player cannot come back)."""
        if self.credentials is None:
            return ""
        from ..credentials import DEFAULT_URL, default_path

        command = f"spider-race play {code}"
        if self.server_key != DEFAULT_URL:
            command += f" --url {self.server_key}"
        if self.credentials.path != default_path():
            command += f" --credentials {self.credentials.path}"
        return command

    async def action_quit(self) -> None:
        """``ctrl+c`` and ``ctrl+q``: close the connection and leave."""
        await self.quit_app()

    async def on_unmount(self) -> None:
        if self.client is not None:
            await self.client.close()


def _default_name() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "player"


def _presence_line(client: Client, event: Away | Back) -> str:
    """The message line for a player away or back."""
    race = client.race
    name = next(
        (i.name for i in (race.players if race else []) if i.player == event.player), "a player"
    )
    grace = race.away_grace if race else 0
    if isinstance(event, Away):
        return f"{name} is away (out as abandoned after {grace} s away in all)"
    line = f"{name} is back after {event.away:.0f} s away"
    if event.total is not None:
        line += f" ({event.total:.0f} of {grace} s away spent)"
    return line
