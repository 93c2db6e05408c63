"""Race changes committed and their events handed to the hub: the one way a race changes.

:class:`Changes` composes the store and the hub. :meth:`Changes.race` loads a race, asks a
pure decision of :mod:`..race` for its change, commits it with a check-and-set (again on
the race read afresh when it lost, :func:`~..store.check_and_set`), and returns what was
committed; the events then go to the hub (:meth:`~.hub.Hub.committed`, this node's own
watches at once; other nodes hear them on the race's channel), and a public race's
listing follows. A player's action is the session's (it sends the mover's ack first, then
:meth:`Changes.publish`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from ..race import Race, RaceChange, new_code
from ..store import Attempt, Committed, Store, check_and_set
from .hub import Hub

__all__ = ["BUSY", "Changes", "RaceAttempt"]

BUSY = "too much contention on this race; try again"

RaceAttempt = Attempt[Race | None, RaceChange, Committed]
"""The race as loaded, the change decided (None: none) and what was committed."""

S = TypeVar("S")


class Changes:
    """Commits race changes and publishes their events."""

    def __init__(self, store: Store, hub: Hub) -> None:
        self.store = store
        self.hub = hub

    async def race(
        self,
        code: str,
        decide: Callable[[Race | None], RaceChange | None],
        *,
        known: Race | None = None,
        busy: str = BUSY,
    ) -> RaceAttempt:
        """Load race ``code`` (the first try: the race ``known`` already, if any), decide
        its change, commit it, and again on a lost check-and-set, on the race read
        afresh; the events go to the hub."""
        races = self.store.races
        first = [known] if known is not None else []

        async def load() -> Race | None:
            return first.pop() if first else await races.load_race(code)

        return await check_and_set(load, decide, self.commit, busy=busy)

    async def create(
        self, make: Callable[[str], RaceChange], *, busy: str = "could not find a free join code"
    ) -> tuple[RaceChange, Committed]:
        """Commit a new race that ``make`` makes with a new join code (again with another
        code while the one drawn is taken: 1 in 32**5); the change, and what was
        committed."""
        attempt = await check_and_set(_new_code, make, self._commit_new, busy=busy)
        assert attempt.decision is not None and attempt.committed is not None
        return attempt.decision, attempt.committed

    async def _commit_new(self, change: RaceChange) -> Committed:
        return await self.commit(change, new=True)

    async def decide(
        self,
        load: Callable[[], Awaitable[S]],
        decide: Callable[[S], RaceChange | None],
        *,
        commit: Callable[[RaceChange], Awaitable[Committed]] | None = None,
        busy: str = BUSY,
    ) -> Attempt[S, RaceChange, Committed]:
        """:meth:`race` on what ``load`` reads (the race and more), committed by ``commit``
        (which ends with :meth:`commit`) or :meth:`commit` itself."""
        return await check_and_set(load, decide, commit or self.commit, busy=busy)

    async def commit(self, change: RaceChange, *, new: bool = False) -> Committed:
        """Commit one change (Conflict when its check-and-set lost; with ``new``: when the
        code is taken) and hand its events to the hub; a public race's listing follows."""
        committed = await self.store.commits.commit(change, new=new)
        self.publish(committed)
        if change.race.options.public:
            await self.store.open_list.list_race(
                change.race, committed.version, deleted=change.delete
            )
        return committed

    def publish(self, committed: Committed) -> None:
        """Hand a commit's events to the hub (after the mover's ack, for an action)."""
        if committed.events:
            self.hub.committed(committed.code, committed.version, committed.events)


async def _new_code() -> str:
    return new_code()
