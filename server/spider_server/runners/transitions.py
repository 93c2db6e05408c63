"""A race's transitions made when due: the countdown's end starts it, the time limit or
every game over finishes it.

:meth:`Advancer.advance` reads the race (and, for a finish, every game, its hints and its
ghosts' runs), asks :func:`~..race.due_transition` and the rules' ``start`` / ``finish``
for the change, and commits it through :class:`~..fanout.changes.Changes`. Safe on every node at
once: the check-and-set on the race's version lets one commit win; the others read the
race again and find nothing due.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from .. import race as rules
from ..closing import Spawner
from ..fanout.changes import Changes
from ..metrics import Metrics
from ..race import Game, Race, RaceChange
from ..store import Committed, Store
from .archiver import Archiver
from .par import ParRunner

__all__ = ["Advancer"]


class _Due(NamedTuple):
    """A race as read for its transition: what is due at ``now``, and for a finish what
    the finish is decided on."""

    race: Race | None
    now: float
    due: str | None
    games: dict[str, Game]
    replays: dict[str, list[str]]
    times: dict[str, list[int]]
    hints: dict[str, int] | None


class Advancer:
    """Makes the transitions that are due."""

    def __init__(
        self,
        store: Store,
        changes: Changes,
        pars: ParRunner,
        metrics: Metrics,
        spawner: Spawner,
        clock: Callable[[], float],
        archiver: Archiver | None = None,
    ) -> None:
        self.store = store
        self.archiver = archiver
        """Where finished races are queued for the database (None: nowhere)."""
        self.changes = changes
        self.pars = pars
        self.metrics = metrics
        self.spawner = spawner
        self.clock = clock
        """The deployment's time."""

    async def advance(self, code: str) -> Race | None:
        """The race now, after performing whatever transition is due (start or finish,
        one after the other when both are); None when there is no such race. A finished
        race gone from Redis is read from the archive (nothing is due on it; its par is
        seen to)."""
        while True:
            attempt = await self.changes.decide(
                lambda: self._load(code), _decide, commit=self._commit
            )
            loaded = attempt.loaded
            if attempt.decision is None:
                if loaded.race is not None:
                    self.pars.ensure(loaded.race)  # a finished race shown without its par
                return loaded.race
            change = attempt.decision
            self.metrics.transitions_total[loaded.due or ""] += 1
            if change.finished:
                self.spawner.spawn(self.store.ratings.apply_results(change.race))
            self.pars.ensure(change.race)  # in the background: the finish does not wait
            if change.finished and change.race.options.daily:
                await self.store.seeds.record_daily(change.race)

    async def _load(self, code: str) -> _Due:
        races = self.store.races
        race = await races.load_race(code)
        now = self.clock()
        archived = self.archiver.archived_races if self.archiver is not None else None
        if race is None and archived is not None:  # archived: finished, nothing due
            return _Due(await archived.race(code), now, None, {}, {}, {}, None)
        due = None if race is None else rules.due_transition(race, now)
        if race is None or due != "finish":
            return _Due(race, now, due, {}, {}, {}, None)
        games, replays, times = await races.load_timed_games(race)
        hints = await races.load_hints(code) if race.options.hints else None
        if any(e.ghost for e in race.players.values()):
            runs = await races.load_ghost_runs(code)
            games, ghost_replays, ghost_times = rules.finish_ghosts(race, games, runs)
            replays.update(ghost_replays)
            times.update(ghost_times)
        return _Due(race, now, due, games, replays, times, hints)

    async def _commit(self, change: RaceChange) -> Committed:
        if change.finished:  # before the finish: a node that dies after it leaves the
            # results pending (every node's background step writes them)
            await self.store.ratings.mark_pending(change.race.code, self.clock())
            if self.archiver is not None:
                await self.archiver.mark(change.race)
        return await self.changes.commit(change)


def _decide(loaded: _Due) -> RaceChange | None:
    race = loaded.race
    if race is None or loaded.due is None:
        return None
    if loaded.due == "start":
        return rules.start(race, loaded.now)
    return rules.finish(race, loaded.games, loaded.replays, loaded.now, loaded.hints, loaded.times)
