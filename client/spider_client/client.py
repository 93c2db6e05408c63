"""The asyncio client: one connection to a spider-race server, one race at a time.

::

    client = await Client.connect("ws://127.0.0.1:8765/ws", name="ada")
    code = await client.create_race(variant="spider1")   # or: await client.join(code)
    await client.ready()
    await client.wait_until(lambda c: c.view is not None)  # the deal is out
    ack = await client.move("d1j")                          # waits for the server's ack
    async for event in client.events(): ...

Behaviour:

- **Bots**: ``Client.connect(url, bot=True)`` says in its hello that a program plays (the
  server marks the player as a bot in every list of players, result and leaderboard, and
  races created ``humans_only`` refuse it with :class:`~spider_client.errors.HumansOnly`).
  The flag is declared, not detected: a program that plays says so, as an honour rule.
- **Requests** (``create_race``, ``join``, ``ready``, ``leave``, ``my_races``, ``profile``,
  ``rating_changes``, ``rating_leaderboard``, ``rematch``) carry a request id and
  wait for their reply; an ``error`` reply raises the :mod:`~spider_client.errors` class of
  its code.
- **Actions** (``move``, ``deal``, ``undo``, ``resign``) carry the player's next ``seq``
  and wait for their ``ack``; one action is in flight at a time (concurrent calls queue up).
  An action is kept until it is acked or refused, and sent again after a reconnect and
  whenever no answer has come for ``resend_after`` seconds; the server applies each ``seq``
  once and answers a resend with the same ack again. Should that ack be another action's
  (the seq was used by another connection of the same player), the action is sent again
  as the next seq.
- **Rate**: when the server says ``rate_limited`` (it then drops frames for a while), the
  client pauses ``rate_limit_pause`` seconds, doubles ``send_interval`` (the time it keeps
  between frames), and sends again whatever waits for an answer.
- **The view**: ``client.view`` is the player's position (an engine
  :class:`~spider_engine.Board` with unknown cards), replaced by the view of every ack and
  of every ``joined`` reply, so after each it formats to exactly the server's view of the
  player. When the race starts, the client asks for its view by itself (a rejoin).
- **The race**: ``client.race`` is a :class:`~spider_client.protocol.RaceInfo` kept up to
  date from the race's events (players' progress, state, countdown, results).
- **Reconnects**: when the connection drops (anything but :meth:`close`), the client emits
  :class:`~spider_client.events.Disconnected`, then tries the URLs in turn with exponential
  backoff and jitter, says ``hello`` with its token (the same player), rejoins its race
  with ``since`` = the last event version it saw (the missed events are applied and
  yielded), sends again the action and the repeatable requests still waiting, and emits
  :class:`~spider_client.events.Reconnected`. A ``create_race`` caught by a drop fails with
  :class:`~spider_client.errors.RequestInterrupted` (it may have happened). After
  ``reconnect_timeout`` seconds without success (or when the server refuses the token) it
  gives up: everything waiting fails with :class:`~spider_client.errors.ConnectionLost`
  and :meth:`events` ends.
- **Race affinity** (``affinity=True``, the default): every URL opened while following a
  race carries ``?race=CODE``, and after ``create_race``, ``daily_race``, ``join``,
  ``quick_match`` and ``rematch`` the client moves to that URL (a new connection, hello
  with the token, a rejoin from the last version seen, then the old connection is
  closed), so that a load balancer hashing on ``race`` puts a race's members on one node
  (deploy/README.md). The move tells no event; :attr:`moves` counts them. A failed move
  leaves the client where it was.

The parts, each a plain object that :class:`Client` makes and wires in its constructor
(no part calls another it was not given): :mod:`~spider_client.mirror` keeps the race and
the view from what the server sends, without I/O (``client.mirror``; ``client.race``,
``client.view`` and the like read it); :mod:`~spider_client.outbox` holds what waits for an
answer and paces the sending; :mod:`~spider_client.connection` reads, reconnects and
resumes, handing every message to the client; :mod:`~spider_client.affinity` moves the
connection to the race's URL; :mod:`~spider_client.feed` keeps the events for
:meth:`Client.events` and wakes :meth:`Client.wait_until`; :mod:`~spider_client.lobby`
keeps the open races and the last match; :mod:`~spider_client._wire` is the only code
below websockets' public API. This module is the API on top, and routes each message to
the parts it concerns.
"""

