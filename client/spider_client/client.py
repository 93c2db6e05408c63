"""The asyncio client: one connection to a spider-race server, one race at a time.

::

    client = await Client.connect("ws://127.0.0.1:8765/ws", name="ada")
    code = await client.create_race(variant="spider1")   # or: await client.join(code)
    await client.ready()
    await client.wait_until(lambda c: c.view is not None)  # the deal is out
    ack = await client.move("d1j")                          # waits for the server's ack
    async for event in client.events(): ...

Behaviour:

- **Requests** (``create_race``, ``join``, ``ready``, ``leave``) carry a request id and
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
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import itertools
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.protocol import State

from spider_engine import Board

from . import protocol as p
from .errors import (
    BadToken,
    ConnectFailed,
    ConnectionLost,
    NotInRace,
    RequestInterrupted,
    ServerError,
    SpiderClientError,
    error_from_message,
)
from .events import Disconnected, Event, Reconnected, ViewChanged

__all__ = ["Client"]

log = logging.getLogger("spider_client")

_RACE_EVENTS = (
    p.PlayerJoined,
    p.PlayerLeft,
    p.PlayerReady,
    p.Countdown,
    p.Started,
    p.Progress,
    p.BoardShown,
    p.Finished,
    p.Prepared,
)
_END = object()
_CONNECT_ERRORS = (
    OSError,
    InvalidHandshake,
    InvalidURI,
    ConnectionClosed,
    TimeoutError,
    ServerError,
    ValueError,
)
"""What a failed attempt to connect and say hello may raise."""


@dataclass
class _Request:
    message: Any
    future: asyncio.Future[Any]
    repeatable: bool


@dataclass
class _Action:
    message: p.MoveAction | p.Undo | p.Resign
    future: asyncio.Future[p.Ack]

    @property
    def seq(self) -> int:
        return self.message.seq


@dataclass(eq=False)
class _Unanswered:
    """A request or action sent and not answered yet."""

    message: Any
    future: asyncio.Future[Any]
    resends: int | None
    """Resends allowed (None: no bound)."""
    due: float
    """Loop time at which it is sent again, unless answered."""
    sent: int = 0
    sending: bool = False


def _write_now(ws: ClientConnection, data: bytes) -> bool:
    """Write ``data`` as one binary frame at once, as ``ws.send`` would, when nothing can
    hold it up: the connection is open, no fragmented message is on its way and the
    transport takes writes. False: the caller sends it the usual way."""
    if (
        ws.protocol.state is not State.OPEN
        or ws.send_in_progress is not None
        or ws.paused
        or ws.transport.is_closing()
    ):
        return False
    ws.protocol.send_binary(data)
    try:
        ws.send_data()
    except Exception:  # the transport failed: the reader sees the drop and reconnects
        ws.transport.abort()
    return True


def _action_text(message: p.MoveAction | p.Undo | p.Resign) -> str:
    """What an ack of this action says in its ``move`` field."""
    if isinstance(message, p.MoveAction):
        return message.move
    return "undo" if isinstance(message, p.Undo) else "resign"


class Client:
    """A connection to a spider-race server, speaking for one player (see the module's
    docstring for the behaviour). Make one with :meth:`connect`; close it with
    :meth:`close` or ``async with``."""

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        name: str | None = None,
        token: str | None = None,
        reconnect_timeout: float | None = 60.0,
        backoff_initial: float = 0.05,
        backoff_max: float = 2.0,
        request_timeout: float | None = 30.0,
        open_timeout: float = 10.0,
        resend_after: float = 5.0,
        rate_limit_pause: float = 1.0,
        max_unread: int = 10_000,
    ) -> None:
        self.urls: list[str] = [urls] if isinstance(urls, str) else list(urls)
        if not self.urls:
            raise ValueError("at least one URL")
        self.name = name
        self.token = token
        """The session token: keep it to come back as the same player."""
        self.player: str | None = None
        """The player id the server gave this connection."""
        self.node: str | None = None
        """The server node the connection is on."""
        self.url: str | None = None
        self.reconnect_timeout = reconnect_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.request_timeout = request_timeout
        self.open_timeout = open_timeout
        self.resend_after = resend_after
        self.rate_limit_pause = rate_limit_pause
        self.max_unread = max_unread
        """Events kept for :meth:`events` until read; beyond, the oldest give way."""
        self.dropped_events = 0
        """Events that gave way, unread (a client that never reads its events keeps only
        the last ``max_unread``)."""
        self.send_interval = 0.0
        """Seconds kept between two frames sent; 0 at first, it grows each time the server
        says ``rate_limited``."""

        self.code: str | None = None
        """The join code of the race this client is in."""
        self.role: str | None = None
        """``player`` or ``spectator`` in that race."""
        self.race: p.RaceInfo | None = None
        """The race as everyone may see it, kept up to date from its events."""
        self._view_text: str | None = None
        self._view: Board | None = None
        self.seq = 0
        """The player's last applied action number."""
        self.version = 0
        """The last race event version seen."""
        self.boards: dict[str, str] = {}
        """Player id -> view text, for spectators of live-board races; after the race,
        every player's final full position."""
        self.reconnects = 0

        self._url_index = 0
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._closing = False
        self._lost: SpiderClientError | None = None
        self._requests: dict[int, _Request] = {}
        self._req_ids = itertools.count(1)
        self._action: _Action | None = None
        self._action_lock = asyncio.Lock()
        self._queue: collections.deque[Any] = collections.deque()
        """What :meth:`events` yields next (at most ``max_unread``, then ``_END``)."""
        self._queue_waiter: asyncio.Future[None] | None = None
        self._changed = asyncio.Event()
        self._waiting = 0
        """Callers of :meth:`wait_until` waiting now (the messages wake them)."""
        self._clock_offset = 0.0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._send_lock = asyncio.Lock()
        self._unanswered: set[_Unanswered] = set()
        self._watchdog: asyncio.TimerHandle | None = None
        """The one timer that resends what goes unanswered (armed while something waits)."""
        self._next_send = 0.0
        self._paused_until = 0.0

    # -- connecting -------------------------------------------------------------------------

    @classmethod
    async def connect(
        cls,
        url: str | Sequence[str],
        *,
        name: str | None = None,
        token: str | None = None,
        **options: Any,
    ) -> Client:
        """Connect to the first URL that answers (trying each once), say ``hello`` with
        ``name`` (a new player) or ``token`` (resume that player), and start reading.
        Raises :class:`ConnectFailed` when none answers, :class:`BadToken` for a token the
        server refuses. ``options`` are the constructor's keyword options."""
        client = cls(url, name=name, token=token, **options)
        errors: list[str] = []
        for _ in client.urls:
            url_now = client._next_url()
            try:
                ws = await client._open(url_now)
            except ServerError:
                raise
            except _CONNECT_ERRORS as e:
                errors.append(f"{url_now}: {e}")
                continue
            client._ws = ws
            client._reader = asyncio.create_task(client._run(), name="spider-client-reader")
            return client
        raise ConnectFailed("no server answered: " + "; ".join(errors))

    def _next_url(self) -> str:
        url = self.urls[self._url_index % len(self.urls)]
        self._url_index += 1
        return url

    async def _open(self, url: str) -> ClientConnection:
        """Open a websocket to ``url`` and say hello; returns it after the welcome."""
        ws = await ws_connect(
            url,
            compression=None,
            open_timeout=self.open_timeout,
            max_size=2**22,
            user_agent_header="spider-client",
        )
        try:
            await ws.send(p.encode(p.Hello(name=self.name, token=self.token, together=True)))
            async with asyncio.timeout(self.open_timeout):
                frame = await ws.recv()
            message = p.decode(frame if isinstance(frame, bytes) else frame.encode())
            if isinstance(message, p.Error):
                raise error_from_message(message)
            if not isinstance(message, p.Welcome):
                raise ConnectionClosed(None, None)
        except BaseException:
            await ws.close()
            raise
        self.player = message.player
        self.name = message.name
        self.token = message.token
        self.node = message.node
        self.url = url
        self._clock_offset = message.server_time - time.time()
        return ws

    async def close(self) -> None:
        """Close the connection for good: nothing reconnects, everything waiting fails with
        :class:`ConnectionLost`, and :meth:`events` ends. Idempotent."""
        self._closing = True
        ws = self._ws
        if ws is not None:
            await ws.close()
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        for task in list(self._tasks):
            task.cancel()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        self._give_up(ConnectionLost("the client was closed"))

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def connected(self) -> bool:
        return self._ws is not None and self._lost is None

    def server_now(self) -> float:
        """The server's clock now (seconds since the epoch), as estimated at the welcome."""
        return time.time() + self._clock_offset

    # -- the race as seen from here --------------------------------------------------------

    @property
    def me(self) -> p.PlayerInfo | None:
        """This player's public progress in the race (None for a spectator)."""
        if self.race is None:
            return None
        for info in self.race.players:
            if info.player == self.player:
                return info
        return None

    @property
    def status(self) -> str | None:
        """This player's status: waiting, playing, won, stuck, resigned, timeout, left."""
        me = self.me
        return me.status if me is not None else None

    @property
    def finished(self) -> bool:
        """Whether the race is over (results are in ``race.results``)."""
        return self.race is not None and self.race.state == "finished"

    def legal_moves(self) -> list[str]:
        """The legal moves of the player's view, sorted as the spec prints them."""
        return self.view.legal_moves.texts() if self.view is not None else []

    async def wait_until(
        self, predicate: Callable[[Client], bool], *, timeout: float | None = None
    ) -> None:
        """Wait until ``predicate(client)`` holds; it is checked now and after every message
        the client takes in. Raises :class:`ConnectionLost` if the client gives up first,
        :class:`TimeoutError` after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while not predicate(self):
                if self._lost is not None:
                    raise self._lost
                self._waiting += 1
                try:
                    await self._changed.wait()
                finally:
                    self._waiting -= 1

    async def events(self) -> AsyncIterator[Event]:
        """Yield every race event, ack and unanswered error in the order they arrive, and
        the client's own :mod:`~spider_client.events` (connection, view). Events are kept
        from the moment of connecting, so none is lost before iterating; a client that
        never iterates keeps only the last ``max_unread`` (10,000 by default; the count of
        the others is :attr:`dropped_events`). Ends when the client is closed or gives up
        reconnecting. One consumer at a time."""
        queue = self._queue
        while True:
            while not queue:
                waiter = self._queue_waiter = asyncio.get_running_loop().create_future()
                try:
                    await waiter
                finally:
                    self._queue_waiter = None
            if queue[0] is _END:
                return
            yield queue.popleft()

    # -- requests ---------------------------------------------------------------------------

    async def create_race(self, **options: Any) -> str:
        """Create a race (options: the fields of
        :class:`~spider_client.protocol.CreateRace` — variant, seed, max_players,
        time_limit, undo, live_boards, countdown, winnable, hints), join it as a player, and
        return its join code. Not repeated after a drop (:class:`RequestInterrupted`)."""
        reply = await self._request(lambda req: p.CreateRace(req=req, **options), repeatable=False)
        code: str = reply.race.code if isinstance(reply, p.Joined) else reply.code
        if self.code != code:
            await self.join(code)
        return code

    async def daily_race(self, variant: str = "spider4") -> str:
        """Join (or rejoin) this player's race on the day's deal of ``variant`` and return
        its join code; mark ready to start it."""
        reply = await self._request(lambda req: p.DailyRace(req=req, variant=variant))
        code: str = reply.race.code
        if self.code != code:
            await self.join(code)
        return code

    async def leaderboard(
        self, variant: str = "spider4", day: str | None = None
    ) -> list[p.LeaderboardEntry]:
        """The leaderboard of a variant's daily deal on ``day`` (by default today, UTC)."""
        reply: p.LeaderboardReply = await self._request(
            lambda req: p.Leaderboard(req=req, variant=variant, day=day)
        )
        return reply.entries

    async def join(self, code: str, role: str = "player") -> p.Joined:
        """Join the race ``code`` as ``player`` or ``spectator`` (again: resume, caught up
        from the last version seen) and return the reply. The client then follows that
        race; ``client.race`` and, for a player of a running race, ``client.view`` are set."""
        since = self.version if code == self.code and role == self.role else None
        reply: p.Joined = await self._request(
            lambda req: p.Join(req=req, code=code, role=role, since=since)  # type: ignore[arg-type]
        )
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

    async def leave(self) -> None:
        """Leave the race; the client then follows no race."""
        code = self._require_race()
        await self._request(lambda req: p.Leave(req=req, code=code))
        self._forget_race()

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

    def _require_race(self) -> str:
        if self.code is None:
            raise NotInRace("join a race first")
        return self.code

    def _require_player(self) -> str:
        code = self._require_race()
        if self.role != "player":
            raise NotInRace("only a player of the race may act")
        return code

    async def _act(self, make: Callable[[int], p.MoveAction | p.Undo | p.Resign]) -> p.Ack:
        async with self._action_lock:
            if self._lost is not None:
                raise self._lost
            action = _Action(make(self.seq + 1), asyncio.get_running_loop().create_future())
            self._action = action
            try:
                ack: p.Ack = await self._until_answered(action.message, action.future, None)
                return ack
            finally:
                if self._action is action:
                    self._action = None

    async def _request(self, make: Callable[[int], Any], *, repeatable: bool = True) -> Any:
        if self._lost is not None:
            raise self._lost
        req = next(self._req_ids)
        request = _Request(make(req), asyncio.get_running_loop().create_future(), repeatable)
        self._requests[req] = request
        try:
            async with asyncio.timeout(self.request_timeout):
                return await self._until_answered(
                    request.message, request.future, None if repeatable else 0
                )
        finally:
            self._requests.pop(req, None)

    async def _until_answered(
        self, message: object, future: asyncio.Future[Any], resends: int | None
    ) -> Any:
        """Send ``message`` and wait for ``future``; while no answer comes, send it again
        every ``resend_after`` seconds (at most ``resends`` times; None: no bound) — the
        server answers a repeated action or join as it did the first. One timer per client
        looks after everything unanswered (:meth:`_resend_due`)."""
        await self._send(message)
        loop = asyncio.get_running_loop()
        item = _Unanswered(message, future, resends, loop.time() + self.resend_after)
        self._unanswered.add(item)
        if self._watchdog is None:
            self._watchdog = loop.call_at(item.due, self._resend_due)
        try:
            return await future
        finally:
            self._unanswered.discard(item)

    def _resend_due(self) -> None:
        """Send again what has waited ``resend_after`` seconds for an answer (one resend at
        a time each, none once answered), then wait for the next one due."""
        self._watchdog = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        upcoming: float | None = None
        for item in list(self._unanswered):
            if item.future.done() or item.sending:
                continue
            if item.due <= now:
                if item.resends is None or item.sent < item.resends:
                    item.sending = True
                    self._spawn(self._send_again(item))
                    continue  # due again once this resend is out
                item.due = now + self.resend_after
            upcoming = item.due if upcoming is None else min(upcoming, item.due)
        if upcoming is not None:
            self._watchdog = loop.call_at(upcoming, self._resend_due)

    async def _send_again(self, item: _Unanswered) -> None:
        try:
            if not item.future.done():
                item.sent += 1
                log.info("no answer to %s yet: sending it again", type(item.message).__name__)
                await self._send(item.message, unless=item.future)
        finally:
            item.sending = False
            loop = asyncio.get_running_loop()
            item.due = loop.time() + self.resend_after
            if not item.future.done() and self._watchdog is None and not self._closing:
                self._watchdog = loop.call_at(item.due, self._resend_due)

    async def _send(self, message: object, *, unless: asyncio.Future[Any] | None = None) -> None:
        """Send now if connected (keeping ``send_interval`` between frames); when not, the
        reconnect sends what still waits. Nothing is sent once ``unless`` is done (the
        answer came while this waited its turn)."""
        loop = asyncio.get_running_loop()
        ws = self._ws
        if (
            ws is not None
            and not self._send_lock.locked()
            and max(self._next_send, self._paused_until) <= loop.time()
            and (unless is None or not unless.done())
            and _write_now(ws, p.encode(message))
        ):
            # nothing to wait for (the usual case): written at once, in this turn
            if self.send_interval:
                self._next_send = loop.time() + self.send_interval
            return
        async with self._send_lock:
            wait = max(self._next_send, self._paused_until) - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            if unless is not None and unless.done():
                return
            ws = self._ws
            if ws is None:
                return
            with contextlib.suppress(ConnectionClosed):
                await ws.send(p.encode(message))
            self._next_send = loop.time() + self.send_interval

    def _rate_limited(self) -> None:
        """The server refused a frame for rate (and drops the next ones for a while):
        slow down, pause, then send again whatever waits for an answer."""
        self.send_interval = min(max(self.send_interval * 2, 0.02), 1.0)
        loop = asyncio.get_running_loop()
        self._paused_until = loop.time() + self.rate_limit_pause
        log.info("rate limited: pausing, then one frame every %.2fs", self.send_interval)

        async def resend() -> None:
            for request in list(self._requests.values()):
                if request.repeatable and not request.future.done():
                    await self._send(request.message)
            action = self._action
            if action is not None and not action.future.done():
                await self._send(action.message)

        self._spawn(resend())

    # -- reading ----------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while True:
                ws = self._ws
                assert ws is not None
                with contextlib.suppress(ConnectionClosed):
                    async for frame in ws:
                        self._dispatch(frame)
                if self._closing:
                    return
                self._ws = None
                code, reason = ws.close_code, ws.close_reason or ""
                log.info("connection to %s dropped (%s %s)", self.url, code, reason)
                self._emit(Disconnected(code=code, reason=reason, reconnecting=True))
                for req, request in list(self._requests.items()):
                    if not request.repeatable:
                        self._requests.pop(req)
                        if not request.future.done():
                            request.future.set_exception(
                                RequestInterrupted("the connection dropped during the request")
                            )
                await self._reconnect()
        except ConnectionLost as e:
            self._emit(Disconnected(code=None, reason=str(e), reconnecting=False))
            self._give_up(e)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug here must not leave callers waiting forever
            log.exception("the client's reader failed")
            self._give_up(ConnectionLost(f"the client failed: {e!r}"))
        finally:
            if self._closing:
                self._give_up(ConnectionLost("the client was closed"))

    async def _reconnect(self) -> None:
        """Connect again (backoff over the URL list), resume the race, resend; raises
        :class:`ConnectionLost` when it gives up."""
        loop = asyncio.get_running_loop()
        deadline = None if self.reconnect_timeout is None else loop.time() + self.reconnect_timeout
        delay = self.backoff_initial
        attempts = 0
        while True:
            if self._closing:
                raise ConnectionLost("the client was closed")
            url = self._next_url()
            attempts += 1
            try:
                ws = await self._open(url)
            except BadToken as e:
                raise ConnectionLost(f"the server refused the session token: {e}") from e
            except _CONNECT_ERRORS as e:
                failure: Exception = e
            else:
                try:
                    async with asyncio.timeout(self.open_timeout):
                        await self._resume(ws, url, attempts)
                    return
                except (ConnectionClosed, TimeoutError) as e:
                    self._ws = None
                    await ws.close()
                    failure = e
            log.info("reconnect to %s failed: %r", url, failure)
            if deadline is not None and loop.time() >= deadline:
                raise ConnectionLost(f"gave up reconnecting after {attempts} attempts") from failure
            if attempts % len(self.urls) == 0:  # every URL tried once more: back off
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))
                delay = min(delay * 2, self.backoff_max)

    async def _resume(self, ws: ClientConnection, url: str, attempts: int) -> None:
        """Rejoin the race on a new connection, then send again what waits for an answer
        (an action sent before the rejoin would be refused: not a player yet)."""
        event = Reconnected(url=url, node=self.node or "", attempts=attempts)
        if self.code is not None and self.role is not None:
            since = self.version
            event.since = since
            req = next(self._req_ids)
            join = p.Join(req=req, code=self.code, role=self.role, since=since)  # type: ignore[arg-type]
            await ws.send(p.encode(join))
            reply: Any = None
            while reply is None:  # the dispatch goes on while waiting for the rejoin's reply
                for message in self._dispatch(await ws.recv()):
                    if isinstance(message, p.Joined | p.Error) and message.req == req:
                        reply = message
            if isinstance(reply, p.Joined):
                event.caught_up = sum(1 for e in reply.events if e.get("version", 0) > since)
                event.snapshot = not reply.events and reply.race.version > since
        self._ws = ws
        self.reconnects += 1
        for request in list(self._requests.values()):
            await ws.send(p.encode(request.message))
        if self._action is not None and not self._action.future.done():
            event.resent.append(self._action.seq)
            await ws.send(p.encode(self._action.message))
        self._emit(event)

    def _dispatch(self, frame: bytes | str) -> list[Any]:
        """Take in one frame from the server (one message, or several race events sent
        together); returns the decoded messages."""
        try:
            messages = p.decode_all(frame if isinstance(frame, bytes) else frame.encode())
        except (ValueError, TypeError, msgpack.UnpackException) as e:
            log.warning("ignored an undecodable frame from the server: %s", e)
            return []
        try:
            for message in messages:
                self._take(message)
        finally:
            if self._waiting:
                self._wake_waiters()
        return messages

    def _wake_waiters(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _take(self, message: Any) -> None:
        if isinstance(message, p.Ack):
            self._take_ack(message)
        elif isinstance(message, p.Joined):
            self._take_joined(message)
            self._resolve(message.req, message)
        elif isinstance(message, (p.Done, p.HintReply, p.LeaderboardReply)):
            self._resolve(message.req, message)
        elif isinstance(message, p.Error):
            self._take_error(message)
        elif isinstance(message, _RACE_EVENTS):
            self._take_event(message)

    def _resolve(self, req: int, reply: Any) -> None:
        request = self._requests.pop(req, None)
        if request is not None and not request.future.done():
            request.future.set_result(reply)

    def _take_error(self, error: p.Error) -> None:
        if error.req is not None and error.req in self._requests:
            request = self._requests.pop(error.req)
            if not request.future.done():
                request.future.set_exception(error_from_message(error))
            return
        if error.error == "rate_limited" and error.seq is None and error.req is None:
            self._rate_limited()
        action = self._action
        if error.seq is not None and action is not None and error.seq == action.seq:
            self._action = None
            if not action.future.done():
                action.future.set_exception(error_from_message(error))
            return
        self._emit(error)

    @property
    def view(self) -> Board | None:
        """The player's view of their game (None before the deal, and for spectators): the
        view of the last ack or ``joined`` reply, read into a board when first asked for.
        Copy it before changing it."""
        if self._view is None and self._view_text is not None:
            self._view = Board.from_text(self._view_text)
        return self._view

    def _set_view(self, text: str | None) -> bool:
        """Take the server's view ``text``; True when it differs from the one held."""
        if text == self._view_text:
            return False
        self._view_text, self._view = text, None
        return True

    def _take_ack(self, ack: p.Ack) -> None:
        if ack.code == self.code and ack.seq >= self.seq:
            self.seq = ack.seq
            self._set_view(ack.view)
            me = self.me
            if me is not None:
                me.status, me.moves, me.score = ack.status, ack.moves, ack.score
            self._emit(ack)
            self._emit(ViewChanged(view=ack.view, seq=ack.seq))
        else:
            self._emit(ack)
        action = self._action
        if action is not None and ack.seq == action.seq and not action.future.done():
            if ack.move == _action_text(action.message):
                self._action = None
                action.future.set_result(ack)
            else:
                # another action of ours holds this seq (a copy applied after the client
                # had been told it failed): this one is still to do, as the next
                action.message = dataclasses.replace(action.message, seq=ack.seq + 1)
                self._spawn(self._send(action.message))

    def _take_joined(self, joined: p.Joined) -> None:
        new_race = joined.race.code != self.code
        if new_race:
            self._forget_race()
        self.code = joined.race.code
        self.role = joined.role
        since = self.version
        self.race = joined.race
        if joined.boards:
            self.boards.update(joined.boards)
        for data in joined.events:
            try:
                event = p.decode_event(data)
            except (ValueError, TypeError) as e:
                log.warning("ignored an undecodable event in joined: %s", e)
                continue
            if getattr(event, "version", 0) <= since:
                continue
            # the snapshot already holds these; apply only what is newer than it
            if event.version > joined.race.version:
                self._apply_event(event)
            else:
                self._keep_event_data(event)
            self._emit(event)
        self.version = max(self.version, joined.race.version)
        if joined.view is not None and (
            joined.seq >= self.seq or new_race or self._view_text is None
        ):
            self.seq = joined.seq
            if self._set_view(joined.view):
                self._emit(ViewChanged(view=joined.view, seq=joined.seq))

    def _take_event(self, event: Any) -> None:
        if event.race != self.code:
            return
        if event.version <= self.version:
            return  # seen already (a catch-up and the live stream may overlap)
        self._apply_event(event)
        self._emit(event)
        if isinstance(event, p.Started) and self.role == "player" and self._view_text is None:
            self._spawn(self._fetch_view())

    async def _fetch_view(self) -> None:
        """The server sends each player the deal (an ack with seq 0); ask for it by
        rejoining if it has not come soon."""
        with contextlib.suppress(SpiderClientError, TimeoutError):
            with contextlib.suppress(TimeoutError):
                await self.wait_until(lambda c: c.view is not None, timeout=self.resend_after / 5)
            if self.view is None:
                await self.refresh()

    def _apply_event(self, event: Any) -> None:
        race = self.race
        self.version = max(self.version, event.version)
        if race is None:
            return
        race.version = max(race.version, event.version)
        if isinstance(event, p.PlayerJoined | p.Progress):
            self._put_player(event.player)
        elif isinstance(event, p.PlayerLeft):
            if race.state in ("open", "countdown"):
                race.players = [i for i in race.players if i.player != event.player]
            else:
                for info in race.players:
                    if info.player == event.player:
                        info.status, info.connected = "left", False
        elif isinstance(event, p.PlayerReady):
            for info in race.players:
                if info.player == event.player:
                    info.ready = event.ready
            if not event.ready and race.state == "countdown":
                race.state, race.starts_at = "open", None
        elif isinstance(event, p.Countdown):
            race.state, race.starts_at = "countdown", event.starts_at
        elif isinstance(event, p.Started):
            race.state, race.starts_at, race.ends_at = "running", event.started_at, event.ends_at
            race.commitment = event.commitment
            for info in race.players:
                if info.status == "waiting":
                    info.status = "playing"
        elif isinstance(event, p.BoardShown):
            self.boards[event.player] = event.view
        elif isinstance(event, p.Prepared):
            race.preparing, race.commitment = False, event.commitment
        elif isinstance(event, p.Finished):
            race.state = "finished"
            race.results = event.results
            race.seed, race.salt, race.replays = event.seed, event.salt, event.replays
            race.commitment = event.commitment
            self._keep_event_data(event)
            for result in event.results:
                for info in race.players:
                    if info.player == result.player:
                        info.status = result.status

    def _keep_event_data(self, event: Any) -> None:
        if isinstance(event, p.BoardShown):
            self.boards.setdefault(event.player, event.view)
        elif isinstance(event, p.Finished) and event.boards:
            self.boards.update(event.boards)

    def _put_player(self, info: p.PlayerInfo) -> None:
        assert self.race is not None
        players = self.race.players
        for i, old in enumerate(players):
            if old.player == info.player:
                players[i] = info
                return
        players.append(info)

    def _forget_race(self) -> None:
        self.code = self.role = None
        self.race = None
        self._set_view(None)
        self.seq = 0
        self.version = 0
        self.boards = {}

    # -- plumbing ---------------------------------------------------------------------------

    def _emit(self, event: Any) -> None:
        queue = self._queue
        if len(queue) >= self.max_unread:
            queue.popleft()  # nobody reads them: the oldest gives way
            self.dropped_events += 1
        queue.append(event)
        self._wake_reader()

    def _wake_reader(self) -> None:
        waiter = self._queue_waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _give_up(self, error: SpiderClientError) -> None:
        if self._lost is not None:
            return
        self._lost = error
        self._ws = None
        for request in self._requests.values():
            if not request.future.done():
                request.future.set_exception(error)
        self._requests.clear()
        if self._action is not None and not self._action.future.done():
            self._action.future.set_exception(error)
        self._action = None
        self._queue.append(_END)
        self._wake_reader()
        self._wake_waiters()
