"""The node's writes: coalesced per turn of the event loop, held progress released on each
connection's time, and the bytes queued for slow readers on the whole node.

- the frames of one turn go out in one ``transport.write`` (the mover's ack and progress
  together, several players' progress together);
- held progress (0.1 s by default) and releases of at most :data:`RELEASE_CHUNK`
  connections a turn keep a thousand players' frames from landing at once.

What each saves is measured by ``spider-race bench server`` (README, "Under load").
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from ..settings import Settings

__all__ = ["HOLD_SLACK", "RELEASE_CHUNK", "Writable", "Writes"]

RELEASE_CHUNK = 64
"""Connections whose held progress one turn of the event loop releases at most."""
HOLD_SLACK = 0.002
"""Seconds before its due time a hold may be released with others (fewer timer calls)."""


class Writable(Protocol):
    """A connection as the node's writes see it (the transport's)."""

    def flush(self) -> None:
        """Write the frames gathered this turn."""

    def release_progress(self) -> None:
        """Send the progress held."""


class Writes:
    """The node's writes: each connection's frames of one turn of the event loop go out
    together at the turn's end, and held progress is released on each connection's time."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._unflushed: list[Writable] = []
        """Connections with frames to write at the end of this turn of the event loop."""
        self._holding: dict[Writable, float] = {}
        """Connections holding progress (see :meth:`Connection.send_progress`), with the
        loop time each started holding, oldest first."""
        self._release_timer: asyncio.TimerHandle | None = None
        self._closed = False
        self.queued_bytes = 0
        """Bytes of frames queued for slow readers on the whole node (the connections keep
        it; bounded by ``node_send_bytes``)."""

    def to_flush(self, conn: Writable) -> None:
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

    def hold(self, conn: Writable) -> None:
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
