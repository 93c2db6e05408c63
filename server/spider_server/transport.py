"""Frames onto sockets: the one module that reaches below the websockets library's API.

A :class:`Connection` is one websocket connection's way out and in. Out: frames are
built once (:func:`wire_frame`: an event's websocket frame is the same bytes for every
recipient), the frames one turn of the event loop gives a connection go out in one write
(:class:`Writes`), progress that comes within ``progress_interval`` of the last is held
and released together, and a reader that lets ``send_queue`` frames pile up is closed,
then cut. In: :meth:`Connection.run` reads frames and hands each to its
:class:`FrameHandler` (the session), one at a time, in order.

The speed tricks here, and the figures behind them (README, "Under load"; docs/server.md,
"The hot path"):

- a frame is framed once, not once per recipient (``ServerConnection.send`` would frame
  it again for every connection): with 1,000 spectators a move costs the node 15-21 µs
  per spectator, so what is done per recipient is kept to appending bytes;
- the frames of one turn go out in one ``transport.write`` (the mover's ack and progress
  together, several players' progress together): the node's 0.12-0.14 ms of CPU per move,
  which sets the ratio of 0.99-1.14 against the echo baseline, is measured with it;
- :func:`stamp` adds an event's version by patching the stored msgpack map instead of
  decoding and encoding it again, for every dispatch and catch-up;
- held progress (0.1 s by default) and releases of at most :data:`RELEASE_CHUNK`
  connections a turn keep a thousand players' frames from landing at once (ack p99 of
  6.7-8.1 ms at 1,000 players).

The private attributes these use are checked when a node starts (:func:`check_websockets`).
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Awaitable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

import msgpack
import websockets
from websockets.asyncio.connection import Connection as BaseConnection
from websockets.asyncio.server import ServerConnection
from websockets.protocol import State as WsState
from websockets.server import ServerProtocol

from .errors import ConfigError
from .metrics import Metrics
from .settings import Settings

__all__ = [
    "CLOSE_GOING_AWAY",
    "CLOSE_POLICY",
    "CLOSE_PROTOCOL",
    "CLOSE_RESTART",
    "CLOSE_TOO_BIG",
    "HOLD_SLACK",
    "RELEASE_CHUNK",
    "SUPPORTED",
    "Connection",
    "EventFrame",
    "FrameHandler",
    "Writes",
    "array_header",
    "backlog",
    "check_websockets",
    "stamp",
    "wire_frame",
]

CLOSE_RESTART = 1012
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_PROTOCOL = 1002
CLOSE_GOING_AWAY = 1001

RELEASE_CHUNK = 64
"""Connections whose held progress one turn of the event loop releases at most."""
HOLD_SLACK = 0.002
"""Seconds before its due time a hold may be released with others (fewer timer calls)."""

SUPPORTED = "websockets 13 to 17"
"""The websockets releases whose private attributes this module uses (checked at start)."""


# -- frames, built once -----------------------------------------------------------------------


def wire_frame(payload: bytes) -> bytes:
    """``payload`` as one unfragmented, unmasked binary websocket frame (RFC 6455 §5.2):
    what a server sends without compression, the same bytes for every connection."""
    n = len(payload)
    if n < 126:
        head = bytes((0x82, n))
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x82, 126, n)
    else:
        head = struct.pack("!BBQ", 0x82, 127, n)
    return head + payload


def array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` items: followed by the items' encodings,
    several frames make one."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return struct.pack("!BH", 0xDC, n)
    return struct.pack("!BI", 0xDD, n)


_VERSION_KEY = msgpack.packb("version")


def stamp(version: int, data: bytes) -> tuple[bytes, dict[str, Any]]:
    """The frame of a stored event with its version, and the event as a map."""
    fields = msgpack.unpackb(data, raw=False)
    n = len(fields)
    fields["version"] = version
    if n < 15 and data[0] == 0x80 | n and len(fields) == n + 1:
        # a small map without a version: the same bytes with the version added at the end
        frame = bytes((0x80 | (n + 1),)) + data[1:] + _VERSION_KEY + msgpack.packb(version)
        return frame, fields
    return bytes(msgpack.packb(fields, use_bin_type=True)), fields


@dataclass(frozen=True)
class EventFrame:
    """One event ready to send: its version, audience, frame bytes and fields."""

    version: int
    audience: str
    frame: bytes
    fields: dict[str, Any]
    type: str = field(init=False)
    """The event's type (read once)."""
    wire: bytes = field(init=False, repr=False)
    """The frame as a server's websocket frame, built once for every recipient."""
    about: tuple[str, str] = field(init=False, repr=False)
    """(race, player) of a ``progress`` event: a player is sent only the latest of each."""

    def __post_init__(self) -> None:
        kind = str(self.fields.get("type", ""))
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "wire", wire_frame(self.frame))
        info = self.fields.get("player") if kind == "progress" else None
        player = info.get("player") if isinstance(info, dict) else None
        object.__setattr__(self, "about", (str(self.fields.get("race")), str(player)))

    @classmethod
    def stored(cls, version: int, audience: str, data: bytes) -> EventFrame:
        """The event of a stored one (see :func:`stamp`)."""
        frame, fields = stamp(version, data)
        return cls(version, audience, frame, fields)


