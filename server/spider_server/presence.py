"""Presence: who of a running race is away, back, abandoned, or stuck on undo
(:mod:`.race.presence` decides; this module reads and commits).

Like the races' transitions, it is decided from what every node sees in Redis: the
players' claims on the race (renewed by the node holding each connection, every third of
``presence_ttl``; dropped at once when a connection ends) and the race's entries. Every
third of ``presence_ttl`` each node reads, for the running races it watches, the race and
its live claims, and commits what is due with a check-and-set on the race's version: a
claim that lapsed (its node died) or was dropped is ``away``, one that is live again is
``back``. A connection that ends, and a player who rejoins, have their race checked at
once.
"""

from __future__ import annotations

from collections.abc import Callable

from . import race as rules
from .errors import Conflict
from .hub import Hub
from .race import Race, Status
from .settings import Settings
from .store import Store, cas_tries

__all__ = ["Presence"]


class Presence:
    """Reads a race and its live claims from the store and commits the presence decision
    that is due (with a check-and-set on the race's version: one node wins), telling the
    hub's watch of a player who is out. ``clock`` is the node's server time."""

    def __init__(
        self, store: Store, hub: Hub, settings: Settings, *, clock: Callable[[], float]
    ) -> None:
        self.store = store
        self.hub = hub
        self.settings = settings
        self.clock = clock

    async def check(self, code: str, *, resumed: str | None = None) -> None:
        """Commit whatever presence decision is due in race ``code`` now (away, back,
        abandoned, stuck on undo), read afresh. ``resumed``: a player who rejoins the race
        after losing a connection (their claim was just renewed)."""
        for _ in cas_tries():
            now = self.clock()
            [(race, online)] = await self.store.races_present([code], now)
            if race is None or await self._decide(race, online, now, resumed):
                return

    async def _decide(
        self, race: Race, online: set[str], now: float, resumed: str | None = None
    ) -> bool:
        """Commit what :func:`~.race.presence_plan` says is due in ``race``; False when the
        check-and-set lost (the caller reads the race again)."""
        plan = rules.presence_plan(race, online, now, resumed=resumed)
        if not plan:
            return True
        since = None
        if plan.get(resumed or "") == "resumed":
            # the claims of the lost connection are still live: it was last renewed a
            # claim's life before it expires (the newest claim is the rejoin's own)
            claims = sorted(await self.store.last_claims(race.code, resumed or "", now))
            if len(claims) > 1:
                since = claims[-2] - self.settings.presence_ttl
        games = {}
        for pid, due in plan.items():
            if due in ("abandoned", "stuck"):
                game = await self.store.load_game(race.code, pid)
                if game is None:
                    return True  # pragma: no cover - a running race has every game
                games[pid] = game
        change = rules.presence_change(race, plan, games, now, resumed_since=since)
        if change is None:
            return True
        try:
            await self.store.commit(change)
        except Conflict:
            return False
        for pid, due in plan.items():
            if due in ("abandoned", "stuck"):
                watch = self.hub.watches.get(race.code)
                if watch is not None:
                    watch.set_status(pid, Status.ABANDONED if due == "abandoned" else Status.STUCK)
        return True

    async def sweep(self) -> None:
        """Decide presence in every running race this node watches (see the module's
        docstring); a decision that lost its check-and-set is made again on the race read
        afresh."""
        codes = [w.code for w in list(self.hub.watches.values()) if w.state == "running"]
        if not codes:
            return
        now = self.clock()
        for race, online in await self.store.races_present(codes, now):
            if race is not None and not await self._decide(race, online, now):
                await self.check(race.code)

