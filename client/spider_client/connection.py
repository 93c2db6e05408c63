"""The client's link to the server: one websocket at a time, read, resumed when it drops.

:class:`Connection` opens a websocket to the first URL that answers and says ``hello``; its
reader task takes every frame in and hands each message to the client (``receive``). When
the connection drops it tries the URLs in turn with backoff, says ``hello`` with its token,
rejoins its race from the last version seen and has the outbox send again what waits; when
it gives up, everything waiting fails and the client's events end. The behaviour is told
in :mod:`spider_client.client`, which makes one of these a part of every client.

Once it follows a race, the URLs it opens name it (``?race=CODE``,
:mod:`spider_client.affinity`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import time
import urllib.parse
from collections.abc import Sequence
from typing import Any, Literal, Protocol

import msgpack
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from . import protocol as p
from ._wire import open_websocket
from .errors import (
    BadToken,
    ConnectFailed,
    ConnectionLost,
    RateLimited,
    ServerError,
    SpiderClientError,
    error_from_message,
)
from .events import Disconnected, Event, Reconnected
from .feed import EventFeed
from .mirror import RaceMirror
from .options import ClientOptions
from .outbox import Outbox

__all__ = ["CLOSE_TRY_LATER", "CONNECT_ERRORS", "Connection", "Receiver", "race_url", "retry_after"]

log = logging.getLogger("spider_client")

CONNECT_ERRORS = (
    OSError,
    InvalidHandshake,
    InvalidURI,
    ConnectionClosed,
    TimeoutError,
    ServerError,
    ValueError,
)
"""What a failed attempt to connect and say hello may raise."""

_TRY_AGAIN = frozenset({"unavailable", "rate_limited"})
"""A reconnect's rejoin answered with one of these is a failed attempt: tried again."""

Role = Literal["player", "spectator"]
"""A member's role in a race."""


CLOSE_TRY_LATER = 1013
"""The server's close of a refused hello: its reason starts ``retry after N s``."""

_RETRY = re.compile(r"retry after (\d+(?:\.\d+)?) s")


def retry_after(error: BaseException) -> float | None:
    """Seconds the server asked to wait before connecting again, for a failed attempt: a
    ``Retry-After`` of an HTTP 429 or 503 before the upgrade, or the time a close with
    1013 named (set on the error by :meth:`Connection.hello`); None when it named none."""
    if isinstance(error, InvalidStatus) and error.response.status_code in (429, 503):
        value = error.response.headers.get("Retry-After", "")
        return float(value) if value.isdigit() else None
    wait = getattr(error, "retry_after", None)
    return float(wait) if isinstance(wait, int | float) else None


class _RejoinLater(Exception):
    """The rejoin of a reconnect was answered with one of :data:`_TRY_AGAIN`."""


class Receiver(Protocol):
    """What takes each message the server sends (the client)."""

    def __call__(self, message: Any) -> None: ...


def race_url(url: str, code: str | None) -> str:
    """``url`` with its ``race`` query parameter set to ``code`` (the other parameters
    kept); ``url`` itself when ``code`` is None."""
    if code is None:
        return url
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "race"]
    query.append(("race", code))
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


