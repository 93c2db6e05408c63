"""A server node: the websockets server, its connections, and the race timers.

One :class:`Node` serves websocket connections on ``/ws`` and plain HTTP ``GET /healthz``,
``GET /metrics`` and the browser page's files (the package's ``static`` folder, ``/`` being
``index.html``) on the same port. Every node of a deployment shares one Redis and one
token secret; any node serves any race. A connection's messages are handled one at a
time, in order; replies and race events go out through one queue per connection, so a
slow reader never blocks a race (a reader too slow to keep up is closed).

Transitions that are due at a time (a countdown's end, a race's time limit) or when every
game is over are performed by whichever node gets there first: each node looks every
``tick`` at the races its connections watch and tries; the check-and-set on the race's
version lets exactly one succeed. A race nobody watches makes its transitions when someone
next joins it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import mimetypes
import re
import time
import unicodedata
from collections import Counter
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import websockets
from redis.exceptions import RedisError
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.http11 import Request, Response
from websockets.protocol import State as WsState

from spider_client.protocol import (
    PROTOCOL_VERSION,
    Ack,
    CreateRace,
    DailyRace,
    Done,
    Error,
    Hello,
    Hint,
    HintReply,
    Join,
    Joined,
    Leaderboard,
    LeaderboardEntry,
    LeaderboardReply,
    Leave,
    MoveAction,
    Progress,
    Ready,
    Resign,
    Undo,
    Welcome,
    encode,
)
from spider_engine import Board, VariantError, find_variant
from spider_engine.solver import hint as solver_hint

from . import pool as proven
from . import race as rules
from . import redisconn
from .errors import (
    BadFrame,
    Conflict,
    GameOver,
    HintsNotAllowed,
    InvalidMessage,
    NotAPlayer,
    OutOfOrder,
    ProtocolViolation,
    RaceNotFound,
    RequestError,
    TooManyRaces,
    Unavailable,
    WrongState,
)
from .hub import EventFrame, Hub, RaceWatch, Subscription, array_header, wire_frame
from .limits import TokenBucket
from .metrics import Metrics
from .race import TERMINAL, Game, Limits, Race, RaceState
from .settings import Settings
from .store import Store, stamp
from .tokens import Identity, issue, new_player_id, verify
from .validation import parse_frame

__all__ = ["Node", "Connection"]

log = logging.getLogger(__name__)

RELEASE_CHUNK = 64
"""Connections whose held progress one turn of the event loop releases at most."""
HOLD_SLACK = 0.002
"""Seconds before its due time a hold may be released with others (fewer timer calls)."""

WS_PATH = "/ws"
MAX_NAME = 32
CLOSE_RESTART = 1012
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_PROTOCOL = 1002
CLOSE_GOING_AWAY = 1001


STATIC = Path(__file__).resolve().parent / "static"
_STATIC_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


def _static_file(path: str) -> Path | None:
    """The browser page's file for a URL path (``/`` and a race's shareable link
    ``/r/<code>`` are ``index.html``), if it exists; only plain names inside the package's
    ``static`` folder are ever served."""
    parts = [part for part in path.split("/") if part]
    if not parts or (len(parts) == 2 and parts[0] == "r" and rules.normalize_code(parts[1])):
        parts = ["index.html"]
    if not all(_STATIC_NAME.fullmatch(part) for part in parts):
        return None
    candidate = STATIC.joinpath(*parts)
    return candidate if candidate.is_file() else None


def _name(text: str) -> str:
    """A display name as given, trimmed; InvalidMessage when empty, too long or not
    printable."""
    name = unicodedata.normalize("NFC", text).strip()
    if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        raise InvalidMessage(f"name: 1 to {MAX_NAME} printable characters")
    return name


class Node:
    """One server node. ``await start()`` listens; ``await close()`` closes every connection
    with 1012 (clients reconnect to this or another node) and stops."""

    def __init__(self, settings: Settings, *, redis_url: str, secret: bytes) -> None:
        self.settings = settings
        self.redis_url = redis_url
        self.secret = secret
        self.limits = Limits(
            max_players=settings.max_players,
            max_time_limit=settings.max_time_limit,
            max_countdown=settings.max_countdown,
        )
        self.metrics = Metrics()
        self.connections: set[Connection] = set()
        # Every write is a check-and-set, so a command retried after a lost reply is safe.
        self.redis: Any = redisconn.connect(redis_url)
        # health checks ask once, quickly, without retries
        self._health: Any = redisconn.connect(redis_url, health=True)
        self.store = Store(self.redis, settings, clock=self.now)
        self.hub = Hub(self.redis, self.store, node=settings.node, on_event=self._on_event)
        self.pool = proven.Pool(self)
        """Proven-winnable seeds: winnable races and the daily deals."""
        self.server: Server | None = None
        self.offset = 0.0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loops: list[asyncio.Task[Any]] = []
        self._advancing: set[str] = set()
        self._closed = False
        self._idle = asyncio.Event()
        """Set whenever the last connection ends."""
        self._gc_started = 0.0
        self._unflushed: list[Connection] = []
        """Connections with frames to write at the end of this turn of the event loop."""
        self._holding: dict[Connection, float] = {}
        """Connections holding progress (see :meth:`Connection.send_progress`), with the
        loop time each started holding, oldest first."""
        self._release_timer: asyncio.TimerHandle | None = None

    # -- life -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect to Redis, start the fan-out and the timers, and listen."""
        with contextlib.suppress(Unavailable):
            await self._measure_clock()
        await self.hub.start()
        gc.callbacks.append(self._gc_timer)
        loop = asyncio.get_running_loop()
        self._loops = [
            loop.create_task(self._tick_loop()),
            loop.create_task(self._sweep_loop()),
            loop.create_task(self._presence_loop()),
            loop.create_task(self._lag_loop()),
            loop.create_task(self.pool.run()),
        ]
        s = self.settings
        self.server = await serve(
            self._handle,
            s.host,
            s.port,
            process_request=self._process_request,
            max_size=max(s.max_frame * 16, 65536),
            ping_interval=s.ping_interval,
            ping_timeout=s.ping_timeout,
            compression=None,
        )

    def _gc_timer(self, phase: str, info: dict[str, int]) -> None:
        """Times the garbage collector's pauses (``spider_gc_pause_seconds``)."""
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            self.metrics.gc_seconds.observe(time.perf_counter() - self._gc_started)
            self._gc_started = 0.0

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self, *, code: int = CLOSE_RESTART, timeout: float = 10.0) -> None:
        """Stop accepting, close every connection with ``code``, stop the timers (they get
        ``timeout`` seconds), disconnect from Redis. Idempotent."""
        if self.server is not None:
            self.server.close(close_connections=True, code=code, reason="server restarting")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self.server.wait_closed()
                    while self.connections:  # their handlers' last steps
                        self._idle.clear()
                        await self._idle.wait()
        self._closed = True
        if self._release_timer is not None:
            self._release_timer.cancel()
            self._release_timer = None
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._gc_timer)
        self.pool.close()  # its loop ends even if a cancellation is lost in a timeout
        for task in self._loops:
            task.cancel()
        if self._tasks:  # background work (transitions, presence) gets a short deadline
            await asyncio.wait(list(self._tasks), timeout=min(timeout, 2.0))
        for task in list(self._tasks):
            task.cancel()
        for task in [*self._loops, *self._tasks]:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._loops = []
        await self.hub.close()
        await self.store.aclose()
        for client in (self.redis, self._health):
            with contextlib.suppress(Exception):
                await client.aclose()

    def to_flush(self, conn: Connection) -> None:
        """Write ``conn``'s gathered frames at the end of this turn of the event loop: the
        frames one turn sends a connection (an ack, the progress of several players) go out
        in one write."""
        if not self._unflushed:
            asyncio.get_running_loop().call_soon(self.flush_writes)
        self._unflushed.append(conn)

    def hold(self, conn: Connection) -> None:
        """``conn`` holds progress: release it ``progress_interval`` after it started
        holding. Each connection is released on its own time, so the frames of many
        connections do not all leave (and reach their clients) at the same moment."""
        if conn in self._holding:
            return
        loop = asyncio.get_running_loop()
        self._holding[conn] = loop.time()
        if self._release_timer is None and not self._closed:
            self._release_timer = loop.call_later(
                self.settings.progress_interval, self._release_held
            )

    def _release_held(self) -> None:
        """Release the connections whose hold is due (the oldest first, at most
        :data:`RELEASE_CHUNK` a turn of the event loop); then wait for the next one due."""
        self._release_timer = None
        loop = asyncio.get_running_loop()
        holding = self._holding
        due = loop.time() - self.settings.progress_interval + HOLD_SLACK
        released = 0
        while holding:
            conn, since = next(iter(holding.items()))
            if since > due:
                break
            if released == RELEASE_CHUNK:
                since = due - HOLD_SLACK  # more are due: go on in the next turn
                break
            del holding[conn]
            conn.release_progress()
            released += 1
        if holding and not self._closed:
            delay = since + self.settings.progress_interval - loop.time()
            self._release_timer = loop.call_later(max(0.0, delay), self._release_held)

    def flush_writes(self) -> None:
        unflushed, self._unflushed = self._unflushed, []
        for conn in unflushed:
            conn.flush()

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
        """Run ``coro`` in the background, kept until done; failures are logged. Once the
        node is closed, nothing more runs (None)."""
        if self._closed:
            coro.close()
            return None
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if not isinstance(exc, (Unavailable, websockets.ConnectionClosed)):
                log.error("background task failed", exc_info=exc)

    # -- time -------------------------------------------------------------------------------

    def now(self) -> float:
        """The deployment's time: this machine's clock corrected to Redis's."""
        return time.time() + self.offset

    async def _measure_clock(self) -> None:
        before = time.time()
        redis_now = await self.store.now()
        after = time.time()
        self.offset = redis_now - (before + after) / 2

    # -- HTTP -------------------------------------------------------------------------------

    async def _process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        path = request.path.split("?", 1)[0]
        if path == WS_PATH:
            return None
        if path == "/healthz":
            if await self.redis_answers():
                return connection.respond(200, "ok\n")
            return connection.respond(503, "redis is not answering\n")
        if path == "/metrics":
            body = self.metrics.render(
                self.races_by_state(), self.subscriptions(), self.backlog()
            ).encode()
            headers = Headers(
                [
                    ("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                    ("Content-Length", str(len(body))),
                ]
            )
            return Response(200, "OK", headers, body)
        static = _static_file(path)
        if static is not None:
            body = static.read_bytes()
            kind = mimetypes.guess_type(static.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind == "application/javascript":
                kind += "; charset=utf-8"
            headers = Headers([("Content-Type", kind), ("Content-Length", str(len(body)))])
            return Response(200, "OK", headers, body)
        return connection.respond(404, "not found\n")

    async def redis_answers(self) -> bool:
        """Whether Redis answers PING now (one try, within a second)."""
        try:
            return bool(await self._health.ping())
        except (RedisError, OSError):
            return False

    def races_by_state(self) -> Counter[str]:
        return Counter(w.state for w in self.hub.watches.values() if w.state)

    def subscriptions(self) -> Counter[str]:
        """Connections following a race here, by role (player, spectator)."""
        return Counter(s.role for w in self.hub.watches.values() for s in w.subs)

    def backlog(self) -> tuple[int, int]:
        """Connections whose frames wait for their reader (the socket takes no more, or
        frames are queued behind one that waits), and the frames waiting in all."""
        waiting = frames = 0
        for conn in self.connections:
            queued = conn.waiting()
            if queued or conn.ws.paused:
                waiting += 1
                frames += queued
        return waiting, frames

    # -- connections ------------------------------------------------------------------------

    async def _handle(self, ws: ServerConnection) -> None:
        conn = Connection(self, ws)
        self.connections.add(conn)
        self.metrics.connections = len(self.connections)
        self.metrics.connections_total += 1
        try:
            await conn.run()
        finally:
            self.connections.discard(conn)
            self.metrics.connections = len(self.connections)
            if not self.connections:
                self._idle.set()

    # -- transitions ------------------------------------------------------------------------

    async def advance(self, code: str) -> Race | None:
        """The race now, after performing whatever transition is due (start or finish); None
        when there is no such race. Safe on every node at once: one commit wins."""
        race: Race | None = None
        for _ in range(20):
            race = await self.store.load_race(code)
            if race is None:
                return None
            now = self.now()
            due = rules.due_transition(race, now)
            if due is None:
                return race
            if due == "start":
                change = rules.start(race, now)
            else:
                games, replays = await self.store.load_games(race)
                hints = await self.store.load_hints(code) if race.options.hints else None
                change = rules.finish(race, games, replays, now, hints)
            try:
                await self.store.commit(change)
            except Conflict:
                continue
            self.metrics.transitions_total[due] += 1
            if change.finished and change.race.options.daily:
                await proven.record_daily(self.redis, change.race)
        return race

    def _on_event(self, watch: RaceWatch, event: EventFrame) -> None:
        if (
            event.type == "countdown"
            and watch.starts_at is not None
            and watch.starts_at <= self.now()
        ):
            self._try_advance(watch)

    def _try_advance(self, watch: RaceWatch) -> None:
        if watch.code in self._advancing:
            return
        watch.next_attempt = time.monotonic() + 0.5
        self._advancing.add(watch.code)

        async def run() -> None:
            try:
                if await self.advance(watch.code) is None:
                    watch.state = None  # the race is gone (everyone left): nothing is due
            finally:
                self._advancing.discard(watch.code)

        self.spawn(run())

    async def _tick_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.tick)
            now, mono = self.now(), time.monotonic()
            for watch in list(self.hub.watches.values()):
                if mono < watch.next_attempt:
                    continue
                due = (
                    watch.state == "countdown"
                    and watch.starts_at is not None
                    and now >= watch.starts_at
                ) or (
                    watch.state == "running"
                    and (
                        (watch.ends_at is not None and now >= watch.ends_at)
                        or (
                            bool(watch.statuses)
                            and all(s in TERMINAL for s in watch.statuses.values())
                        )
                    )
                )
                if due:
                    self._try_advance(watch)

    async def _sweep_loop(self) -> None:
        last_clock = time.monotonic()
        while True:
            await asyncio.sleep(self.settings.sweep_interval)
            try:
                await self.hub.sweep()
                if time.monotonic() - last_clock > 60:
                    last_clock = time.monotonic()
                    await self._measure_clock()
            except Unavailable:
                pass
            except Exception:
                log.exception("sweep failed")

    async def _lag_loop(self) -> None:
        """Measures how late a 100 ms timer fires (``spider_loop_lag_seconds``)."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + 0.1
            await asyncio.sleep(0.1)
            self.metrics.loop_lag.observe(max(0.0, loop.time() - due))

    async def _presence_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.presence_ttl / 3)
            items = [item for conn in list(self.connections) for item in conn.presence_items()]
            with contextlib.suppress(Unavailable):
                await self.hub.renew()
            with contextlib.suppress(Unavailable):
                await self.store.touch_presence(items, self.now())


class Connection:
    """One websocket connection: says hello, then joins races and acts in them."""

    _next_id = 0

    def __init__(self, node: Node, ws: ServerConnection) -> None:
        self.node = node
        self.ws = ws
        Connection._next_id += 1
        self.id = f"{node.settings.node}:{Connection._next_id}"
        s = node.settings
        self.identity: Identity | None = None
        self.subs: dict[str, Subscription] = {}
        self.bucket = TokenBucket(s.rate, s.burst)
        self.strikes = 0
        self.told_rate = False
        self.oversize = 0
        self.out: asyncio.Queue[bytes | tuple[int, str] | None] = asyncio.Queue()
        self._writing = False
        """The writer task is sending a frame it took from :attr:`out`."""
        self._wires: list[bytes] = []
        """Websocket frames to write at the end of this turn of the event loop."""
        self.closing = False
        self._held: dict[tuple[str, str], EventFrame] = {}
        """(race, player) -> the latest progress held back (see :meth:`send_progress`)."""
        self._progress_at = 0.0
        """Loop time of the last progress sent."""
        self.together = False
        """The client takes several events in one frame (it said so in ``hello``)."""
        self._known: dict[str, tuple[Race, Game, Board]] = {}
        """Race code -> the race, game and board as this connection's last action left
        them (see :meth:`_apply`)."""

    # -- sending ----------------------------------------------------------------------------

    def send(self, frame: bytes, wire: bytes | None = None) -> None:
        """Send a frame (``wire``: the same frame already built as a websocket frame).

        When nothing waits before it and the socket keeps up, the frame joins the others
        of this turn of the event loop, written together in one write at the turn's end
        (:meth:`Node.flush_writes`); otherwise it is queued for the writer task. A reader
        that lets ``send_queue`` frames pile up is closed."""
        if self.closing:
            return
        ws = self.ws
        if (
            not self._writing
            and self.out.empty()
            and not ws.paused
            and ws.protocol.state is WsState.OPEN
            and ws.send_in_progress is None
        ):
            if not self._wires:
                self.node.to_flush(self)
            self._wires.append(wire or wire_frame(frame))
            return
        self.flush()  # what was written before goes first
        if self.out.qsize() >= self.node.settings.send_queue:
            self.close_soon(CLOSE_POLICY, "too slow to read")
            # a reader that stopped may never take the close either: cut it after a while
            loop = asyncio.get_running_loop()
            loop.call_later(self.node.settings.write_timeout, self._cut)
            return
        self.out.put_nowait(frame)

    def waiting(self) -> int:
        """Frames waiting for the socket: queued, and the one the writer task is sending."""
        return self.out.qsize() + self._writing

    def send_event(self, event: EventFrame) -> None:
        """Send a race event (after any progress held, which comes before it)."""
        if self._held:
            self.release_progress()
        self.send(event.frame, event.wire)

    def send_progress(self, event: EventFrame) -> None:
        """Send a ``progress`` event to this player, or hold it when a progress went out
        less than ``progress_interval`` ago (or some is held): what is held goes out
        together within the interval (or before the next other event), the latest of each
        player only, in version order. A client skips versions it does not get (as it
        skips the spectators' events): nothing it keeps is lost, it is brought up to date
        later."""
        held = self._held
        if held:  # the node releases it with what is held already
            held[event.about] = event
            return
        now = asyncio.get_running_loop().time()
        if now - self._progress_at >= self.node.settings.progress_interval:
            self._progress_at = now
            self.send(event.frame, event.wire)
            return
        held[event.about] = event
        self.node.hold(self)

    def release_progress(self) -> None:
        """Send the progress held, in version order: in one frame (a msgpack array of the
        events) to a client that takes them so, one frame each to any other."""
        held = self._held
        if not held:
            return
        self._held = {}
        self._progress_at = asyncio.get_running_loop().time()
        events = sorted(held.values(), key=lambda e: e.version)
        if len(events) == 1 or not self.together:
            for event in events:  # one frame each (still one write)
                self.send(event.frame, event.wire)
            return
        self.send(array_header(len(events)) + b"".join(e.frame for e in events))

    def flush(self) -> None:
        """Write the frames gathered this turn, in one write."""
        wires = self._wires
        if not wires:
            return
        self._wires = []
        ws = self.ws
        transport = ws.transport
        if ws.protocol.state is not WsState.OPEN or transport.is_closing():
            return  # closing: after a close frame nothing more may be sent
        try:
            transport.write(wires[0] if len(wires) == 1 else b"".join(wires))
        except Exception:  # the link broke: the reader sees it and cleans up
            self._cut()

    def _cut(self) -> None:
        """Drop the connection at once (its writer may be stuck on a reader that stopped)."""
        transport = self.ws.transport
        if transport is not None and not transport.is_closing():
            transport.abort()

    def send_msg(self, message: object) -> None:
        self.send(encode(message))

    def close_soon(self, code: int, reason: str) -> None:
        """Close after the frames already queued are sent."""
        if self.closing:
            return
        self.flush()
        self.closing = True
        self.node.metrics.closed_total[code] += 1
        self.out.put_nowait((code, reason))

    async def _writer(self) -> None:
        while True:
            item = await self.out.get()
            if item is None:
                return
            self._writing = True
            try:
                if isinstance(item, tuple):
                    await self.ws.close(*item)
                    return
                await self.ws.send(item)
            except websockets.ConnectionClosed:
                return
            finally:
                self._writing = False

    # -- reading ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Read and handle frames until the connection closes; then stop watching races."""
        writer = asyncio.get_running_loop().create_task(self._writer())
        s = self.node.settings
        try:
            while True:
                if self.closing:
                    timeout: float | None = s.ping_timeout
                elif self.identity is None:
                    timeout = s.hello_timeout
                else:
                    timeout = None if self.subs else s.idle_timeout
                try:
                    if timeout is None:  # in a race: no idle limit (and no timer per frame)
                        frame = await self.ws.recv()
                    else:
                        async with asyncio.timeout(timeout):
                            frame = await self.ws.recv()
                except TimeoutError:
                    if self.closing:
                        break
                    self.close_soon(
                        CLOSE_POLICY if self.identity is None else CLOSE_GOING_AWAY, "idle"
                    )
                    continue
                except websockets.ConnectionClosed:
                    break
                if not self.closing:  # once closing, frames are read only to reach the close
                    await self.handle(frame)
        finally:
            if not self.closing:
                self.out.put_nowait(None)
            with contextlib.suppress(asyncio.CancelledError):
                await writer
            for sub in list(self.subs.values()):
                self._unsubscribe(sub)

    async def handle(self, frame: bytes | str) -> None:
        """Handle one frame: rate, size, decoding, validation, then the message."""
        s = self.node.settings
        self.node.metrics.frames_total += 1
        if not self.bucket.take():
            self.strikes += 1
            if self.strikes > s.flood_strikes:
                self.close_soon(CLOSE_POLICY, "too many messages")
            elif not self.told_rate:
                self.told_rate = True
                self._error("rate_limited", f"more than {s.rate:g} messages a second; slow down")
            return
        if self.bucket.calm:
            self.strikes, self.told_rate = 0, False
        message: object = None
        started = time.perf_counter()
        try:
            if isinstance(frame, str):
                raise BadFrame("text frames are not accepted: send msgpack in binary frames")
            if len(frame) > s.max_frame:
                self.oversize += 1
                if self.oversize > 1:
                    self._error("bad_frame", f"frame of {len(frame)} bytes again; closing")
                    self.close_soon(CLOSE_TOO_BIG, "frames too big")
                    return
                raise BadFrame(f"frame of {len(frame)} bytes; the limit is {s.max_frame}")
            message = parse_frame(frame)
            await self.dispatch(message)
        except RequestError as e:
            self._error(e.code, str(e), message, req=e.req)
        except Exception:
            log.exception("handling %r failed", message)
            self._error("internal", "the server failed; nothing was changed", message)
        else:
            if isinstance(message, (MoveAction, Undo, Resign)):
                self.node.metrics.action_seconds.observe(time.perf_counter() - started)

    def _error(
        self, code: str, text: str, message: object = None, *, req: int | None = None
    ) -> None:
        self.node.metrics.errors_total[code] += 1
        self.send_msg(
            Error(
                error=code,
                message=text,
                req=getattr(message, "req", req),
                seq=getattr(message, "seq", None),
                race=getattr(message, "code", None),
            )
        )

    async def dispatch(self, message: object) -> None:
        if isinstance(message, Hello):
            await self.hello(message)
            return
        if self.identity is None:
            raise ProtocolViolation("say hello first")
        if isinstance(message, (MoveAction, Undo, Resign)):  # the most frequent first
            await self.act(message)
        elif isinstance(message, CreateRace):
            await self.create_race(message)
        elif isinstance(message, Join):
            await self.join(message)
        elif isinstance(message, Leave):
            await self.leave(message)
        elif isinstance(message, Ready):
            await self.ready(message)
        elif isinstance(message, Hint):
            await self.hint(message)
        elif isinstance(message, DailyRace):
            await self.daily_race(message)
        elif isinstance(message, Leaderboard):
            await self.leaderboard(message)
        else:  # pragma: no cover - the validator admits only the types above
            raise BadFrame("unexpected message")

    # -- identity ---------------------------------------------------------------------------

    async def hello(self, msg: Hello) -> None:
        """Say who this connection speaks for: a new player, or with a token the same one."""
        if self.identity is not None:
            raise ProtocolViolation("hello was said already on this connection")
        if msg.protocol != PROTOCOL_VERSION:
            self._error(
                "protocol",
                f"protocol {msg.protocol} is not supported; this server speaks {PROTOCOL_VERSION}",
            )
            self.close_soon(CLOSE_PROTOCOL, "unsupported protocol version")
            return
        if msg.token is not None:
            identity = verify(self.node.secret, msg.token)
            if msg.name is not None:
                identity = Identity(identity.player, _name(msg.name))
        else:
            name = _name(msg.name) if msg.name is not None else None
            player = new_player_id()
            identity = Identity(player, name or f"player-{player[1:5]}")
        self.identity = identity
        self.together = msg.together
        self.send_msg(
            Welcome(
                player=identity.player,
                name=identity.name,
                token=issue(self.node.secret, identity),
                node=self.node.settings.node,
                server_time=self.node.now(),
            )
        )

    @property
    def player(self) -> str:
        assert self.identity is not None
        return self.identity.player

    # -- races ------------------------------------------------------------------------------

    async def _check_race_limit(self) -> None:
        store = self.node.store
        codes = await store.player_races(self.player)
        if len(codes) < self.node.settings.max_races_per_player:
            return
        states = await store.race_states(codes)
        stale = [c for c, st in zip(codes, states, strict=True) if st is None or st == "finished"]
        await store.drop_player_races(self.player, stale)
        if len(codes) - len(stale) >= self.node.settings.max_races_per_player:
            raise TooManyRaces(
                f"you are in {len(codes) - len(stale)} races; finish or leave one first"
            )

    async def create_race(self, msg: CreateRace) -> None:
        """Create a race and join it as its first player (reply: ``joined``)."""
        options = rules.RaceOptions.from_request(msg, self.node.limits)
        await self._check_race_limit()
        seed = msg.seed
        if options.winnable:  # a proven seed at once, or the race waits for one
            seed = await self.node.pool.take(options.variant)
        code = await self._new_race(options, seed, preparing=options.winnable and seed is None)
        await self._joined(msg.req, code, "player", None)

    async def _new_race(
        self, options: rules.RaceOptions, seed: str | None, *, preparing: bool
    ) -> str:
        """Create a race (preparing: queued for a proven seed) with this player in it."""
        assert self.identity is not None
        for _ in range(10):
            change = rules.create_race(
                code=rules.new_code(),
                options=options,
                creator=self.player,
                name=self.identity.name,
                now=self.node.now(),
                seed=seed,
                preparing=preparing,
            )
            try:
                await self.node.store.commit(change, new=True)
            except Conflict:
                continue
            break
        else:  # pragma: no cover - 32**5 codes
            raise Unavailable("could not find a free join code")
        code = change.race.code
        self.node.metrics.races_created_total += 1
        await self.node.store.add_player_race(self.player, code)
        if preparing and not options.daily:
            await self.node.pool.wait(options.variant, code)
        return code

    async def daily_race(self, msg: DailyRace) -> None:
        """Race the day's deal alone (reply: ``joined``); asking again rejoins the race."""
        try:
            variant = find_variant(msg.variant)
        except VariantError as e:
            raise InvalidMessage(f"variant: {e}") from None
        if not variant.listed:
            raise InvalidMessage(f"variant: {msg.variant!r} is not offered")
        node = self.node
        day = proven.utc_day(node.now())
        code = await proven.daily_race_of(node.redis, variant.id, day, self.player)
        if code is not None and await node.store.load_race(code) is not None:
            await self.join(Join(req=msg.req, code=code))
            return
        await self._check_race_limit()
        seed = await node.pool.daily(variant.id, day)
        options = rules.RaceOptions(
            variant=variant.id,
            max_players=1,
            time_limit=min(3600, node.limits.max_time_limit),
            undo=True,
            live_boards=False,
            countdown=min(3, node.limits.max_countdown),
            winnable=True,
            daily=day,
        )
        code = await self._new_race(options, seed, preparing=seed is None)
        if not await proven.set_daily_race(node.redis, variant.id, day, self.player, code):
            # another connection of this player made one at the same moment: use that one
            await node.store.commit(rules.leave(await self._load(code), self.player, node.now()))
            await node.store.drop_player_races(self.player, [code])
            code = await proven.daily_race_of(node.redis, variant.id, day, self.player) or code
            await self.join(Join(req=msg.req, code=code))
            return
        if seed is None:
            await node.pool.wait_daily(variant.id, day, code)
        await self._joined(msg.req, code, "player", None)

    async def _load(self, code: str) -> Race:
        race = await self.node.store.load_race(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        return race

    async def leaderboard(self, msg: Leaderboard) -> None:
        """The leaderboard of a variant's daily deal on a day (by default today): its winners
        by time, then fewer actions (rules.md §7a); equal keys share a rank."""
        try:
            variant = find_variant(msg.variant).id
        except VariantError as e:
            raise InvalidMessage(f"variant: {e}") from None
        day = msg.day if msg.day is not None else proven.utc_day(self.node.now())
        try:
            rules.day_end(day)
        except ValueError:
            raise InvalidMessage("day: YYYY-MM-DD") from None
        rows = await proven.leaderboard(self.node.redis, variant, day)
        ranks = rules.shared_ranks([(t, moves) for _, _, t, moves in rows])
        entries = [
            LeaderboardEntry(rank=i, player=player, name=name, time=t, moves=moves)
            for i, (player, name, t, moves) in zip(ranks, rows, strict=True)
        ]
        self.send_msg(LeaderboardReply(req=msg.req, variant=variant, day=day, entries=entries))

    async def hint(self, msg: Hint) -> None:
        """A hint from the player's full position (races with ``hints``), counted."""
        code = rules.normalize_code(msg.code)
        if code is None:
            raise RaceNotFound(f"no race {msg.code!r}")
        node, store = self.node, self.node.store
        race, game = await store.load_for_action(code, self.player)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        if self.player not in race.players:
            raise NotAPlayer(f"you are not a player of race {code}")
        if not race.options.hints:
            raise HintsNotAllowed(f"race {code} does not allow hints")
        if race.state is RaceState.FINISHED:
            raise GameOver(f"race {code} is over")
        if race.state is not RaceState.RUNNING or game is None:
            raise WrongState(f"race {code} is {race.state.value}")
        if game.status in TERMINAL:
            raise GameOver(f"your game is over ({game.status})")
        full = Board.from_text(game.position)
        view = Board.from_text(full.view_text())
        move = await asyncio.to_thread(
            solver_hint, view, full=full, budget=node.settings.hint_budget
        )
        count = await store.add_hint(code, self.player)
        self._known.pop(code, None)
        for _ in range(20):  # everyone sees the count go up
            current = await store.load_race(code)
            entry = current.players.get(self.player) if current is not None else None
            if current is None or entry is None or current.state is not RaceState.RUNNING:
                break
            entry = dataclasses.replace(entry, hints=max(count, entry.hints))
            change = rules.RaceChange(
                base=current.version,
                race=current,
                meta=False,
                players=[entry],
                events=[(rules.ALL, Progress(race=code, version=0, player=entry.info()))],
            )
            try:
                await store.commit(change)
                break
            except Conflict:
                continue
        self.send_msg(HintReply(req=msg.req, move=None if move is None else move.text()))

    async def join(self, msg: Join) -> None:
        """Join as player (an open race, or resume one's own) or spectator (any race)."""
        code = rules.normalize_code(msg.code)
        if code is None:
            raise RaceNotFound(f"no race {msg.code!r}")
        if msg.since is not None and msg.since < 0:
            raise InvalidMessage("since: a version, 0 or more")
        node = self.node
        await node.hub.watch(code)
        try:
            race = await node.advance(code)
            if race is None:
                raise RaceNotFound(f"no race {code}")
            if msg.role == "player" and self.player not in race.players:
                assert self.identity is not None
                await self._check_race_limit()
                while True:
                    change = rules.join(race, self.player, self.identity.name, node.now())
                    if change is None:
                        break
                    try:
                        await node.store.commit(change)
                        break
                    except Conflict:
                        race = await node.store.load_race(code)
                        if race is None:
                            raise RaceNotFound(f"no race {code}") from None
                await node.store.add_player_race(self.player, code)
            await self._joined(msg.req, code, msg.role, msg.since)
        finally:
            node.hub.release(code)

    async def _joined(self, req: int, code: str, role: str, since: int | None) -> None:
        """Send the snapshot of a race (with the player's view, or boards) and the events
        after ``since``, then deliver its events from there on."""
        try:
            await self._send_joined(req, code, role, since)
        finally:
            self.node.hub.release(code)  # only if it was left unwatched by a failure

    async def _send_joined(self, req: int, code: str, role: str, since: int | None) -> None:
        node, store = self.node, self.node.store
        if code not in self.subs and len(self.subs) >= node.settings.max_watched:
            raise TooManyRaces(f"this connection follows {len(self.subs)} races; leave one first")
        await node.hub.watch(code)
        old = self.subs.pop(code, None)
        if old is not None:
            self._unsubscribe(old, keep_presence=True)
        member = self._member(code, role)
        await store.touch_presence([(code, member, role == "spectator")], node.now())
        race = await store.load_race(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        online, spectators = await store.presence(code, node.now())
        joined = Joined(
            req=req,
            role=role,
            race=rules.race_info(race, online=online, spectators=spectators, now=node.now()),
        )
        started = race.state in (RaceState.RUNNING, RaceState.FINISHED)
        if role == "player" and started and self.player in race.players:
            game = await store.load_game(code, self.player)
            if game is not None:
                joined.view = Board.from_text(game.position).view_text()
                joined.seq = game.seq
        if race.final is not None and rules.revealed(race, node.now()):
            joined.boards = dict(race.final.boards)
        elif race.state is RaceState.RUNNING and role == "spectator" and race.options.live_boards:
            joined.boards = await store.boards(race, full=False)
        if since is not None and since < race.version:
            stored = await store.events_after(code, since, race.version)
            for version, audience, data in stored or []:
                if audience == rules.SPECTATORS and role != "spectator":
                    continue
                joined.events.append(stamp(version, data)[1])
        sub = Subscription(node.hub, self, code, role, race.version)
        self.subs[code] = sub
        self.send_msg(joined)
        node.hub.add(
            sub,
            state=race.state.value,
            starts_at=race.starts_at,
            ends_at=race.ends_at,
            statuses={p: e.status for p, e in race.players.items()},
        )

    def _member(self, code: str, role: str) -> str:
        return f"{self.id}" if role == "spectator" else f"{self.player}|{self.id}"

    def presence_items(self) -> list[tuple[str, str, bool]]:
        return [
            (code, self._member(code, s.role), s.role == "spectator")
            for code, s in self.subs.items()
        ]

    def _unsubscribe(self, sub: Subscription, *, keep_presence: bool = False) -> None:
        if self.subs.get(sub.code) is sub:
            del self.subs[sub.code]
        self._known.pop(sub.code, None)
        if self._held:  # progress held for this race is no longer for this connection
            self._held = {k: e for k, e in self._held.items() if k[0] != sub.code}
        self.node.hub.remove(sub)
        if not keep_presence and self.identity is not None:
            member = self._member(sub.code, sub.role)
            self.node.spawn(
                self.node.store.drop_presence(sub.code, member, sub.role == "spectator")
            )

    async def leave(self, msg: Leave) -> None:
        """Leave a race: out of an open race or a countdown; a running game is resigned
        (status ``left``); a spectator stops watching. Reply: ``done``."""
        code = rules.normalize_code(msg.code)
        if code is None:
            raise RaceNotFound(f"no race {msg.code!r}")
        node = self.node
        race = await node.advance(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        sub = self.subs.get(code)
        if self.player not in race.players and sub is None:
            raise NotAPlayer(f"you are not in race {code}")
        if self.player in race.players and (sub is None or sub.role == "player"):
            if race.state in (RaceState.OPEN, RaceState.COUNTDOWN):
                while True:
                    try:
                        await node.store.commit(rules.leave(race, self.player, node.now()))
                        break
                    except Conflict:
                        race = await node.advance(code)
                        if race is None or self.player not in race.players:
                            break
                        if race.state not in (RaceState.OPEN, RaceState.COUNTDOWN):
                            break
                await node.store.drop_player_races(self.player, [code])
            if race is not None and race.state is RaceState.RUNNING:
                await self._apply(race.code, "leave", seq=None)
        if sub is not None:
            self._unsubscribe(sub)
        self.send_msg(Done(req=msg.req))

    async def ready(self, msg: Ready) -> None:
        """Mark ready (or not); when all are, the countdown starts. Reply: ``done``."""
        code = rules.normalize_code(msg.code)
        if code is None:
            raise RaceNotFound(f"no race {msg.code!r}")
        node = self.node
        race = await node.advance(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        while True:
            change = rules.set_ready(race, self.player, msg.ready, node.now())
            if change is None:
                break
            try:
                await node.store.commit(change)
                break
            except Conflict:
                race = await node.store.load_race(code)
                if race is None:
                    raise RaceNotFound(f"no race {code}") from None
        self.send_msg(Done(req=msg.req))
        if (
            change is not None
            and change.race.state is RaceState.COUNTDOWN
            and change.race.options.countdown == 0
        ):
            await node.advance(code)

    # -- actions ----------------------------------------------------------------------------

    async def act(self, msg: MoveAction | Undo | Resign) -> None:
        """A player's move, undo or resign, number ``seq``: applied once, acked."""
        code = rules.normalize_code(msg.code)
        if code is None:
            raise RaceNotFound(f"no race {msg.code!r}")
        sub = self.subs.get(code)
        if sub is None or sub.role != "player":
            raise NotAPlayer(f"join race {code} as a player first")
        if msg.seq < 1:
            raise InvalidMessage("seq: 1 or more")
        if isinstance(msg, MoveAction):
            await self._apply(code, "move", seq=msg.seq, move=msg.move)
        elif isinstance(msg, Undo):
            await self._apply(code, "undo", seq=msg.seq)
        else:
            await self._apply(code, "resign", seq=msg.seq)

    async def _apply(
        self, code: str, kind: rules.ActionKind, *, seq: int | None, move: str = ""
    ) -> None:
        node, store = self.node, self.node.store
        for _ in range(50):
            # This connection's last committed action left the race and game as it knows
            # them: the next move is decided on those without reading them again. The
            # commit's check-and-set on seq (and on the race running) catches any change
            # made elsewhere; then they are read afresh.
            known = self._known.pop(code, None)
            race: Race | None
            game: Game | None
            board: Board | None = None
            if known is not None and kind == "move" and seq == known[1].seq + 1:
                race, game, board = known
            else:
                race, game = await store.load_for_action(code, self.player)
            if race is None:
                raise RaceNotFound(f"no race {code}")
            if self.player not in race.players:
                raise NotAPlayer(f"you are not a player of race {code}")
            if game is None:
                raise WrongState(f"race {code} is {race.state.value}")
            if seq is None:  # leave: the next action, whatever it is
                if game.status in TERMINAL:
                    return
                this = game.seq + 1
            else:
                this = seq
                if this <= game.seq:
                    ack = await store.load_ack(code, self.player, this)
                    if ack is None:
                        raise OutOfOrder(f"action {this} is not known")
                    ack.duplicate = True
                    node.metrics.actions_total["duplicate"] += 1
                    self.send_msg(ack)
                    return
                if this != game.seq + 1:
                    raise OutOfOrder(f"seq {this}: the next action is {game.seq + 1}")
            actions = await store.load_actions(code, self.player) if kind == "undo" else ()
            try:
                outcome = rules.apply_action(
                    race, game, kind, move=move, actions=actions, now=node.now(), board=board
                )
            except GameOver:
                if race.ends_at is not None and node.now() >= race.ends_at:
                    node.spawn(node.advance(code))
                raise
            try:
                version = await store.commit_action(race, outcome)
            except Conflict:
                continue
            except WrongState:
                race = await node.advance(code)
                if race is not None and race.state is RaceState.FINISHED:
                    raise GameOver("the race is over") from None
                raise
            node.metrics.actions_total["resign" if kind == "leave" else kind] += 1
            if outcome.board is not None and outcome.game.status not in TERMINAL:
                self._known[code] = (race, outcome.game, outcome.board)
            if seq is not None:
                self.send(outcome.ack_frame)
                # the ack carries the player's own status and counts: their own progress
                # still held from an earlier action must not follow it
                own = self._held.get((code, self.player))
                if own is not None and own.version <= version - len(outcome.stored_events):
                    del self._held[(code, self.player)]
            node.hub.committed(code, version, outcome.stored_events)
            if outcome.game.status in TERMINAL:
                watch = node.hub.watches.get(code)
                if watch is not None:
                    watch.statuses[self.player] = outcome.game.status
                node.spawn(node.advance(code))
            return
        raise Unavailable("too much contention on this game; try again")

    def deal_out(self, code: str) -> None:
        """Send this player their view of the deal (an ``ack`` with seq 0) once it is out."""

        async def send_deal() -> None:
            game = await self.node.store.load_game(code, self.player)
            if game is None or game.seq != 0 or code not in self.subs:
                return
            self.send_msg(
                Ack(
                    code=code,
                    seq=0,
                    move="",
                    view=Board.from_text(game.position).view_text(),
                    status=game.status,
                    moves=game.moves,
                    score=game.score,
                )
            )

        self.node.spawn(send_deal())