from __future__ import annotations

import asyncio
import contextlib
import typing
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal, TypeGuard

from websockets.asyncio.client import ClientConnection

from spider_engine import Board

from . import protocol as p
from .affinity import Affinity
from .connection import Connection
from .errors import NotInRace, SpiderClientError
from .events import Event
from .feed import EventFeed
from .lobby import LobbyFeed
from .mirror import RaceMirror
from .options import ClientOptions
from .outbox import ActionMessage, Outbox

__all__ = ["Client"]

_REPLIES = (
    p.Joined,
    p.Done,
    p.HintReply,
    p.LeaderboardReply,
    p.MyRacesReply,
    p.OpenRaceList,
    p.Queued,
    p.ProfileReply,
    p.RatingChangesReply,
    p.RatingLeaderboardReply,
)
"""The replies that answer a request by its ``req``."""

_STATUSES = frozenset(typing.get_args(p.PlayerStatus))


def _known_status(status: str | None) -> TypeGuard[p.PlayerStatus]:
    return status in _STATUSES


class Client:
    """A connection to a spider-race server, speaking for one player (see the module's
    docstring for the behaviour). Make one with :meth:`connect`; close it with
    :meth:`close` or ``async with``. The race state below is :attr:`mirror`'s."""

    def __init__(self, urls: str | Sequence[str], options: ClientOptions | None = None) -> None:
        """A client of the server at ``urls`` (one, or several tried in turn), not connected
        yet: :meth:`connect` makes one and connects it."""
        options = ClientOptions() if options is None else options
        self.options = options
        """How this client connects, speaks and paces itself."""
        self.mirror = RaceMirror()
        """The race and the player's view, kept from what the server sends."""
        self.lobby = LobbyFeed()
        """The open races as followed and the last quick match made."""
        self._feed: EventFeed[Event] = EventFeed(options.max_unread)
        self._outbox = Outbox(
            self._websocket,
            resend_after=options.resend_after,
            rate_limit_pause=options.rate_limit_pause,
        )
        self._connection = Connection(
            urls,
            options,
            mirror=self.mirror,
            outbox=self._outbox,
            feed=self._feed,
            receive=self._receive,
        )
        self._affinity = Affinity(self._connection, self.mirror, self._outbox)
        self._tasks: set[asyncio.Task[None]] = set()

    @classmethod
    async def connect(
        cls,
        url: str | Sequence[str],
        *,
        name: str | None = None,
        token: str | None = None,
        bot: bool = False,
        request_timeout: float | None = 30.0,
        reconnect_timeout: float | None = 60.0,
        affinity: bool = True,
        open_timeout: float = 10.0,
        resend_after: float = 5.0,
        rate_limit_pause: float = 1.0,
        backoff_initial: float = 0.05,
        backoff_max: float = 2.0,
        max_unread: int = 10_000,
    ) -> Client:
        """Connect to the first URL that answers (trying each once), say ``hello`` with
        ``name`` (a new player) or ``token`` (resume that player), and ``bot`` when a
        program plays, and start reading. The other options are
        :class:`~spider_client.options.ClientOptions`' (each told there).
        Raises :class:`ConnectFailed` when none answers, :class:`BadToken` for a token the
        server refuses."""
        options = ClientOptions(
            name=name,
            token=token,
            bot=bot,
            request_timeout=request_timeout,
            reconnect_timeout=reconnect_timeout,
            affinity=affinity,
            open_timeout=open_timeout,
            resend_after=resend_after,
            rate_limit_pause=rate_limit_pause,
            backoff_initial=backoff_initial,
            backoff_max=backoff_max,
            max_unread=max_unread,
        )
        return await cls.open(url, options)

    @classmethod
    async def open(cls, url: str | Sequence[str], options: ClientOptions) -> Client:
        """:meth:`connect` with the options held in one object."""
        client = cls(url, options)
        await client._connection.open_first()
        return client

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the connection for good: nothing reconnects, everything waiting fails with
        :class:`ConnectionLost`, and :meth:`events` ends. Idempotent."""
        for task in list(self._tasks):
            task.cancel()
        await self._connection.close()

    # -- the connection ---------------------------------------------------------------------

    @property
    def name(self) -> str | None:
        """The player's name (as the welcome gave it)."""
        return self._connection.name

    @property
    def token(self) -> str | None:
        """The session token: keep it to come back as the same player (``token=``)."""
        return self._connection.token

    @property
    def bot(self) -> bool:
        """Whether the hello said that a program plays."""
        return self.options.bot

    @property
    def player(self) -> str | None:
        """The player id the server gave this client."""
        return self.mirror.player

    @property
    def node(self) -> str | None:
        """The server node the connection is on."""
        return self._connection.node

    @property
    def url(self) -> str | None:
        """The URL of the connection now (with ``?race=CODE`` once it moved there)."""
        return self._connection.url

    @property
    def connected(self) -> bool:
        """Whether a connection is up (False while reconnecting, and once given up)."""
        return self._connection.connected

    @property
    def reconnects(self) -> int:
        """Times the connection dropped and was made again."""
        return self._connection.reconnects

    @property
    def moves(self) -> int:
        """Times the client moved to its race's URL (not counted in :attr:`reconnects`)."""
        return self._affinity.moves

    @property
    def send_interval(self) -> float:
        """Seconds kept between two frames sent; 0 at first, it grows each time the server
        says ``rate_limited``."""
        return self._outbox.send_interval

    @property
    def dropped_events(self) -> int:
        """Events that gave way unread (a client that never reads its events keeps only
        the last ``max_unread``)."""
        return self._feed.dropped

    @property
    def matched(self) -> p.Matched | None:
        """The last ``matched`` message (the race a quick match made)."""
        return self.lobby.matched

    @property
    def listed(self) -> dict[str, p.OpenRace]:
        """The open races as followed by :meth:`watch_open_races`, by code."""
        return self.lobby.listed

    def server_now(self) -> float:
        """The server's clock now (seconds since the epoch), as estimated at the welcome."""
        return self._connection.server_now()

    # -- what comes in ----------------------------------------------------------------------

    async def wait_until(
        self, predicate: Callable[[Client], bool], *, timeout: float | None = None
    ) -> None:
        """Wait until ``predicate(client)`` holds; it is checked now and after every frame
        the client takes in. Raises :class:`ConnectionLost` if the client gives up (or is
        closed) first, :class:`TimeoutError` after ``timeout`` seconds (None: no bound)."""
        await self._feed.wait_until(lambda: predicate(self), timeout=timeout)

    def events(self) -> AsyncIterator[Event]:
        """Yield every race event, ack and unanswered error in the order they arrive, and
        the client's own :mod:`~spider_client.events` (connection, view). Events are kept
        from the moment of connecting, so none is lost before iterating; a client that
        never iterates keeps only the last ``max_unread`` (10,000 by default; the count of
        the others is :attr:`dropped_events`). Ends when the client is closed or gives up
        reconnecting. One consumer at a time."""
        return aiter(self._feed)

    def _receive(self, message: Any) -> None:
        """One message from the server: first what it changes in the race and the view
        (the events it gives are queued), then the request or action it answers."""
        taken = self.mirror.take(message)
        for event in taken:
            self._feed.emit(event)
        outbox = self._outbox
        if isinstance(message, p.Ack):
            outbox.take_ack(message)
        elif isinstance(message, _REPLIES):
            outbox.resolve(message.req, message)
        elif isinstance(message, p.Matched | p.OpenRaceChanged):
            self.lobby.take(message)
            if isinstance(message, p.Matched):
                self._feed.emit(message)
        elif isinstance(message, p.Error):
            if not outbox.take_error(message):
                self._feed.emit(message)
        elif (
            isinstance(message, p.Started)
            and taken
            and self.mirror.role == "player"
            and self.mirror.view_text is None
        ):
            self._spawn(self._fetch_view())

    async def _fetch_view(self) -> None:
        """The server sends each player the deal (an ack with seq 0); ask for it by
        rejoining if it has not come soon."""
        mirror = self.mirror
        with contextlib.suppress(SpiderClientError, TimeoutError):
            with contextlib.suppress(TimeoutError):
                await self.wait_until(
                    lambda c: c.mirror.view is not None, timeout=self.options.resend_after / 5
                )
            if mirror.view is None and mirror.code is not None and mirror.role is not None:
                await self.join(mirror.code, mirror.role)

    def _spawn(self, coro: typing.Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _websocket(self) -> ClientConnection | None:
        """The connection the outbox sends on (None while there is none)."""
        return self._connection.ws

    # -- asking -----------------------------------------------------------------------------

    async def _request(self, make: Callable[[int], Any], *, repeatable: bool = True) -> Any:
        timeout = self.options.request_timeout
        return await self._outbox.request(make, repeatable=repeatable, timeout=timeout)

    async def _act(self, make: Callable[[int], ActionMessage]) -> p.Ack:
        """Send the action ``make(seq)`` builds with the player's next ``seq``."""
        return await self._outbox.act(lambda: make(self.mirror.seq + 1))

    # -- the race as seen from here --------------------------------------------------------

    @property
    def code(self) -> str | None:
        """The join code of the race this client is in."""
        return self.mirror.code

    @property
    def role(self) -> p.Role | None:
        """``player`` or ``spectator`` in that race."""
        return self.mirror.role

    @property
    def race(self) -> p.RaceInfo | None:
        """The race as everyone may see it, kept up to date from its events."""
        return self.mirror.race

    @property
    def seq(self) -> int:
        """The player's last applied action number."""
        return self.mirror.seq

    @property
    def version(self) -> int:
        """The last race event version seen."""
        return self.mirror.version

    @property
    def boards(self) -> dict[str, str]:
        """Player id -> view text, for spectators of live-board races; after the race,
        every player's final full position."""
        return self.mirror.boards

    @property
    def view(self) -> Board | None:
        """The player's view of their game (None before the deal, and for spectators): the
        view of the last ack or ``joined`` reply, read into a board when first asked for.
        Copy it before changing it."""
        return self.mirror.view

    @property
    def me(self) -> p.PlayerInfo | None:
        """This player's public progress in the race (None for a spectator)."""
        return self.mirror.me

    @property
    def status(self) -> p.PlayerStatus | None:
        """This player's status: waiting, playing, won, stuck, resigned, timeout, left,
        abandoned (None for a spectator, and for a status this client does not know)."""
        status = self.mirror.status
        return status if _known_status(status) else None

    @property
    def finished(self) -> bool:
        """Whether the race is over (results are in ``race.results``)."""
        return self.mirror.finished

    @property
    def result(self) -> p.Result | None:
        """This player's line in the finished race's ranking (None before the finish, and
        for a spectator)."""
        race = self.mirror.race
        if race is None or race.results is None:
            return None
        return next((r for r in race.results if r.player == self.player), None)

    def legal_moves(self) -> list[str]:
        """The legal moves of the player's view, sorted as the spec prints them."""
        return self.mirror.legal_moves()

    # -- requests ---------------------------------------------------------------------------

    async def create_race(
        self,
        *,
        variant: str = "spider4",
        seed: str | None = None,
        max_players: int = 8,
        time_limit: int = 1800,
        undo: bool = True,
        countdown: int = 3,
        live_boards: bool = False,
        winnable: bool = False,
        hints: bool = False,
        away_grace: int | None = None,
        humans_only: bool = False,
        rated: bool = False,
        public: bool = False,
        ghosts: list[dict[str, str]] | None = None,
    ) -> str:
        """Create a race, join it as a player, and return its join code. The options are
        :class:`~spider_client.protocol.CreateRace`'s (each told there): the variant, a
        ``seed`` to deal (by default a secret random one), the most players, the time limit
        in seconds, whether undo is allowed, the countdown's seconds, the players' boards
        shown live to spectators, a deal proved winnable, hints, the seconds a player may be
        away, humans only, rated, listed in the lobby. ``ghosts=[{"race": CODE, "player":
        PLAYER_ID}]`` races recorded runs of finished races on their deal. Not repeated
        after a drop (:class:`RequestInterrupted`); refused with the error of its code
        (:class:`BadRequest` for an option out of range, :class:`TooManyRaces`, …)."""

        def make(req: int) -> p.CreateRace:
            return p.CreateRace(
                req=req,
                variant=variant,
                seed=seed,
                max_players=max_players,
                time_limit=time_limit,
                undo=undo,
                countdown=countdown,
                live_boards=live_boards,
                winnable=winnable,
                hints=hints,
                away_grace=away_grace,
                humans_only=humans_only,
                rated=rated,
                public=public,
                ghosts=ghosts,
            )

        reply = await self._request(make, repeatable=False)
        code: str = reply.race.code if isinstance(reply, p.Joined) else reply.code
        if self.code != code:
            await self.join(code)
        else:
            await self._affinity.follow()
        return code

    async def daily_race(
        self, variant: str = "spider4", ghosts: list[dict[str, str]] | None = None
    ) -> str:
        """Join (or rejoin) this player's race on the day's deal of ``variant`` and return
        its join code; mark ready to start it. ``ghosts`` (``{"race": CODE, "player":
        PLAYER_ID}``, as the leaderboard's entries name them) are the day's runs to race,
        when the race is made."""
        reply = await self._request(
            lambda req: p.DailyRace(req=req, variant=variant, ghosts=ghosts)
        )
        code: str = reply.race.code
        if self.code != code:
            await self.join(code)
        else:
            await self._affinity.follow()
        return code

    async def leaderboard(
        self, variant: str = "spider4", day: str | None = None
    ) -> list[p.LeaderboardEntry]:
        """The leaderboard of a variant's daily deal on ``day`` (by default today, UTC)."""
        reply: p.LeaderboardReply = await self._request(
            lambda req: p.Leaderboard(req=req, variant=variant, day=day)
        )
        return reply.entries

    # -- players: profiles, ratings, ladders, the rematch -------------------------------------

    async def profile(self, player_or_name: str | None = None) -> p.ProfileReply:
        """A player's profile: races per variant, wins, win rate, best time, streaks,
        rating (and its history), and the last races with their replays' links. By default
        this player's; else the player of that id, or of that name (the one who finished a
        race last: names are not unique). ``found`` is false for a player without a
        finished race."""
        if player_or_name is None:
            make = lambda req: p.Profile(req=req)  # noqa: E731
        else:
            make = lambda req: p.Profile(req=req, player=player_or_name)  # noqa: E731
        reply: p.ProfileReply = await self._request(make)
        if not reply.found and player_or_name is not None:
            reply = await self._request(lambda req: p.Profile(req=req, name=player_or_name))
        return reply

    async def rating_changes(
        self, code: str | None = None, *, timeout: float = 10.0
    ) -> p.RatingChangesReply:
        """The rating changes of finished race ``code`` (by default this client's race),
        asked again until they are written (within ``timeout`` seconds; then the last
        reply, ``applied`` false)."""
        race = code or self._require_race()
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            reply: p.RatingChangesReply = await self._request(
                lambda req: p.RatingChanges(req=req, code=race)
            )
            if reply.applied or loop.time() >= end:
                return reply
            await asyncio.sleep(0.1)

    async def rating_leaderboard(
        self, variant: str = "spider1", pool: Literal["humans", "bots"] = "humans"
    ) -> p.RatingLeaderboardReply:
        """A variant's rating ladder (``humans`` or ``bots``): the top 100, best first, and
        this player's own line (``me``)."""
        reply: p.RatingLeaderboardReply = await self._request(
            lambda req: p.RatingLeaderboard(req=req, variant=variant, pool=pool)
        )
        return reply

    async def rematch(self, *, timeout: float | None = 60.0) -> str:
        """Accept the rematch of the finished race this client is in, wait until it is made
        (every player accepted, or the offer's wait ran out with two or more), join the new
        race (as a player, ready: its countdown runs) and return its join code. Raises
        TimeoutError when it is not made within ``timeout`` seconds (for example, nobody
        else accepted)."""
        code = self._require_player()
        await self._request(lambda req: p.Rematch(req=req, code=code))

        def made(client: Client) -> bool:
            offer = client.mirror.rematch
            return offer is not None and offer.race == code and offer.code is not None

        await self.wait_until(made, timeout=timeout)
        assert self.mirror.rematch is not None and self.mirror.rematch.code is not None
        new = self.mirror.rematch.code
        await self.join(new)
        return new

    async def join(self, code: str, role: p.Role = "player") -> p.Joined:
        """Join the race ``code`` as ``player`` or ``spectator`` (again: resume, caught up
        from the last version seen) and return the reply. The client then follows that
        race; ``client.race`` and, for a player of a running race, ``client.view`` are set.
        Raises :class:`NotFound`, :class:`RaceFull`, :class:`WrongState` (a race that
        started, for a new player), :class:`TooManyRaces`, :class:`HumansOnly`, …"""
        mirror = self.mirror
        since = mirror.version if code == mirror.code and role == mirror.role else None
        reply: p.Joined = await self._request(
            lambda req: p.Join(req=req, code=code, role=role, since=since)
        )
        await self._affinity.follow()
        return reply

    async def refresh(self) -> p.Joined:
        """Rejoin the current race (caught up since the last version; a player gets their
        view and last seq again)."""
        if self.code is None or self.role is None:
            raise NotInRace("join a race first")
        return await self.join(self.code, self.role)

    async def ready(self, ready: bool = True) -> None:
        """Mark this player ready (or not ready); when all are, the countdown starts."""
        code = self._require_race()
        await self._request(lambda req: p.Ready(req=req, code=code, ready=ready))

    async def leave(self, code: str | None = None) -> None:
        """Leave the race ``code`` (by default the race this client follows): a race not
        started yet frees the player's place at once; a running game ends as ``left``.
        Leaving the race followed, the client then follows no race."""
        code = self._require_race() if code is None else code.strip().upper()
        await self._request(lambda req: p.Leave(req=req, code=code))
        if code == self.code:
            self.mirror.forget_race()

    async def my_races(self) -> list[p.MyRace]:
        """This player's races, newest first (each with its code, variant, state, role,
        players count, the player's status, and whether it counts towards the limit of
        races at once), then the races this connection watches."""
        reply: p.MyRacesReply = await self._request(lambda req: p.MyRaces(req=req))
        return reply.races

    # -- actions ----------------------------------------------------------------------------

    async def move(self, move: str) -> p.Ack:
        """Play ``move`` (spec notation, ``+`` deals) and return its ack; the view is
        updated before this returns. Raises :class:`IllegalMove`, :class:`MalformedMove`,
        :class:`GameOver`, :class:`WrongState`, … when the server refuses it."""
        code = self._require_player()
        return await self._act(lambda seq: p.MoveAction(code=code, seq=seq, move=move))

    async def deal(self) -> p.Ack:
        """Deal from the stock (the move ``+``)."""
        return await self.move("+")

    async def undo(self) -> p.Ack:
        """Take back the last move or deal (when the race allows undo:
        :class:`UndoNotAllowed` otherwise)."""
        code = self._require_player()
        return await self._act(lambda seq: p.Undo(code=code, seq=seq))

    async def resign(self) -> p.Ack:
        """Give up this game (the race goes on for the others)."""
        code = self._require_player()
        return await self._act(lambda seq: p.Resign(code=code, seq=seq))

    async def hint(self) -> str | None:
        """Ask for a hint (races created with ``hints``; :class:`HintsNotAllowed`
        otherwise): a move in the spec's notation, or None when there is none. Each hint is
        counted in the results."""
        code = self._require_player()
        reply: p.HintReply = await self._request(lambda req: p.Hint(req=req, code=code))
        return reply.move

    async def hints(self) -> list[str]:
        """Ask for a hint, as :meth:`hint`, and get every suggestion it carries, best
        first (at most 3: the hint, then the moves players would rank next; empty when
        there is no legal move). Counted as one hint."""
        code = self._require_player()
        reply: p.HintReply = await self._request(lambda req: p.Hint(req=req, code=code))
        if reply.moves:
            return list(reply.moves)
        return [] if reply.move is None else [reply.move]

    # -- the lobby: open races and quick match --------------------------------------------

    async def open_races(self, variant: str | None = None) -> list[p.OpenRace]:
        """The public races waiting for players, newest first (of ``variant`` only)."""
        reply: p.OpenRaceList = await self._request(
            lambda req: p.OpenRaces(req=req, variant=variant)
        )
        return reply.races

    async def watch_open_races(
        self, variant: str | None = None
    ) -> AsyncIterator[p.OpenRaceChanged]:
        """Follow the open races: first an ``open_race`` change for each race listed now,
        then one whenever a race is listed, changes or leaves the list (``race`` None).
        :attr:`listed` holds the list meanwhile. After a reconnect, or a move to a race's
        URL, it follows again on the new connection (the list is read anew). Stops following
        when the iteration ends."""
        lobby = self.lobby
        queue = lobby.watcher()
        try:
            while True:
                connection = (self.reconnects, self.moves)  # a new one: follow again there
                reply: p.OpenRaceList = await self._request(
                    lambda req: p.OpenRaces(req=req, watch=True, variant=variant)
                )
                for change in lobby.take_list(reply.races):
                    yield change
                while (self.reconnects, self.moves) == connection:
                    try:
                        change = await asyncio.wait_for(queue.get(), timeout=1.0)
                    except TimeoutError:
                        continue
                    lobby.take_change(change)  # one that came during the read above
                    if variant is None or change.race is None or change.race.variant == variant:
                        yield change
        finally:
            lobby.unwatch(queue)
            if self.connected:
                await self._request(lambda req: p.OpenRaces(req=req, watch=False))

    async def quick_match(
        self,
        variant: str = "spider4",
        *,
        with_bots: bool = False,
        undo: bool = True,
        timeout: float | None = None,
    ) -> str:
        """Queue for a quick match of ``variant``, wait until the server made the race (at
        most ``timeout`` seconds: TimeoutError, and the queue is left), join it as a
        player and return its code; mark nothing: the race counts down at once. Queued
        again after a reconnect."""
        lobby = self.lobby
        lobby.matched = None

        def ask(req: int) -> p.QuickMatch:
            return p.QuickMatch(req=req, variant=variant, undo=undo, with_bots=with_bots)

        try:
            async with asyncio.timeout(timeout):
                reconnects = self.reconnects
                await self._request(ask)
                while lobby.matched is None:
                    if self.reconnects != reconnects:
                        reconnects = self.reconnects
                        await self._request(ask)
                    try:
                        await self.wait_until(lambda c: c.matched is not None, timeout=1.0)
                    except TimeoutError:
                        continue
        except TimeoutError:
            if lobby.matched is None:
                await self.cancel_match()
                raise
        code = lobby.matched.code
        await self.join(code, "player")
        return code

    async def cancel_match(self) -> None:
        """Leave the quick-match queue."""
        await self._request(lambda req: p.CancelMatch(req=req))

    def _require_race(self) -> str:
        if self.code is None:
            raise NotInRace("join a race first")
        return self.code

    def _require_player(self) -> str:
        code = self._require_race()
        if self.role != "player":
            raise NotInRace("only a player of the race may act")
        return code
