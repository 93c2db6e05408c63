"""The client's side of the lobby: the open races (listed and followed) and quick match.

::

    races = await client.open_races()                 # the public races waiting, newest first
    async for change in client.watch_open_races():    # open_race events as they come
        print(change.code, change.race)               # race None: no longer listed
    code = await client.quick_match("spider1")        # queued, matched, joined: the race's code
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from . import protocol as p
from .connection import Connection

__all__ = ["LobbyClient"]


class LobbyClient(Connection):
    """The lobby's requests (see the module's docstring)."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.matched: p.Matched | None = None
        """The last ``matched`` message (the race a quick match made)."""
        self.listed: dict[str, p.OpenRace] = {}
        """The open races as followed by :meth:`watch_open_races`, by code."""
        self._lobby_queues: list[asyncio.Queue[p.OpenRaceChanged]] = []

    def _lobby_message(self, message: p.Matched | p.OpenRaceChanged) -> None:
        if isinstance(message, p.Matched):
            self.matched = message
            self._emit(message)
            return
        self._take_change(message)
        for queue in self._lobby_queues:
            queue.put_nowait(message)

    async def open_races(self, variant: str | None = None) -> list[p.OpenRace]:
        """The public races waiting for players, newest first (of ``variant`` only)."""
        reply: p.OpenRaceList = await self._request(
            lambda req: p.OpenRaces(req=req, variant=variant)
        )
        return reply.races

    def _take_change(self, change: p.OpenRaceChanged) -> None:
        """Apply a change to :attr:`listed` unless the list holds a newer listing."""
        if change.race is None:
            self.listed.pop(change.code, None)
            return
        held = self.listed.get(change.code)
        if held is None or held.version <= change.race.version:
            self.listed[change.code] = change.race

    async def watch_open_races(
        self, variant: str | None = None
    ) -> AsyncIterator[p.OpenRaceChanged]:
        """Follow the open races: first an ``open_race`` change for each race listed now,
        then one whenever a race is listed, changes or leaves the list (``race`` None).
        :attr:`listed` holds the list meanwhile. After a reconnect, or a move to a race's
        URL, it follows again on the new connection (the list is read anew). Stops following
        when the iteration ends."""
        queue: asyncio.Queue[p.OpenRaceChanged] = asyncio.Queue()
        self._lobby_queues.append(queue)
        try:
            while True:
                connection = (self.reconnects, self.moves)  # a new one: follow again there
                reply: p.OpenRaceList = await self._request(
                    lambda req: p.OpenRaces(req=req, watch=True, variant=variant)
                )
                now = {r.code: r for r in reply.races}
                for code in [c for c in self.listed if c not in now]:
                    del self.listed[code]
                    yield p.OpenRaceChanged(code=code, race=None)
                for race in reply.races:
                    self._take_change(p.OpenRaceChanged(code=race.code, race=race))
                    yield p.OpenRaceChanged(code=race.code, race=race)
                while (self.reconnects, self.moves) == connection:
                    try:
                        change = await asyncio.wait_for(queue.get(), timeout=1.0)
                    except TimeoutError:
                        continue
                    self._take_change(change)  # one that came during the read above
                    if variant is None or change.race is None or change.race.variant == variant:
                        yield change
        finally:
            self._lobby_queues.remove(queue)
            if self.connected:
                await self._request(lambda req: p.OpenRaces(req=req, watch=False))

    async def quick_match(
        self,
        variant: str = "spider4",
        *,
        with_bots: bool = False,
        undo: bool = True,
        timeout: float | None = None,
    ) -> str:
        """Queue for a quick match of ``variant``, wait until the server made the race (at
        most ``timeout`` seconds: TimeoutError, and the queue is left), join it as a
        player and return its code; mark nothing: the race counts down at once. Queued
        again after a reconnect."""
        self.matched = None

        def ask(req: int) -> p.QuickMatch:
            return p.QuickMatch(req=req, variant=variant, undo=undo, with_bots=with_bots)

        try:
            async with asyncio.timeout(timeout):
                reconnects = self.reconnects
                await self._request(ask)
                while self.matched is None:
                    if self.reconnects != reconnects:
                        reconnects = self.reconnects
                        await self._request(ask)
                    try:
                        await self.wait_until(lambda c: c.matched is not None, timeout=1.0)
                    except TimeoutError:
                        continue
        except TimeoutError:
            if self.matched is None:
                await self.cancel_match()
                raise
        code = self.matched.code
        await self._join(code, "player")
        return code

    async def cancel_match(self) -> None:
        """Leave the quick-match queue."""
        await self._request(lambda req: p.CancelMatch(req=req))
