"""The asyncio client: one connection to a spider-race server, one race at a time.

::

    client = await Client.connect("ws://127.0.0.1:8765/ws", name="ada")
    code = await client.create_race(variant="spider1")   # or: await client.join(code)
    await client.ready()
    await client.wait_until(lambda c: c.view is not None)  # the deal is out
    ack = await client.move("d1j")                          # waits for the server's ack
    async for event in client.events(): ...

The client's behaviour (requests, actions, rate, the view, the race, reconnects, race
affinity) is told in the package's docstring (:mod:`spider_client`).

The parts, each a plain object that :class:`Client` makes and wires in its constructor
(no part calls another it was not given): :mod:`~spider_client.mirror` keeps the race and
the view from what the server sends, without I/O (``client.mirror``; ``client.race``,
``client.view`` and the like read it); :mod:`~spider_client.outbox` holds what waits for an
answer and paces the sending; :mod:`~spider_client.connection` reads, reconnects and
resumes, handing every message to :mod:`~spider_client.inbox`, which routes it to the
parts it concerns; :mod:`~spider_client.affinity` moves the
connection to the race's URL; :mod:`~spider_client.feed` keeps the events for
:meth:`Client.events` and wakes :meth:`Client.wait_until`; :mod:`~spider_client.lobby`
keeps the open races and the last match; :mod:`~spider_client._wire` is the only code
below websockets' public API. This module is the API on top; the lobby's and the players'
requests are carried out in :mod:`~spider_client.lobby` and :mod:`~spider_client.players`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Literal

from spider_engine import Board

from . import lobby as lobby_requests
from . import players
from . import protocol as p
from .affinity import Affinity
from .connection import Connection
from .errors import NotInRace
from .events import Event
from .feed import EventFeed
from .inbox import Inbox
from .lobby import LobbyFeed
from .mirror import RaceMirror
from .options import ClientOptions
from .outbox import ActionMessage, Outbox
from .parts import PartOf as _Of

__all__ = ["Client"]


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
            lambda: self._connection.ws,
            resend_after=options.resend_after,
            rate_limit_pause=options.rate_limit_pause,
        )
        self._inbox = Inbox(
            mirror=self.mirror,
            outbox=self._outbox,
            feed=self._feed,
            lobby=self.lobby,
            rejoin=self.join,
            deal_wait=options.resend_after / 5,
        )
        self._connection = Connection(
            urls,
            options,
            mirror=self.mirror,
            outbox=self._outbox,
            feed=self._feed,
            receive=self._inbox,
        )
        self._affinity = Affinity(self._connection, self.mirror, self._outbox)

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
        options = {k: v for k, v in locals().items() if k not in ("cls", "url")}
        return await cls.open(url, ClientOptions(**options))  # the keywords are its fields

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
        self._inbox.stop()
        await self._connection.close()

    # -- the connection ---------------------------------------------------------------------

    name: _Of[str | None] = _Of("_connection", "The player's name (as the welcome gave it).")
    token: _Of[str | None] = _Of(
        "_connection", "The session token: keep it to come back as the same player (``token=``)."
    )

    @property
    def bot(self) -> bool:
        """Whether the hello said that a program plays."""
        return self.options.bot

    player: _Of[str | None] = _Of("mirror", "The player id the server gave this client.")
    node: _Of[str | None] = _Of("_connection", "The server node the connection is on.")
    url: _Of[str | None] = _Of(
        "_connection", "The URL of the connection now (with ``?race=CODE`` once it moved there)."
    )
    connected: _Of[bool] = _Of(
        "_connection", "Whether a connection is up (False while reconnecting, and once given up)."
    )
    reconnects: _Of[int] = _Of("_connection", "Times the connection dropped and was made again.")
    moves: _Of[int] = _Of(
        "_affinity", "Times the client moved to its race's URL (not counted in :attr:`reconnects`)."
    )
    send_interval: _Of[float] = _Of(
        "_outbox",
        "Seconds kept between two frames sent; 0 at first, it grows each time the server says ``rate_limited``.",
    )
    dropped_events: _Of[int] = _Of(
        "_feed",
        "Events that gave way unread (a client that never reads its events keeps only the last ``max_unread``).",
        attr="dropped",
    )
    matched: _Of[p.Matched | None] = _Of(
        "lobby", "The last ``matched`` message (the race a quick match made)."
    )
    listed: _Of[dict[str, p.OpenRace]] = _Of(
        "lobby", "The open races as followed by :meth:`watch_open_races`, by code."
    )

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

    # -- asking -----------------------------------------------------------------------------

    async def _request(self, make: Callable[[int], Any], *, repeatable: bool = True) -> Any:
        timeout = self.options.request_timeout
        return await self._outbox.request(make, repeatable=repeatable, timeout=timeout)

    async def _act(self, make: Callable[[int], ActionMessage]) -> p.Ack:
        """Send the action ``make(seq)`` builds with the player's next ``seq``."""
        return await self._outbox.act(lambda: make(self.mirror.seq + 1))

    # -- the race as seen from here --------------------------------------------------------

    code: _Of[str | None] = _Of("mirror", "The join code of the race this client is in.")
    role: _Of[p.Role | None] = _Of("mirror", "``player`` or ``spectator`` in that race.")
    race: _Of[p.RaceInfo | None] = _Of(
        "mirror", "The race as everyone may see it, kept up to date from its events."
    )
    seq: _Of[int] = _Of("mirror", "The player's last applied action number.")
    version: _Of[int] = _Of("mirror", "The last race event version seen.")
    boards: _Of[dict[str, str]] = _Of(
        "mirror",
        "Player id -> view text, for spectators of live-board races; after the race, every player's final full position.",
    )
    view: _Of[Board | None] = _Of(
        "mirror",
        "The player's view of their game (None before the deal, and for spectators): the view of the last ack or ``joined`` reply, read into a board when first asked for. Copy it before changing it.",
    )
    me: _Of[p.PlayerInfo | None] = _Of(
        "mirror", "This player's public progress in the race (None for a spectator)."
    )

    @property
    def status(self) -> p.PlayerStatus | None:
        """This player's status: waiting, playing, won, stuck, resigned, timeout, left,
        abandoned, idle (None for a spectator, and for a status this client does not know)."""
        status = self.mirror.status
        return status if p.is_player_status(status) else None

    finished: _Of[bool] = _Of(
        "mirror", "Whether the race is over (results are in ``race.results``)."
    )

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
        idle_limit: int | None = None,
    ) -> str:
        """Create a race, join it as a player, and return its join code. The options are
        :class:`~spider_client.protocol.CreateRace`'s (each told there): the variant, a
        ``seed`` to deal (by default a secret random one), the most players, the time limit
        in seconds, whether undo is allowed, the countdown's seconds, the players' boards
        shown live to spectators, a deal proved winnable, hints, the seconds a player may be
        away, humans only, rated, listed in the lobby, the seconds a player may go without
        an action (``idle_limit``). ``ghosts=[{"race": CODE, "player":
        PLAYER_ID}]`` races recorded runs of finished races on their deal. Not repeated
        after a drop (:class:`RequestInterrupted`); refused with the error of its code
        (:class:`BadRequest` for an option out of range, :class:`TooManyRaces`, …)."""

        fields = {k: v for k, v in locals().items() if k != "self"}  # CreateRace's own
        reply = await self._request(lambda req: p.CreateRace(req=req, **fields), repeatable=False)
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

    async def profile(
        self, player_or_name: str | None = None, *, before: str | None = None
    ) -> p.ProfileReply:
        """A player's profile: races per variant, wins, win rate, best time, streaks,
        rating (and its history), and the last races with their replays' links. By default
        this player's; else the player of that id, or the account of that name (a guest
        is found by its id only: ``guest`` says so). ``found`` is false for a player without a
        finished race. The races come a page at a time, newest first: while ``more`` is
        true, ``profile(..., before=reply.next)`` gives the next page."""
        return await players.profile(self, player_or_name, before)

    async def rating_changes(
        self, code: str | None = None, *, timeout: float = 10.0
    ) -> p.RatingChangesReply:
        """The rating changes of finished race ``code`` (by default this client's race),
        asked again until they are written (within ``timeout`` seconds; then the last
        reply, ``applied`` false)."""
        return await players.rating_changes(self, code or self._require_race(), timeout)

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
        return await players.rematch(self, self._require_player(), timeout)

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

    # -- the lobby: open races and quick match (:mod:`.lobby`) -----------------------------

    async def open_races(self, variant: str | None = None, rated: bool = False) -> list[p.OpenRace]:
        """The public races waiting for players, in the lobby's order (of ``variant`` only,
        rated only when asked)."""
        return await lobby_requests.open_races(self, variant, rated)

    def watch_open_races(
        self, variant: str | None = None, rated: bool = False
    ) -> AsyncIterator[p.OpenRaceChanged]:
        """Follow the open races: first an ``open_race`` change for each race listed now,
        then one whenever a race is listed, changes or leaves the list (``race`` None).
        :attr:`listed` holds the list meanwhile. After a reconnect, or a move to a race's
        URL, it follows again on the new connection (the list is read anew). Stops following
        when the iteration ends."""
        return lobby_requests.watch_open_races(self, variant, rated)

    async def quick_match(
        self,
        variant: str = "spider4",
        *,
        with_bots: bool = False,
        undo: bool = True,
        timeout: float | None = None,
        rated: bool | None = None,
    ) -> str:
        """Queue for a quick match of ``variant`` (``rated``: the rated pool, for accounts,
        or casual; None: rated for an account), wait until the server made the race,
        join it as a player (which confirms the seat) and return its code once it counts
        down (every matched player joined); mark nothing. A match called off (someone did
        not join in time) is queued for again at once, ahead of the others. At most
        ``timeout`` seconds: TimeoutError (and the queue is left). Queued again after a
        reconnect. ``with_bots``: a person queues with the bots. A player who missed a
        match or left one before its start lately gets :class:`RateLimited` (its
        ``retry_after``: the seconds to wait)."""
        return await lobby_requests.quick_match(
            self, variant, with_bots=with_bots, undo=undo, timeout=timeout, rated=rated
        )

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
