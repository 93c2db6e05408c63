"""Frames onto sockets, the transport's write side: the one module that reaches below the
websockets library's API.

A :class:`Connection` is one websocket connection's way out: frames built
once (:mod:`.frames`) that one turn of the event loop gives a connection go out in one
write (:mod:`.writes`), progress that comes within ``progress_interval`` of the last is
held and released together, and a reader that lets ``send_queue`` frames or
``send_bytes`` bytes pile up (frames queued and the socket's write buffer, pongs to its
pings included), or whose frame would take the node's queued bytes past
``node_send_bytes``, is closed with 1008 and cut ``write_timeout`` later; a connection
whose write buffer passes ``send_bytes`` while the node only answers its pings is read no
more from then on. The way in is :mod:`.reading`.

:class:`ServerSide` is the library's server connection with what the node adds below it:
the client's address (the peer's, or a trusted load balancer's PROXY protocol line), the
check of the write buffer after each read (the library answers pings there), and the
count of connections per address. The private attributes these use are checked when a
node starts (:func:`check_websockets`); the speed tricks and their figures are in
:mod:`.frames` and :mod:`.writes` (README, "Under load"; docs/server.md, "The hot path").
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

import websockets
from websockets.asyncio.connection import Connection as BaseConnection
from websockets.asyncio.server import ServerConnection
from websockets.protocol import State as WsState
from websockets.server import ServerProtocol

from ..errors import ConfigError
from ..limits import AddressLimits, Proxies, proxy_line
from ..metrics import Metrics
from ..settings import Settings
from .frames import EventFrame, array_header, stamp, wire_frame
from .writes import HOLD_SLACK, RELEASE_CHUNK, Writes

__all__ = [
    "BIG_FRAME",
    "CLOSE_GOING_AWAY",
    "CLOSE_POLICY",
    "CLOSE_PROTOCOL",
    "CLOSE_RESTART",
    "CLOSE_TOO_BIG",
    "CLOSE_TRY_LATER",
    "HOLD_SLACK",
    "RELEASE_CHUNK",
    "SUPPORTED",
    "Connection",
    "EventFrame",
    "FrameHandler",
    "ServerSide",
    "Writes",
    "array_header",
    "backlog",
    "check_websockets",
    "server_side",
    "stamp",
    "wire_frame",
]

CLOSE_RESTART = 1012
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_PROTOCOL = 1002
CLOSE_GOING_AWAY = 1001
CLOSE_TRY_LATER = 1013
"""Refused for now (RFC 6455's "Try Again Later"): the reason starts ``retry after N s``."""

BIG_FRAME = 64 << 10
"""Bytes from which a ``joined`` is big: not sent again to a connection that has not read
it yet (:meth:`Connection.unread`)."""

SUPPORTED = "websockets 13 to 17"
"""The websockets releases whose private attributes this module uses (checked at start)."""


# -- the library's connection, with the node's additions -----------------------------------


class ServerSide(ServerConnection):
    """A server connection that knows its client's address, counts itself against its
    address's limit, and reports a write buffer over ``send_bytes`` after a read (pongs
    the library wrote for pings that are never read). Made by :func:`server_side`."""

    send_bytes: int = 8 << 20
    proxies: Proxies = Proxies("")
    addresses: AddressLimits | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        peer = transport.get_extra_info("peername")
        self.peer = str(peer[0]) if isinstance(peer, tuple) and peer else "unix"
        self.client_address = self.peer
        """The client's address (set from a trusted proxy's word when it gives one)."""
        self.counted: str | None = None
        """The address this connection is counted against (:meth:`count`)."""
        self.on_overflow: Callable[[], None] | None = None
        """Called when the write buffer is found over ``send_bytes`` (the node's)."""
        self._proxied = not self.proxies.trusts(self.peer)
        """No PROXY line is looked for (the peer is not a trusted proxy, or it was read)."""
        self._early = b""
        super().connection_made(transport)
        if self._proxied and not self.count(self.peer) and isinstance(transport, asyncio.Transport):
            transport.abort()  # over the address's limit: refused before any byte is read

    def count(self, address: str) -> bool:
        """Count this connection against ``address`` (once); False when the address has
        its maximum of connections open."""
        if self.addresses is None or self.counted is not None:
            return True
        if not self.addresses.connect(address):
            return False
        self.counted = address
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        if self.counted is not None and self.addresses is not None:
            self.addresses.disconnect(self.counted)
            self.counted = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if not self._proxied:
            data = self._early + data
            parsed = proxy_line(data)
            if (
                parsed is None
                and len(data) < 108
                and b"\r\n" not in data
                and (data.startswith(b"PROXY ") or b"PROXY ".startswith(data))
            ):
                self._early = data  # the line is not whole yet
                return
            self._proxied, self._early = True, b""
            if parsed is not None:
                address, length = parsed
                if address is not None:
                    self.client_address = address
                data = data[length:]
            if not data:
                return
        super().data_received(data)
        transport = self.transport
        if transport is not None and transport.get_write_buffer_size() > self.send_bytes:
            if self.on_overflow is not None:
                self.on_overflow()
            else:  # not a websocket yet: nothing to close politely
                transport.abort()


def server_side(
    settings: Settings, proxies: Proxies, addresses: AddressLimits | None
) -> type[ServerSide]:
    """The server connection class of a node (``serve(create_connection=...)``)."""
    return type(
        "NodeServerSide",
        (ServerSide,),
        {"send_bytes": settings.send_bytes, "proxies": proxies, "addresses": addresses},
    )


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
        self.queued_bytes = 0
        """Bytes of the frames in :attr:`out` (counted in the node's too)."""
        self.address: str = str(getattr(ws, "client_address", "") or "")
        """The client's address (a trusted proxy's word on it, else the peer's)."""
        request = getattr(ws, "request", None)
        self.cookie = "; ".join(request.headers.get_all("Cookie")) if request else None
        self._unread: set[str] = set()
        """Races whose big ``joined`` may still wait for the reader (:meth:`unread`)."""
        if isinstance(ws, ServerSide):
            ws.on_overflow = self._overflow

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
        s = self.settings
        size = len(frame)
        if (
            self.out.qsize() >= s.send_queue
            or self.queued_bytes + size + self._buffered() > s.send_bytes
            or self.writes.queued_bytes + size > s.node_send_bytes
        ):
            self._too_slow()
            return
        self.queued_bytes += size
        self.writes.queued_bytes += size
        self.out.put_nowait(frame)

    def send_snapshot(self, code: str, frame: bytes) -> None:
        """Send race ``code``'s ``joined``; one of :data:`BIG_FRAME` bytes or more is
        :meth:`unread` until it has left the node."""
        self.send(frame)
        if len(frame) >= BIG_FRAME and not self.closing:
            self._unread.add(code)

    def unread(self, code: str) -> bool:
        """Whether a big ``joined`` of race ``code`` sent here may still wait for the
        reader: nothing sent since it has left the node yet (queued, gathered for this
        turn's write, or in the socket's write buffer)."""
        if not self._unread:
            return False
        if self._wires or self.waiting() or self._buffered():
            return code in self._unread
        self._unread.clear()  # all of it was taken: none waits (whichever race is asked)
        return False

    def send_ack(self, frame: bytes, about: tuple[str, str], upto: int) -> None:
        """Send a player's ack, after the others' progress held (it goes out now, in the
        ack's write, instead of a write of its own later); their own progress held from an
        action up to version ``upto`` is dropped (the ack carries their status and counts)."""
        held = self._held
        if held:
            own = held.get(about)
            if own is not None and own.version <= upto:
                del held[about]
            if held:
                self.release_progress()
        self.send(frame)

    def _buffered(self) -> int:
        """Bytes in the socket's write buffer (written, not yet taken by the kernel)."""
        transport = self.ws.transport
        return 0 if transport is None else int(transport.get_write_buffer_size())

    def _too_slow(self) -> None:
        """Close a reader that lets too much pile up; a reader that stopped may never take
        the close either: cut it after ``write_timeout``."""
        if self.closing:
            return
        self.metrics.refused_total["too_slow"] += 1
        self.close_soon(CLOSE_POLICY, "too slow to read")
        asyncio.get_running_loop().call_later(self.settings.write_timeout, self._cut)

    def _overflow(self) -> None:
        """The write buffer passed ``send_bytes`` after a read (pongs to pings it does not
        read): read no more from it, and close it as too slow."""
        transport = self.ws.transport
        if transport is not None and not transport.is_closing():
            with contextlib.suppress(Exception):
                transport.pause_reading()
        self._too_slow()

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
            return
        if ws.paused and transport.get_write_buffer_size() > self.settings.send_bytes:
            self._too_slow()

    def _cut(self) -> None:
        """Drop the connection at once (its writer may be stuck on a reader that stopped)."""
        transport = self.ws.transport
        if transport is not None and not transport.is_closing():
            transport.abort()

    def close_soon(self, code: int, reason: str) -> None:
        """Close after the frames already queued are sent."""
        if self.closing:
            return
        self.closing = True  # first: a flush that finds the buffer over its bound adds nothing
        self.flush()
        self.metrics.closed_total[code] += 1
        self.out.put_nowait((code, reason))
        if self.session is not None:
            self.session.closing()

    async def _writer(self) -> None:
        while True:
            item = await self.out.get()
            if item is None:
                return
            if isinstance(item, bytes):
                self.queued_bytes -= len(item)
                self.writes.queued_bytes -= len(item)
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

    # -- the connection's life (:func:`~.reading.read_frames`) -------------------------------------

    def start(self, session: FrameHandler) -> asyncio.Task[None]:
        """Hand frames to ``session`` from now on; the writer task, which the caller awaits
        once the connection ends (:meth:`end`)."""
        self.session = session
        return asyncio.get_running_loop().create_task(self._writer())

    def end(self) -> None:
        """The reading ended: the writer ends after what is queued (unless closing did)."""
        if not self.closing:
            self.out.put_nowait(None)

    def forget_queued(self) -> None:
        """Drop what is still queued (the connection is gone): its bytes leave the node's."""
        self.writes.queued_bytes -= self.queued_bytes
        self.queued_bytes = 0
        while not self.out.empty():
            self.out.get_nowait()


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
