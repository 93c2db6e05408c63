"""Where each message from the server goes: :class:`Inbox`, the client's router.

Every message first changes the race and the view (:class:`~spider_client.mirror.
RaceMirror`; the events that gives are queued for the reader), then answers what it
answers: an ack the action in flight, a reply its request (both :class:`~spider_client.
outbox.Outbox`), an error the request or action it names (else it is queued as an event),
a ``matched``, ``match_cancelled`` or ``open_race`` the lobby
(:class:`~spider_client.lobby.LobbyFeed`). When
the race starts and the deal has not come to a player soon after, the inbox asks for it
(a rejoin).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from . import protocol as p
from .errors import SpiderClientError
from .events import Event
from .feed import EventFeed
from .lobby import LobbyFeed
from .mirror import RaceMirror
from .outbox import Outbox

__all__ = ["Inbox"]

REPLIES = (
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

Rejoin = Callable[[str, p.Role], Awaitable[object]]
"""Join race ``code`` again as ``role`` (the client's ``join``)."""


class Inbox:
    """The client's router of the server's messages (see the module's docstring)."""

    def __init__(
        self,
        *,
        mirror: RaceMirror,
        outbox: Outbox,
        feed: EventFeed[Event],
        lobby: LobbyFeed,
        rejoin: Rejoin,
        deal_wait: float,
    ) -> None:
        self._mirror = mirror
        self._outbox = outbox
        self._feed = feed
        self._lobby = lobby
        self._rejoin = rejoin
        self._deal_wait = deal_wait
        """Seconds a player waits for the deal after the start before asking for it."""
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, message: Any) -> None:
        """Take in one message (see the module's docstring)."""
        mirror, feed, outbox = self._mirror, self._feed, self._outbox
        taken = mirror.take(message)
        for event in taken:
            feed.emit(event)
        if isinstance(message, p.Ack):
            outbox.take_ack(message)
        elif isinstance(message, REPLIES):
            outbox.resolve(message.req, message)
        elif isinstance(message, p.Matched | p.OpenRaceChanged | p.MatchCancelled):
            self._lobby.take(message)
            if isinstance(message, p.Matched):
                feed.emit(message)
        elif isinstance(message, p.Error):
            if not outbox.take_error(message):
                feed.emit(message)
        elif (
            isinstance(message, p.Started)
            and taken
            and mirror.role == "player"
            and mirror.view_text is None
        ):
            self._spawn(self._fetch_view())

    async def _fetch_view(self) -> None:
        """The server sends each player the deal (an ack with seq 0); ask for it by
        rejoining if it has not come soon."""
        mirror = self._mirror
        with contextlib.suppress(SpiderClientError, TimeoutError):
            with contextlib.suppress(TimeoutError):
                await self._feed.wait_until(
                    lambda: mirror.view is not None, timeout=self._deal_wait
                )
            if mirror.view is None and mirror.code is not None and mirror.role is not None:
                await self._rejoin(mirror.code, mirror.role)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def stop(self) -> None:
        """Cancel what it started (the client is closing)."""
        for task in list(self._tasks):
            task.cancel()
