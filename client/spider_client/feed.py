"""What the client has taken in, for its reader and its waiters.

:class:`EventFeed` keeps the events for :meth:`~spider_client.Client.events` (at most
``max_unread`` unread: then the oldest give way) and wakes the callers of
:meth:`~spider_client.Client.wait_until` after every frame. When the client gives up (or
is closed) the feed ends: the iteration stops and the waiters fail with the reason.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Callable
from typing import Generic, TypeVar

from .errors import SpiderClientError

__all__ = ["EventFeed"]

E = TypeVar("E")


class EventFeed(Generic[E]):
    """The unread events and the waiters of one client."""

    def __init__(self, max_unread: int) -> None:
        self.max_unread = max_unread
        """Events kept until read; beyond, the oldest give way."""
        self.dropped = 0
        """Events that gave way, unread."""
        self.lost: SpiderClientError | None = None
        """Why the feed ended (None while it goes on)."""
        self._queue: collections.deque[E] = collections.deque()
        self._ended = False
        self._reader: asyncio.Future[None] | None = None
        self._changed = asyncio.Event()
        self._waiting = 0

    def emit(self, event: E) -> None:
        """Queue ``event`` for the reader."""
        queue = self._queue
        if len(queue) >= self.max_unread:
            queue.popleft()  # nobody reads them: the oldest gives way
            self.dropped += 1
        queue.append(event)
        self._wake_reader()

    def changed(self) -> None:
        """Something was taken in: the waiters check their predicates again."""
        if self._waiting:
            self._wake_waiters()

    def end(self, error: SpiderClientError) -> None:
        """No more events: the reader stops after the last one, the waiters fail with
        ``error``. Only the first call counts."""
        if self._ended:
            return
        self._ended = True
        self.lost = error
        self._wake_reader()
        self._wake_waiters()

    async def wait_until(self, holds: Callable[[], bool], *, timeout: float | None) -> None:
        """Wait until ``holds()``, checked now and after every frame taken in. Raises
        :attr:`lost` once the feed ends, TimeoutError after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while not holds():
                if self.lost is not None:
                    raise self.lost
                self._waiting += 1
                try:
                    await self._changed.wait()
                finally:
                    self._waiting -= 1

    async def __aiter__(self) -> AsyncIterator[E]:
        """The events in order; ends after the last one once the feed ended."""
        queue = self._queue
        while True:
            while not queue:
                if self._ended:
                    return
                waiter = self._reader = asyncio.get_running_loop().create_future()
                try:
                    await waiter
                finally:
                    self._reader = None
            yield queue.popleft()

    def _wake_waiters(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def _wake_reader(self) -> None:
        waiter = self._reader
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
