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

The parts: :mod:`~spider_client.mirror` keeps the race and the view from what the server
sends, without I/O (``client.mirror``; ``client.race``, ``client.view`` and the like read
it); :mod:`~spider_client.outbox` holds what waits for an answer and paces the sending;
:mod:`~spider_client.connection` reads, reconnects and resumes (``events``,
``wait_until`` and ``close`` are its); :mod:`~spider_client._wire` is the only code below
websockets' public API; this module is the API on top.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from spider_engine import Board

from . import protocol as p
from .errors import NotInRace
from .lobby import LobbyClient

__all__ = ["Client"]


class Client(LobbyClient):
    """A connection to a spider-race server, speaking for one player (see the module's
    docstring for the behaviour). Make one with :meth:`connect`; close it with
    :meth:`close` or ``async with``. The race state below is :attr:`mirror`'s."""

    @classmethod
    async def connect(
        cls,
        url: str | Sequence[str],
        *,
        name: str | None = None,
        token: str | None = None,
        bot: bool = False,
        **options: Any,
    ) -> Client:
        """Connect to the first URL that answers (trying each once), say ``hello`` with
        ``name`` (a new player) or ``token`` (resume that player), and ``bot`` when a
        program plays, and start reading.
        Raises :class:`ConnectFailed` when none answers, :class:`BadToken` for a token the
        server refuses. ``options`` are the constructor's keyword options."""
        client = cls(url, name=name, token=token, bot=bot, **options)
        await client._open_first()
        return client

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # -- the race as seen from here --------------------------------------------------------

    @property
    def code(self) -> str | None:
        """The join code of the race this client is in."""
        return self.mirror.code

    @property
    def role(self) -> str | None:
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
    def status(self) -> str | None:
        """This player's status: waiting, playing, won, stuck, resigned, timeout, left."""
        return self.mirror.status

    @property
    def finished(self) -> bool:
        """Whether the race is over (results are in ``race.results``)."""
        return self.mirror.finished

    def legal_moves(self) -> list[str]:
        """The legal moves of the player's view, sorted as the spec prints them."""
        return self.mirror.legal_moves()

    # -- requests ---------------------------------------------------------------------------

    async def create_race(self, **options: Any) -> str:
        """Create a race (options: the fields of
        :class:`~spider_client.protocol.CreateRace` — variant, seed, max_players,
        time_limit, undo, live_boards, countdown, winnable, hints, away_grace, ghosts), join
        it as a player, and return its join code. ``ghosts=[{"race": CODE, "player":
        PLAYER_ID}]`` races recorded runs of finished races on their deal. Not repeated after
        a drop (:class:`RequestInterrupted`)."""
        reply = await self._request(lambda req: p.CreateRace(req=req, **options), repeatable=False)
        code: str = reply.race.code if isinstance(reply, p.Joined) else reply.code
        if self.code != code:
            await self.join(code)
        else:
            await self._follow()
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
            await self._follow()
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
        self, variant: str = "spider1", pool: str = "humans"
    ) -> p.RatingLeaderboardReply:
        """A variant's rating ladder (``humans`` or ``bots``): the top 100, best first, and
        this player's own line (``me``)."""
        reply: p.RatingLeaderboardReply = await self._request(
            lambda req: p.RatingLeaderboard(req=req, variant=variant, pool=pool)  # type: ignore[arg-type]
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

        def made(client: Any) -> bool:
            offer = client.mirror.rematch
            return offer is not None and offer.race == code and offer.code is not None

        await self.wait_until(made, timeout=timeout)
        assert self.mirror.rematch is not None and self.mirror.rematch.code is not None
        new = self.mirror.rematch.code
        await self.join(new)
        return new

    async def join(self, code: str, role: str = "player") -> p.Joined:
        """Join the race ``code`` as ``player`` or ``spectator`` (again: resume, caught up
        from the last version seen) and return the reply. The client then follows that
        race; ``client.race`` and, for a player of a running race, ``client.view`` are set."""
        return await self._join(code, role)

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

    def _require_race(self) -> str:
        if self.code is None:
            raise NotInRace("join a race first")
        return self.code

    def _require_player(self) -> str:
        code = self._require_race()
        if self.role != "player":
            raise NotInRace("only a player of the race may act")
        return code