# -- the node's writes --------------------------------------------------------------------------


class Writes:
    """The node's writes: each connection's frames of one turn of the event loop go out
    together at the turn's end, and held progress is released on each connection's time."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._unflushed: list[Connection] = []
        """Connections with frames to write at the end of this turn of the event loop."""
        self._holding: dict[Connection, float] = {}
        """Connections holding progress (see :meth:`Connection.send_progress`), with the
        loop time each started holding, oldest first."""
        self._release_timer: asyncio.TimerHandle | None = None
        self._closed = False

    def to_flush(self, conn: Connection) -> None:
        """Write ``conn``'s gathered frames at the end of this turn of the event loop: the
        frames one turn sends a connection (an ack, the progress of several players) go out
        in one write."""
        if not self._unflushed:
            asyncio.get_running_loop().call_soon(self.flush_writes)
        self._unflushed.append(conn)

    def flush_writes(self) -> None:
        unflushed, self._unflushed = self._unflushed, []
        for conn in unflushed:
            conn.flush()

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

    def close(self) -> None:
        """No more timers (the node is closing)."""
        self._closed = True
        if self._release_timer is not None:
            self._release_timer.cancel()
            self._release_timer = None


# -- one connection -----------------------------------------------------------------------------


class FrameHandler(Protocol):
    """What reads a connection's frames (the session)."""

    def read_timeout(self) -> float | None:
        """Seconds the next frame may take to come (None: no limit)."""

    def timed_out(self) -> None:
        """No frame came within :meth:`read_timeout`."""

    def handle(self, frame: bytes | str) -> Awaitable[None]:
        """Handle one frame."""

    def closing(self) -> None:
        """The connection is closing: nothing more is handled."""

    def ended(self) -> None:
        """The connection is gone."""


