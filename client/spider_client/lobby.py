"""The client's side of the lobby: the open races as followed, and the last match made.

:class:`LobbyFeed` takes the lobby's messages (``open_race`` changes, ``matched``) as the
client receives them, and hands the changes to each iteration of
:meth:`~spider_client.Client.watch_open_races`; the functions below are the lobby's
requests, which :class:`~spider_client.Client`'s methods of the same names call::

    races = await client.open_races()                 # the public races waiting, oldest first
    async for change in client.watch_open_races():    # open_race events as they come
        print(change.code, change.race)               # race None: no longer listed
    code = await client.quick_match("spider1")        # queued, matched, joined, confirmed
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from . import protocol as p
from .errors import NotFound
from .mirror import RaceMirror

__all__ = ["Asker", "LobbyFeed", "open_races", "quick_match", "watch_open_races"]


class Asker(Protocol):
    """What the lobby's and the players' requests use of the client (:class:`~spider_client.
    Client` is one)."""

    @property
    def lobby(self) -> LobbyFeed: ...
    @property
    def mirror(self) -> RaceMirror: ...
    @property
    def reconnects(self) -> int: ...
    @property
    def moves(self) -> int: ...
    @property
    def connected(self) -> bool: ...
    async def _request(self, make: Callable[[int], Any], *, repeatable: bool = True) -> Any: ...
    async def join(self, code: str, role: p.Role = "player") -> p.Joined: ...
    async def cancel_match(self) -> None: ...
    async def wait_until(
        self, predicate: Callable[[Any], bool], *, timeout: float | None = None
    ) -> None: ...


class LobbyFeed:
    """The open races as followed, by code, the last ``matched`` message, and the last
    quick match called off."""

    def __init__(self) -> None:
        self.matched: p.Matched | None = None
        """The last ``matched`` message (the race a quick match made)."""
        self.called_off: str | None = None
        """The code of the last quick-match race called off (``match_cancelled``)."""
        self.listed: dict[str, p.OpenRace] = {}
        """The open races as followed by ``watch_open_races``, by code."""
        self._watchers: list[asyncio.Queue[p.OpenRaceChanged]] = []

    def take(self, message: p.Matched | p.OpenRaceChanged | p.MatchCancelled) -> None:
        """A ``matched`` message, a quick match called off, or a change of the open races
        (to every watcher)."""
        if isinstance(message, p.Matched):
            self.matched = message
            return
        if isinstance(message, p.MatchCancelled):
            self.called_off = message.race
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


async def open_races(client: Asker, variant: str | None, rated: bool = False) -> list[p.OpenRace]:
    """:meth:`Client.open_races <spider_client.Client.open_races>`."""
    reply: p.OpenRaceList = await client._request(
        lambda req: p.OpenRaces(req=req, variant=variant, rated=rated)
    )
    return reply.races


async def watch_open_races(
    client: Asker, variant: str | None, rated: bool = False
) -> AsyncIterator[p.OpenRaceChanged]:
    """:meth:`Client.watch_open_races <spider_client.Client.watch_open_races>`."""
    lobby = client.lobby
    queue = lobby.watcher()
    try:
        while True:
            connection = (client.reconnects, client.moves)  # a new one: follow again there
            reply: p.OpenRaceList = await client._request(
                lambda req: p.OpenRaces(req=req, watch=True, variant=variant, rated=rated)
            )
            for change in lobby.take_list(reply.races):
                yield change
            while (client.reconnects, client.moves) == connection:
                try:
                    change = await asyncio.wait_for(queue.get(), timeout=1.0)
                except TimeoutError:
                    continue
                lobby.take_change(change)  # one that came during the read above
                race = change.race
                if race is None or (
                    (variant is None or race.variant == variant) and (race.rated or not rated)
                ):
                    yield change
    finally:
        lobby.unwatch(queue)
        if client.connected:
            await client._request(lambda req: p.OpenRaces(req=req, watch=False))


async def quick_match(
    client: Asker,
    variant: str,
    *,
    with_bots: bool,
    undo: bool,
    timeout: float | None,
    rated: bool | None = None,
) -> str:
    """:meth:`Client.quick_match <spider_client.Client.quick_match>`."""
    lobby = client.lobby

    def ask(req: int) -> p.QuickMatch:
        return p.QuickMatch(req=req, variant=variant, undo=undo, with_bots=with_bots, rated=rated)

    try:
        async with asyncio.timeout(timeout):
            while True:
                lobby.matched = None
                await _matched(client, ask)
                assert lobby.matched is not None
                code = lobby.matched.code
                try:
                    await client.join(code, "player")  # confirms the seat
                except NotFound:  # called off before this player joined: queue again
                    continue
                if await _confirmed(client, code):
                    return code
                # called off (someone did not join): queued again, ahead of the others
    except TimeoutError:
        if lobby.matched is None or lobby.called_off == lobby.matched.code:
            await client.cancel_match()
        raise


async def _matched(client: Asker, ask: Callable[[int], p.QuickMatch]) -> None:
    """Queue and wait for ``matched`` (queued again after a reconnect)."""
    lobby = client.lobby
    reconnects = client.reconnects
    await client._request(ask)
    while lobby.matched is None:
        if client.reconnects != reconnects:
            reconnects = client.reconnects
            await client._request(ask)
        with contextlib.suppress(TimeoutError):
            await client.wait_until(lambda _: lobby.matched is not None, timeout=1.0)


async def _confirmed(client: Asker, code: str) -> bool:
    """Wait until the race ``code`` the player joined counts down (True: every matched
    player joined) or is called off (False)."""
    lobby = client.lobby

    def settled(_: object) -> bool:
        race = client.mirror.race
        counting = race is not None and race.code == code and race.state != "open"
        return counting or lobby.called_off == code

    reconnects = client.reconnects
    while not settled(None):
        if client.reconnects != reconnects:  # what happened meanwhile: joined again
            reconnects = client.reconnects
            try:
                await client.join(code, "player")
            except NotFound:  # called off meanwhile
                return False
        with contextlib.suppress(TimeoutError):
            await client.wait_until(settled, timeout=1.0)
    return lobby.called_off != code
