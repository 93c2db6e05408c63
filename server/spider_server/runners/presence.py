"""Presence: who of a running race is away, back, abandoned, idle, or stuck on undo
(:mod:`..race.presence` decides; this module reads and commits).

Like the races' transitions, it is decided from what every node sees in Redis: the
players' claims on the race (renewed by the node holding each connection, every third of
``presence_ttl``; dropped at once when a connection ends) and the race's entries. Every
third of ``presence_ttl`` each node reads, for the running races it watches, the race and
its live claims, and commits what is due with a check-and-set on the race's version: a
claim that lapsed (its node died) or was dropped is ``away``, one that is live again is
``back``. A connection that ends, and a player who rejoins, have their race checked at
once; and on every tick, a race whose player's idle deadline has passed (as its watch here
knows it from the events: :func:`~..race.next_idle`) is checked then, so that an idle
player is out when due, not at the next sweep.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import NamedTuple

from .. import race as rules
from ..closing import Spawner, between_turns
from ..errors import Unavailable
from ..fanout.changes import Changes
from ..fanout.watches import RaceWatch
from ..race import Game, Race, RaceChange
from ..race.presence import Due as PresenceDue
from ..settings import Settings
from ..store import Store

log = logging.getLogger(__name__)

RETRY = 0.5
"""Seconds (monotonic) before a tick checks a race's idle players again after a check."""

__all__ = ["Presence"]


class _Due(NamedTuple):
    """A race as read for its presence decision: the plan due at ``now`` and what the
    change is decided on."""

    race: Race | None
    plan: dict[str, PresenceDue]
    games: dict[str, Game]
    now: float
    since: float | None
    """When the claims of a resumed player's lost connection lapsed (None: not known)."""


def _decide(due: _Due) -> RaceChange | None:
    if due.race is None or not due.plan:
        return None
    return rules.presence_change(due.race, due.plan, due.games, due.now, resumed_since=due.since)


class Presence:
    """Reads a race and its live claims from the store and commits the presence decision
    that is due (with a check-and-set on the race's version: one node wins), telling the
    hub's watch of a player who is out. ``clock`` is the node's server time; ``spawner``
    runs the checks a tick asks for."""

    def __init__(
        self,
        store: Store,
        changes: Changes,
        settings: Settings,
        *,
        clock: Callable[[], float],
        spawner: Spawner | None = None,
    ) -> None:
        self.store = store
        self.changes = changes
        self.settings = settings
        self.clock = clock
        self.spawner = spawner
        self._checking: set[str] = set()
        """Races whose check a tick started and that is not done."""

    async def check(self, code: str, *, resumed: str | None = None) -> None:
        """Commit whatever presence decision is due in race ``code`` now (away, back,
        abandoned, idle, stuck on undo), read afresh. ``resumed``: a player who rejoins the race
        after losing a connection (their claim was just renewed)."""
        await self._check(code, resumed, None)

    async def _check(
        self, code: str, resumed: str | None, read: tuple[Race, set[str], float] | None
    ) -> None:
        """:meth:`check`, deciding first on the race and claims ``read`` already (if any),
        then on what is read afresh."""

        async def load() -> _Due:
            nonlocal read
            if read is not None:
                race, online, now = read
                read = None
            else:
                now = self.clock()
                [(found, online)] = await self.store.presence.races_present([code], now)
                if found is None:
                    return _Due(None, {}, {}, now, None)
                race = found
            return await self._due(race, online, now, resumed)

        attempt = await self.changes.decide(load, _decide)
        due = attempt.loaded
        if attempt.committed is None or due.race is None:
            return
        watch = self.changes.hub.watches.get(code)
        if watch is None:
            return
        for pid, what in due.plan.items():
            if what in rules.OUT:
                watch.set_status(pid, rules.OUT[what])

    async def _due(self, race: Race, online: set[str], now: float, resumed: str | None) -> _Due:
        """What :func:`~..race.presence_plan` says is due in ``race``, with what the change
        is decided on."""
        plan = rules.presence_plan(race, online, now, resumed=resumed)
        if not plan:
            return _Due(race, {}, {}, now, None)
        since = None
        if plan.get(resumed or "") == "resumed":
            # the claims of the lost connection are still live: it was last renewed a
            # claim's life before it expires (the newest claim is the rejoin's own)
            claims = sorted(await self.store.presence.last_claims(race.code, resumed or "", now))
            if len(claims) > 1:
                since = claims[-2] - self.settings.presence_ttl
        games = {}
        for pid, due in plan.items():
            if due in rules.OUT:
                game = await self.store.races.load_game(race.code, pid)
                if game is None:  # pragma: no cover - a running race has every game
                    return _Due(race, {}, {}, now, None)
                games[pid] = game
        return _Due(race, dict(plan), games, now, since)

    async def sweep(self) -> None:
        """Decide presence in every running race this node watches (see the module's
        docstring); a decision that lost its check-and-set is made again on the race read
        afresh."""
        codes = [w.code for w in list(self.changes.hub.watches.values()) if w.state == "running"]
        if not codes:
            return
        now = self.clock()
        for race, online in await self.store.presence.races_present(codes, now):
            if race is not None:
                await self._check(race.code, None, (race, online, now))

    async def run(self, items: Callable[[], list[tuple[str, str, bool]]]) -> None:
        """A :meth:`turn` every third of ``presence_ttl``, on the ``items`` of the node's
        connections then, for as long as it runs."""
        while True:
            await between_turns(self.settings.presence_ttl / 3)
            await self.turn(items())

    async def turn(self, items: list[tuple[str, str, bool]]) -> None:
        """The node's presence turn (every third of ``presence_ttl``): renew its claims on
        the races it watches and those of its connections (``items``: code, member,
        spectator), then :meth:`sweep`. Redis not answering skips a step; any other
        failure is logged."""
        with contextlib.suppress(Unavailable):
            await self.changes.hub.renew()
        with contextlib.suppress(Unavailable):
            await self.store.presence.touch_presence(items, self.clock())
        try:
            await self.sweep()
        except Unavailable:
            pass
        except Exception:
            log.exception("presence sweep failed")

    def tick(self, watch: RaceWatch, now: float, mono: float) -> None:
        """On the node's tick: check race ``watch.code`` in the background when, as far as
        its watch knows, a player's idle deadline has passed (at most one check of a race
        at once, and none again within :data:`RETRY` seconds)."""
        view = watch.view
        if view is None or self.spawner is None or watch.code in self._checking:
            return
        due = watch.idle_due()
        if due is None or now < due or mono < watch.next_idle_check:
            return
        watch.next_idle_check = mono + RETRY
        code = watch.code
        self._checking.add(code)

        async def run() -> None:
            try:
                await self.check(code)
            finally:
                self._checking.discard(code)

        if self.spawner.spawn(run()) is None:
            self._checking.discard(code)