class Connection:
    """The websocket of one client, resumed when it drops (see the module's docstring);
    ``options`` are the client's."""

    def __init__(
        self,
        urls: str | Sequence[str],
        options: ClientOptions,
        *,
        mirror: RaceMirror,
        outbox: Outbox,
        feed: EventFeed[Event],
        receive: Receiver,
    ) -> None:
        self.urls: list[str] = [urls] if isinstance(urls, str) else list(urls)
        if not self.urls:
            raise ValueError("at least one URL")
        self.options = options
        self.name = options.name
        self.token = options.token
        """The session token: keep it to come back as the same player."""
        self.node: str | None = None
        """The server node the connection is on."""
        self.url: str | None = None
        """The URL of the connection now."""
        self.ws: ClientConnection | None = None
        """The websocket now (None while there is none)."""
        self.reconnects = 0
        self._mirror = mirror
        self._outbox = outbox
        self._feed = feed
        self._receive = receive
        self._url_index = 0
        self._reader: asyncio.Task[None] | None = None
        self._clock_offset = 0.0

    @property
    def connected(self) -> bool:
        return self.ws is not None and self._outbox.lost is None

    def server_now(self) -> float:
        """The server's clock now (seconds since the epoch), as estimated at the welcome."""
        return time.time() + self._clock_offset

    # -- connecting -------------------------------------------------------------------------

    async def open_first(self) -> None:
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
            except CONNECT_ERRORS as e:
                errors.append(f"{url_now}: {e}")
                continue
            self.ws = ws
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
        opened = race_url(url, self._mirror.code) if self.options.affinity else url
        ws, welcome = await self.hello(opened)
        self.welcomed(opened, welcome)
        return ws

    async def hello(self, url: str) -> tuple[ClientConnection, p.Welcome]:
        """Open a websocket to ``url`` and say hello; returns it and the welcome."""
        timeout = self.options.open_timeout
        ws = await open_websocket(url, open_timeout=timeout)
        try:
            hello = p.Hello(name=self.name, token=self.token, together=True, bot=self.options.bot)
            await ws.send(p.encode(hello))
            async with asyncio.timeout(timeout):
                frame = await ws.recv()
            message = p.decode(frame if isinstance(frame, bytes) else frame.encode())
            if isinstance(message, p.Error):
                raise error_from_message(message)
            if not isinstance(message, p.Welcome):
                raise ConnectionClosed(None, None)
        except BaseException as e:
            await ws.close()
            found = _RETRY.match(ws.close_reason or "")
            if ws.close_code == CLOSE_TRY_LATER and found and isinstance(e, RateLimited):
                e.retry_after = float(found.group(1))
            raise
        return ws, message

    def welcomed(self, url: str, message: p.Welcome) -> None:
        """Take in the welcome of the connection to ``url``."""
        self._mirror.player = message.player
        self.name = message.name
        self.token = message.token
        self.node = message.node
        self.url = url
        self._clock_offset = message.server_time - time.time()

    async def rejoin(
        self, ws: ClientConnection, code: str, role: Role, since: int, *, moved: bool = False
    ) -> p.Joined | p.Error:
        """Send a join of ``code`` since ``since`` on ``ws`` and return its reply (a
        ``joined`` or an ``error``), taking in what comes meanwhile."""
        req = self._outbox.next_req()
        await ws.send(p.encode(p.Join(req=req, code=code, role=role, since=since, moved=moved)))
        while True:
            for message in self._dispatch(await ws.recv()):
                if isinstance(message, p.Joined | p.Error) and message.req == req:
                    return message

    async def close(self) -> None:
        """Close the connection for good: nothing reconnects, everything waiting fails with
        :class:`ConnectionLost`, and the events end. Idempotent."""
        self._outbox.closing = True
        ws = self.ws
        if ws is not None:
            await ws.close()
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        self._outbox.stop()
        self.give_up(ConnectionLost("the client was closed"))

    # -- reading ----------------------------------------------------------------------------

    async def _run(self) -> None:
        try:
            while True:
                ws = self.ws
                assert ws is not None
                with contextlib.suppress(ConnectionClosed):
                    async for frame in ws:
                        self._dispatch(frame)
                if self._outbox.closing:
                    return
                if self.ws is not ws and self.ws is not None:
                    continue  # moved to the race's URL (:meth:`move_to`)
                self.ws = None
                code, reason = ws.close_code, ws.close_reason or ""
                log.info("connection to %s dropped (%s %s)", self.url, code, reason)
                self._feed.emit(Disconnected(code=code, reason=reason, reconnecting=True))
                self._outbox.interrupt()
                await self._reconnect()
        except ConnectionLost as e:
            self._feed.emit(Disconnected(code=None, reason=str(e), reconnecting=False))
            self.give_up(e)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug here must not leave callers waiting forever
            log.exception("the client's reader failed")
            self.give_up(ConnectionLost(f"the client failed: {e!r}"))
        finally:
            if self._outbox.closing:
                self.give_up(ConnectionLost("the client was closed"))

    async def _reconnect(self) -> None:
        """Connect again (backoff over the URL list), resume the race, resend; raises
        :class:`ConnectionLost` when it gives up."""
        loop = asyncio.get_running_loop()
        options = self.options
        timeout = options.reconnect_timeout
        deadline = None if timeout is None else loop.time() + timeout
        delay = options.backoff_initial
        attempts = 0
        while True:
            if self._outbox.closing:
                raise ConnectionLost("the client was closed")
            url = self._next_url()
            attempts += 1
            try:
                ws = await self._open(url)
            except BadToken as e:
                raise ConnectionLost(f"the server refused the session token: {e}") from e
            except CONNECT_ERRORS as e:
                failure: Exception = e
            else:
                try:
                    async with asyncio.timeout(options.open_timeout):
                        await self._resume(ws, url, attempts)
                    return
                except (ConnectionClosed, TimeoutError, _RejoinLater) as e:
                    self.ws = None
                    await ws.close()
                    failure = e
            log.info("reconnect to %s failed: %r", url, failure)
            if deadline is not None and loop.time() >= deadline:
                raise ConnectionLost(f"gave up reconnecting after {attempts} attempts") from failure
            wait = retry_after(failure)
            if wait is not None:  # refused for now: not again before the time it named
                await asyncio.sleep(wait * random.uniform(1.0, 1.25))
                delay = min(delay * 2, options.backoff_max)
            elif attempts % len(self.urls) == 0:  # every URL tried once more: back off
                await asyncio.sleep(delay * random.uniform(0.5, 1.0))
                delay = min(delay * 2, options.backoff_max)

    async def _resume(self, ws: ClientConnection, url: str, attempts: int) -> None:
        """Rejoin the race on a new connection, then send again what waits for an answer
        (an action sent before the rejoin would be refused: not a player yet)."""
        event = Reconnected(url=url, node=self.node or "", attempts=attempts)
        mirror = self._mirror
        if mirror.code is not None and mirror.role is not None:
            since = mirror.version
            event.since = since
            reply = await self.rejoin(ws, mirror.code, mirror.role, since)
            if isinstance(reply, p.Error) and reply.error in _TRY_AGAIN:
                raise _RejoinLater(f"rejoining race {mirror.code}: {reply.message}")
            if isinstance(reply, p.Error):  # what waits is sent again all the same
                log.warning("rejoining race %s on %s: %s", mirror.code, url, reply.message)
            if isinstance(reply, p.Joined):
                event.caught_up = sum(1 for e in reply.events if e.get("version", 0) > since)
                event.snapshot = not reply.events and reply.race.version > since
        self.ws = ws
        self.reconnects += 1
        event.resent = await self._outbox.resend_all(ws)
        self._feed.emit(event)

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
                self._receive(message)
        finally:
            self._feed.changed()
        return messages

    def move_to(self, ws: ClientConnection, url: str, welcome: p.Welcome) -> None:
        """Send on ``ws`` from now on (the race's URL, welcomed): the reader goes on with
        it once the old connection is closed."""
        self.welcomed(url, welcome)
        self.ws = ws

    def give_up(self, error: SpiderClientError) -> None:
        """Everything waiting fails with ``error``, and the events end."""
        if self._outbox.lost is not None:
            return
        self.ws = None
        self._outbox.give_up(error)
        self._feed.end(error)
