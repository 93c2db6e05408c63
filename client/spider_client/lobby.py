"""The client's side of the lobby: the open races as followed, and the last match made.

:class:`LobbyFeed` takes the lobby's messages (``open_race`` changes, ``matched``) as the
client receives them, and hands the changes to each iteration of
:meth:`~spider_client.Client.watch_open_races`::

    races = await client.open_races()                 # the public races waiting, newest first
    async for change in client.watch_open_races():    # open_race events as they come
        print(change.code, change.race)               # race None: no longer listed
    code = await client.quick_match("spider1")        # queued, matched, joined: the race's code
"""

from __future__ import annotations

import asyncio

from . import protocol as p

__all__ = ["LobbyFeed"]


class LobbyFeed:
    """The open races as followed, by code, and the last ``matched`` message."""

    def __init__(self) -> None:
        self.matched: p.Matched | None = None
        """The last ``matched`` message (the race a quick match made)."""
        self.listed: dict[str, p.OpenRace] = {}
        """The open races as followed by ``watch_open_races``, by code."""
        self._watchers: list[asyncio.Queue[p.OpenRaceChanged]] = []

    def take(self, message: p.Matched | p.OpenRaceChanged) -> None:
        """A ``matched`` message, or a change of the open races (to every watcher)."""
        if isinstance(message, p.Matched):
            self.matched = message
            return
        self.take_change(message)
        for queue in self._watchers:
            queue.put_nowait(message)

    def take_change(self, change: p.OpenRaceChanged) -> None:
        """Apply a change to :attr:`listed` unless the list holds a newer listing."""
        if change.race is None:
            self.listed.pop(change.code, None)
            return
        held = self.listed.get(change.code)
        if held is None or held.version <= change.race.version:
            self.listed[change.code] = change.race

    def take_list(self, races: list[p.OpenRace]) -> list[p.OpenRaceChanged]:
        """A fresh list of the open races: what changed in :attr:`listed` (the races gone,
        then every race listed)."""
        now = {r.code: r for r in races}
        changes = [p.OpenRaceChanged(code=c, race=None) for c in self.listed if c not in now]
        for change in changes:
            del self.listed[change.code]
        for race in races:
            change = p.OpenRaceChanged(code=race.code, race=race)
            self.take_change(change)
            changes.append(change)
        return changes

    def watcher(self) -> asyncio.Queue[p.OpenRaceChanged]:
        """A new queue that gets every change from now on (:meth:`unwatch` it at the end)."""
        queue: asyncio.Queue[p.OpenRaceChanged] = asyncio.Queue()
        self._watchers.append(queue)
        return queue

    def unwatch(self, queue: asyncio.Queue[p.OpenRaceChanged]) -> None:
        self._watchers.remove(queue)
