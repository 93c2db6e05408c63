"""The node's side of par: computing a finished deal's par in the background, once.

When a race finishes, the node that committed the finish starts its par (:meth:`ParRunner.
ensure`); so does any node that next shows the race's end (a join of the finished race
goes through the node's ``advance``) while the race has no par, so that a par whose node
died is computed again. Exactly once across nodes:

- **a claim**: the node that computes takes the claim key (``SET NX``, the value its node
  name) for ``presence_ttl`` seconds and renews it every third of that while the search
  runs; another node that finds the claim live waits for it to end and looks again: the
  par landed (done), or the claim lapsed (its node died: it claims and searches);
- **a check-and-set**: the par lands on the race with a race commit
  (:func:`~..race.par_change`) on the race's version, which no race without par refuses
  and every race with its par already skips: one ``par`` event per race whatever happens.

The search runs in a solver worker (:meth:`~..workers.SolverWorkers.par`: after hints and
races' proofs, before the pool's refills, without resting; ``par_budget`` positions,
``par_deadline`` seconds), never in the node's
process; the finish never waits for it. A search that runs past its deadline counts as
not settled: the deal has no par. One at a time per node (its own cap among the pool's
jobs); the others wait here, at most :data:`MAX_WAITING`.

Before the search, the shortest winning line known at the finish (the line that proved a
winnable race's deal, the lines hints gave players, each winner's standing moves:
:func:`~..race.known_par`) lands at once as a provisional par; the search's settles it
(the shorter of the two).

The daily deal's par is computed once for the day, keyed on variant and day (its own
claim, ``daily:<variant>:<day>:par``), and lands on each of the day's races that shows
its end; it goes out (``par`` event, snapshot) only when the day is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from spider_client.protocol import ParInfo

from .. import race as rules
from ..closing import Spawner
from ..errors import Unavailable
from ..fanout.changes import Changes
from ..race import Race, RaceState, event_data
from ..settings import Settings
from ..store import Store, keys
from ..store.archive_queue import ArchiveQueue
from ..store.archive_races import FinishedRaces
from ..workers import JobRefused, SolverTimeout, SolverWorkers, WorkerError

__all__ = ["MAX_WAITING", "ParRunner"]

log = logging.getLogger(__name__)

MAX_WAITING = 256
"""Races whose par waits on one node for its turn; more are left to a later showing."""


class ParRunner:
    """The par searches of one node (see the module). ``spawner`` runs a coroutine in the
    node's background; ``clock`` is the deployment's time."""

    def __init__(
        self,
        store: Store,
        changes: Changes,
        workers: SolverWorkers,
        settings: Settings,
        *,
        clock: Callable[[], float],
        spawner: Spawner,
        finished: FinishedRaces | None = None,
    ) -> None:
        self.store = store
        self.finished = finished
        """Where a race gone from Redis is read, and its par kept (its archive)."""
        self.changes = changes
        self.workers = workers
        self.settings = settings
        self.clock = clock
        self.spawn = spawner.spawn
        self.pending: set[str] = set()
        """Races whose par this node is getting (waiting for its turn or searching)."""
        self._turn = asyncio.Semaphore(1)
        self.computed = 0
        """Par searches this node ran to an answer."""
        self.landed = 0
        """Pars this node kept with their race."""

    def ensure(self, race: Race) -> None:
        """Get the par of the finished ``race`` in the background unless it has one, this
        node is on it already, or too many wait here. Returns at once."""
        if race.state is not RaceState.FINISHED or _settled(race):
            return
        if not self.settings.par_budget:
            return
        if race.code in self.pending or len(self.pending) >= MAX_WAITING:
            return
        self.pending.add(race.code)
        self.spawn(self._get(race))

    async def _get(self, race: Race) -> None:
        variant, daily = race.options.variant, race.options.daily
        claim = keys.daily(variant, daily, "par_claim") if daily else keys.par_claim(race.code)
        try:
            if not daily and race.par is None:
                lines = await self.store.races.hint_lines(race.code)
                proof = await self.store.par.proof(variant, race.seed) if race.seed else None
                known = rules.known_par(race, [proof, *lines] if proof else lines)
                if known is not None:  # at once, before the search
                    await self._land(race, known)
            while True:
                kept = await self.store.par.daily_par(variant, daily) if daily else None
                if kept is not None:
                    await self._land(race, kept)
                    return
                claimed, par = await self._compute(race, claim)
                if claimed:
                    break
                # another node searches: once its claim ends, the par landed or it died
                await asyncio.sleep(await self.store.par.par_claim_left(claim) + 0.05)
                now = await self._race(race.code)
                if now is None or _settled(now):
                    return
            if par is None:
                return
            if daily:
                par = await self.store.par.set_daily_par(variant, daily, par)
            await self._land(race, par)
            with contextlib.suppress(Unavailable):
                await self.store.par.drop_par_claim(claim)
        finally:
            self.pending.discard(race.code)

    async def _compute(self, race: Race, claim: str) -> tuple[bool, ParInfo | None]:
        """Whether this node got ``claim``, and the deal's par it searched under it; None
        when the search did not end (the workers stopped, crashed or refused it: the claim
        is dropped, a later showing starts again)."""
        ttl = self.settings.presence_ttl
        async with self._turn:
            if not await self.store.par.claim_par(claim, ttl):
                return False, None
            job = asyncio.ensure_future(
                self.workers.par(
                    race.options.variant,
                    race.seed,
                    self.settings.par_budget,
                    deadline=self.settings.par_deadline,
                )
            )
            try:
                while not job.done():
                    await asyncio.wait([job], timeout=ttl / 3)
                    if not job.done():
                        with contextlib.suppress(Unavailable):
                            await self.store.par.renew_par_claim(claim, ttl)
                solved = job.result()
            except SolverTimeout:
                self.computed += 1
                return True, ParInfo(none=True)
            except (WorkerError, JobRefused) as e:
                log.warning("par of race %s not computed: %s", race.code, e)
                with contextlib.suppress(Unavailable):
                    await self.store.par.drop_par_claim(claim)
                return True, None
            finally:
                if not job.done():
                    job.cancel()
            self.computed += 1
            return True, rules.par_info(solved.verdict, solved.line, solved.first_length)

    async def _race(self, code: str) -> Race | None:
        if self.finished is not None:
            return await self.finished.race(code)
        return await self.store.races.load_race(code)

    async def _land(self, race: Race, par: ParInfo) -> None:
        """Keep ``par`` with ``race`` (check-and-set: once, whoever tries): in Redis while
        the race is there, and on its archived row once it is archived (an archived race
        whose par lands in Redis goes back to its short life there)."""
        now = self.clock()
        code = race.code
        attempt = await self.changes.race(
            code, lambda race: None if race is None else rules.par_change(race, par, now)
        )
        archived = self.finished.archived if self.finished is not None else None
        if attempt.committed is not None:
            self.landed += 1
            assert attempt.decision is not None
            if archived is not None and await archived.keep_newer(attempt.decision.race):
                queue = ArchiveQueue(self.store.redis)
                await queue.expire_race(attempt.decision.race, self.settings.archived_ttl)
            return
        if attempt.loaded is not None or archived is None:
            return
        change = await archived.change(
            code, race.created_at, lambda race: rules.par_change(race, par, now)
        )
        if change is not None:  # gone from Redis: its watchers here hear it at once
            self.landed += 1
            events = [(str(audience), event_data(e)) for audience, e in change.events]
            if events:
                self.changes.hub.committed(code, change.race.version, events)


def _settled(race: Race) -> bool:
    """Whether the race's par is settled (a provisional one is still searched)."""
    return race.par is not None and not race.par.provisional