class Connection:
    """One websocket connection's way out (frames, held progress, backpressure, close)
    and in (the read loop)."""

    def __init__(
        self, ws: ServerConnection, writes: Writes, settings: Settings, metrics: Metrics
    ) -> None:
        self.ws = ws
        self.writes = writes
        self.settings = settings
        self.metrics = metrics
        self.session: FrameHandler | None = None
        """What handles this connection's frames (set by the node)."""
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

    # -- sending ----------------------------------------------------------------------------

    def send(self, frame: bytes, wire: bytes | None = None) -> None:
        """Send a frame (``wire``: the same frame already built as a websocket frame).

        When nothing waits before it and the socket keeps up, the frame joins the others
        of this turn of the event loop, written together in one write at the turn's end
        (:meth:`Writes.flush_writes`); otherwise it is queued for the writer task. A reader
        that lets ``send_queue`` frames pile up is closed."""
        if self.closing:
            return
        ws = self.ws
        if (
            not self._writing
            and self.out.empty()
            and not ws.paused  # private: the socket's buffer is over its high-water mark
            and ws.protocol.state is WsState.OPEN
            and ws.send_in_progress is None  # private: no fragmented send under way
        ):
            if not self._wires:
                self.writes.to_flush(self)
            self._wires.append(wire or wire_frame(frame))
            return
        self.flush()  # what was written before goes first
        if self.out.qsize() >= self.settings.send_queue:
            self.close_soon(CLOSE_POLICY, "too slow to read")
            # a reader that stopped may never take the close either: cut it after a while
            loop = asyncio.get_running_loop()
            loop.call_later(self.settings.write_timeout, self._cut)
            return
        self.out.put_nowait(frame)

    def send_ack(self, frame: bytes, about: tuple[str, str], upto: int) -> None:
        """Send a player's ack; their own progress held from an action up to version
        ``upto`` is dropped (the ack carries their status and counts)."""
        self.send(frame)
        own = self._held.get(about)
        if own is not None and own.version <= upto:
            del self._held[about]

    def waiting(self) -> int:
        """Frames waiting for the socket: queued, and the one the writer task is sending."""
        return self.out.qsize() + self._writing

    @property
    def paused(self) -> bool:
        """The socket takes no more for now."""
        return bool(self.ws.paused)

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
        if now - self._progress_at >= self.settings.progress_interval:
            self._progress_at = now
            self.send(event.frame, event.wire)
            return
        held[event.about] = event
        self.writes.hold(self)

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

    def drop_held(self, code: str) -> None:
        """Forget the progress held for a race (no longer followed here)."""
        if self._held:
            self._held = {k: e for k, e in self._held.items() if k[0] != code}

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
            # below the library: the frames are whole and in order, and the library has
            # nothing of its own in flight (send() checked send_in_progress)
            transport.write(wires[0] if len(wires) == 1 else b"".join(wires))
        except Exception:  # the link broke: the reader sees it and cleans up
            self._cut()

    def _cut(self) -> None:
        """Drop the connection at once (its writer may be stuck on a reader that stopped)."""
        transport = self.ws.transport
        if transport is not None and not transport.is_closing():
            transport.abort()

    def close_soon(self, code: int, reason: str) -> None:
        """Close after the frames already queued are sent."""
        if self.closing:
            return
        self.flush()
        self.closing = True
        self.metrics.closed_total[code] += 1
        self.out.put_nowait((code, reason))
        if self.session is not None:
            self.session.closing()

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

    async def run(self, session: FrameHandler) -> None:
        """Read frames and hand them to ``session`` until the connection closes."""
        self.session = session
        writer = asyncio.get_running_loop().create_task(self._writer())
        try:
            while True:
                timeout = self.settings.ping_timeout if self.closing else session.read_timeout()
                try:
                    if timeout is None:  # in a race: no idle limit (and no timer per frame)
                        frame = await self.ws.recv()
                    else:
                        async with asyncio.timeout(timeout):
                            frame = await self.ws.recv()
                except TimeoutError:
                    if self.closing:
                        break
                    session.timed_out()
                    continue
                except websockets.ConnectionClosed:
                    break
                if not self.closing:  # once closing, frames are read only to reach the close
                    await session.handle(frame)
        finally:
            if not self.closing:
                self.out.put_nowait(None)
            with contextlib.suppress(asyncio.CancelledError):
                await writer
            session.ended()


def backlog(connections: Iterable[Connection]) -> tuple[int, int]:
    """Connections whose frames wait for their reader (the socket takes no more, or frames
    are queued behind one that waits), and the frames waiting in all."""
    waiting = frames = 0
    for conn in connections:
        queued = conn.waiting()
        if queued or conn.paused:
            waiting += 1
            frames += queued
    return waiting, frames


class _ProbeTransport(asyncio.Transport):
    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        pass


def check_websockets() -> None:
    """ConfigError unless the installed websockets has what :class:`Connection` reads
    below its API (``transport``, ``paused``, ``send_in_progress``, ``protocol.state``).
    Call it within a running event loop."""
    version = getattr(websockets, "__version__", "?")
    try:
        # a probe: the base class of ServerConnection, where these are defined
        ws = BaseConnection(ServerProtocol())
        BaseConnection.connection_made(ws, _ProbeTransport())
        missing = [
            name
            for name in ("transport", "paused", "send_in_progress", "protocol")
            if not hasattr(ws, name)
        ]
        if not missing and not isinstance(ws.protocol.state, WsState):
            missing.append("protocol.state")
        if not hasattr(WsState, "OPEN"):
            missing.append("State.OPEN")
    except Exception as e:  # a constructor that changed: the same answer
        missing = [f"ServerConnection ({e})"]
    if missing:
        raise ConfigError(
            f"websockets {version} is not supported: the server writes frames below its "
            f"API and needs {', '.join(missing)}; install {SUPPORTED}"
        )
