"""The client's connection machinery: one websocket at a time, read, resumed when it drops.

:class:`Connection` (the base of :class:`~spider_client.Client`) opens a websocket to the
first URL that answers and says ``hello``; its reader task takes every frame in: the
messages go to the :class:`~spider_client.mirror.RaceMirror` (the race and the view), to
the :class:`~spider_client.outbox.Outbox` (the answers to requests and actions) and to the
queue that :meth:`Connection.events` yields. When the connection drops it tries the URLs in
turn with backoff, says ``hello`` with its token, rejoins its race from the last version
seen and has the outbox send again what waits; when it gives up, everything waiting fails
and the events end. The behaviour is told in :mod:`spider_client.client`.

Once it follows a race, the URLs it opens name it (:mod:`spider_client.affinity`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Self

import msgpack
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from . import protocol as p
from ._wire import open_websocket
from .affinity import CONNECT_ERRORS as _CONNECT_ERRORS
from .affinity import RaceAffinity, race_url
from .errors import (
    BadToken,
    ConnectFailed,
    ConnectionLost,
    ServerError,
    SpiderClientError,
    error_from_message,
)
from .events import Disconnected, Event, Reconnected
from .mirror import RaceMirror
from .outbox import ActionMessage, Outbox

__all__ = ["Connection"]

log = logging.getLogger("spider_client")

_TRY_AGAIN = frozenset({"unavailable", "rate_limited"})
"""A reconnect's rejoin answered with one of these is a failed attempt: tried again."""


class _RejoinLater(Exception):
    """The rejoin of a reconnect was answered with one of :data:`_TRY_AGAIN`."""

_END = object()
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


class Connection(RaceAffinity):
    """A connection to a spider-race server that resumes itself, speaking for one player;
    the options are :class:`~spider_client.Client`'s."""

    def __init__(
        self,
        urls: str | Sequence[str],
        *,
        name: str | None = None,
        token: str | None = None,
        bot: bool = False,
        reconnect_timeout: float | None = 60.0,
        backoff_initial: float = 0.05,
        backoff_max: float = 2.0,
        request_timeout: float | None = 30.0,
        open_timeout: float = 10.0,
        resend_after: float = 5.0,
        rate_limit_pause: float = 1.0,
        max_unread: int = 10_000,
        affinity: bool = True,
    ) -> None:
        self.urls: list[str] = [urls] if isinstance(urls, str) else list(urls)
        if not self.urls:
            raise ValueError("at least one URL")
        self.mirror = RaceMirror()
        """The race and the player's view, kept from what the server sends."""
        self.name = name
        self.token = token
        """The session token: keep it to come back as the same player."""
        self.bot = bot
        """Whether the hello says the player is a bot (a program plays)."""
        self.node: str | None = None
        """The server node the connection is on."""
        self.url: str | None = None
        self.reconnect_timeout = reconnect_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.request_timeout = request_timeout
        self.open_timeout = open_timeout
        self.max_unread = max_unread
        """Events kept for :meth:`events` until read; beyond, the oldest give way."""
        self.dropped_events = 0
        """Events that gave way, unread (a client that never reads its events keeps only
        the last ``max_unread``)."""
        self.reconnects = 0
        self.affinity = affinity
        """Open the followed race's URL (``?race=CODE``) and move there after joining."""
        self.moves = 0
        """Times the client moved to its race's URL (not counted in :attr:`reconnects`)."""

        self._url_index = 0
        self._ws: ClientConnection | None = None
        self._outbox = Outbox(
            lambda: self._ws, resend_after=resend_after, rate_limit_pause=rate_limit_pause
        )
        self._reader: asyncio.Task[None] | None = None
        self._queue: collections.deque[Any] = collections.deque()
        """What :meth:`events` yields next (at most ``max_unread``, then ``_END``)."""
        self._queue_waiter: asyncio.Future[None] | None = None
        self._changed = asyncio.Event()
        self._waiting = 0
        """Callers of :meth:`wait_until` waiting now (the messages wake them)."""
        self._clock_offset = 0.0
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def player(self) -> str | None:
        """The player id the server gave this connection."""
        return self.mirror.player

    @player.setter
    def player(self, value: str | None) -> None:
        self.mirror.player = value

    @property
    def resend_after(self) -> float:
        """Seconds without an answer after which a request or action is sent again."""
        return self._outbox.resend_after

    @resend_after.setter
    def resend_after(self, value: float) -> None:
        self._outbox.resend_after = value

    @property
    def rate_limit_pause(self) -> float:
        """Seconds nothing is sent after the server said ``rate_limited``."""
        return self._outbox.rate_limit_pause

    @rate_limit_pause.setter
    def rate_limit_pause(self, value: float) -> None:
        self._outbox.rate_limit_pause = value

    @property
    def send_interval(self) -> float:
        """Seconds kept between two frames sent; 0 at first, it grows each time the server
        says ``rate_limited``."""
        return self._outbox.send_interval

    @send_interval.setter
    def send_interval(self, value: float) -> None:
        self._outbox.send_interval = value

    @property
    def _closing(self) -> bool:
        """:meth:`close` was called: nothing reconnects."""
        return self._outbox.closing

    @property
    def connected(self) -> bool:
        return self._ws is not None and self._outbox.lost is None

    def server_now(self) -> float:
        """The server's clock now (seconds since the epoch), as estimated at the welcome."""
        return time.time() + self._clock_offset

    # -- connecting -------------------------------------------------------------------------

    async def _open_first(self) -> None:
        """Connect to the first URL that answers (trying each once) and start reading.
        Raises :class:`ConnectFailed` when none answers, :class:`BadToken` for a token the
        server refuses."""
        errors: list[str] = []
        for _ in self.urls:
            url_now = self._next_url()
            try:
                ws = await self._open(url_now)
            except ServerError:
                raise
            except _CONNECT_ERRORS as e:
                errors.append(f"{url_now}: {e}")
                continue
            self._ws = ws
            self._reader = asyncio.create_task(self._run(), name="spider-client-reader")
            return
        raise ConnectFailed("no server answered: " + "; ".join(errors))

    def _next_url(self) -> str:
        url = self.urls[self._url_index % len(self.urls)]
        self._url_index += 1
        return url

    async def _open(self, url: str) -> ClientConnection:
        """Open a websocket to ``url`` (with the followed race's ``?race=CODE``, for
        affinity) and say hello; returns it after the welcome."""
        opened = race_url(url, self.mirror.code) if self.affinity else url
        ws, welcome = await self._hello(opened)
        self._welcomed(opened, welcome)
        return ws

    async def _hello(self, url: str) -> tuple[ClientConnection, p.Welcome]:
        """Open a websocket to ``url`` and say hello; returns it and the welcome."""
        ws = await open_websocket(url, open_timeout=self.open_timeout)
        try:
            await ws.send(
                p.encode(p.Hello(name=self.name, token=self.token, together=True, bot=self.bot))
            )
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
        return ws, message

    def _welcomed(self, url: str, message: p.Welcome) -> None:
        """Take in the welcome of the connection to ``url``."""
        self.player = message.player
        self.name = message.name
        self.token = message.token
        self.node = message.node
        self.url = url
        self._clock_offset = message.server_time - time.time()

    async def close(self) -> None:
        """Close the connection for good: nothing reconnects, everything waiting fails with
        :class:`ConnectionLost`, and :meth:`events` ends. Idempotent."""
        self._outbox.closing = True
        ws = self._ws
        if ws is not None:
            await ws.close()
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        for task in list(self._tasks):
            task.cancel()
        self._outbox.stop()
        self._give_up(ConnectionLost("the client was closed"))

    # -- what comes in ----------------------------------------------------------------------

    async def wait_until(
        self, predicate: Callable[[Self], bool], *, timeout: float | None = None
    ) -> None:
        """Wait until ``predicate(client)`` holds; it is checked now and after every message
        the client takes in. Raises :class:`ConnectionLost` if the client gives up first,
        :class:`TimeoutError` after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while not predicate(self):
                if self._outbox.lost is not None:
                    raise self._outbox.lost
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

    # -- asking -----------------------------------------------------------------------------

    async def _request(self, make: Callable[[int], Any], *, repeatable: bool = True) -> Any:
        return await self._outbox.request(make, repeatable=repeatable, timeout=self.request_timeout)

    async def _act(self, make: Callable[[int], ActionMessage]) -> p.Ack:
        """Send the action ``make(seq)`` builds with the player's next ``seq``."""
        return await self._outbox.act(lambda: make(self.mirror.seq + 1))

    async def _join(self, code: str, role: str) -> p.Joined:
        """Join the race ``code`` as ``role`` (again: caught up from the last version seen)."""
        mirror = self.mirror
        since = mirror.version if code == mirror.code and role == mirror.role else None
        reply: p.Joined = await self._request(
            lambda req: p.Join(req=req, code=code, role=role, since=since)  # type: ignore[arg-type]
        )
        await self._follow()
        return reply

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
                if self._ws is not ws and self._ws is not None:
                    continue  # moved to the race's URL (:meth:`_follow`)
                self._ws = None
                code, reason = ws.close_code, ws.close_reason or ""
                log.info("connection to %s dropped (%s %s)", self.url, code, reason)
                self._emit(Disconnected(code=code, reason=reason, reconnecting=True))
                self._outbox.interrupt()
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
                except (ConnectionClosed, TimeoutError, _RejoinLater) as e:
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
        mirror = self.mirror
        if mirror.code is not None and mirror.role is not None:
            since = mirror.version
            event.since = since
            reply = await self._rejoin(ws, mirror.code, mirror.role, since)
            if isinstance(reply, p.Error) and reply.error in _TRY_AGAIN:
                raise _RejoinLater(f"rejoining race {mirror.code}: {reply.message}")
            if isinstance(reply, p.Error):  # what waits is sent again all the same
                log.warning("rejoining race %s on %s: %s", mirror.code, url, reply.message)
            if isinstance(reply, p.Joined):
                event.caught_up = sum(1 for e in reply.events if e.get("version", 0) > since)
                event.snapshot = not reply.events and reply.race.version > since
        self._ws = ws
        self.reconnects += 1
        event.resent = await self._outbox.resend_all(ws)
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

    def _take(self, message: Any) -> None:
        """One message: first what it changes in the race and the view (the events it
        gives are queued), then the request or action it answers."""
        taken = self.mirror.take(message)
        for event in taken:
            self._emit(event)
        outbox = self._outbox
        if isinstance(message, p.Ack):
            outbox.take_ack(message)
        elif isinstance(message, _REPLIES):
            outbox.resolve(message.req, message)
        elif isinstance(message, p.Matched | p.OpenRaceChanged):
            self._lobby_message(message)
        elif isinstance(message, p.Error):
            if not outbox.take_error(message):
                self._emit(message)
        elif (
            isinstance(message, p.Started)
            and taken
            and self.mirror.role == "player"
            and self.mirror.view_text is None
        ):
            self._spawn(self._fetch_view())

    def _lobby_message(self, message: p.Matched | p.OpenRaceChanged) -> None:
        """A ``matched`` or ``open_race`` message (the lobby's client keeps them)."""
        self._emit(message)

    async def _fetch_view(self) -> None:
        """The server sends each player the deal (an ack with seq 0); ask for it by
        rejoining if it has not come soon."""
        mirror = self.mirror
        with contextlib.suppress(SpiderClientError, TimeoutError):
            with contextlib.suppress(TimeoutError):
                await self.wait_until(
                    lambda c: c.mirror.view is not None, timeout=self.resend_after / 5
                )
            if mirror.view is None and mirror.code is not None and mirror.role is not None:
                await self._join(mirror.code, mirror.role)

    # -- plumbing ---------------------------------------------------------------------------

    def _wake_waiters(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

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
        if self._outbox.lost is not None:
            return
        self._ws = None
        self._outbox.give_up(error)
        self._queue.append(_END)
        self._wake_reader()
        self._wake_waiters()
