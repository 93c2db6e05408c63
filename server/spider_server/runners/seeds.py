"""Proven-winnable deals: the pool of seeds per variant, and the daily deal.

The solver runs in the node's worker processes (:class:`~..workers.SolverWorkers`), never
in the node's own process, each attempt within :attr:`Settings.solve_budget` positions
and :attr:`Settings.proof_deadline` seconds. Two kinds of work:

- **Demands**: a preparing ``winnable`` race (priority ``RACE``), or a day's deal asked
  for (``DAILY``: a hint, a race's proof or a par stops it and it runs again after, so
  that one request for a day's deal never holds other players' races), that someone on
  this node waits for. A demand is started by the session that
  creates the race (or asks for the day's deal, or rejoins a race still preparing) and
  counted against that player's identity and client address: at most
  ``proofs_per_identity`` and ``proofs_per_address`` demands each on a node, more are
  refused (:class:`~..workers.ProofCapReached`, ``rate_limited``) before anything is
  created. Other sessions that wait for the same race or deal join the demand. When the
  last of them stops waiting (left the race, or disconnected) the demand is cancelled,
  and so is the proof its worker runs: no core burns for a race nobody waits for. A
  race's demand proves fresh seeds until one is won and gives it to the race; a day's
  demand proves its candidates (below) and gives the day's seed to every daily race
  waiting for it.
- **Refills** (priority ``REFILL``, the lowest: a hint or a race's proof preempts one):
  :meth:`Seeds.run` keeps :attr:`Settings.pool_size` proven seeds ready (``pool:<variant>``)
  for every variant a winnable race was asked for, one proof at a time, so that creating
  one pops a seed at once; it also gives waiting races (``pool:waiting:<variant>``) the
  pool's seeds, and waiting daily races a day's seed proven meanwhile (by any node).

The daily seed is derived from the deployment's secret and the date (HMAC-SHA256 of
``daily|<variant>|<day>|<n>``, the first ``n`` = 0, 1, 2, … whose deal is proven), so
nobody can compute it; every node derives the same one, and ``SET NX`` keeps the first.
Once a variant's day's deal was asked for on a node, the node proves the next day's ahead
of it with the refills (one candidate a round): from then on the day's seed is there
before anyone asks, and no request for it waits for a proof.

Everything goes through the store; a race given its seed is handed to ``on_prepared``
(the node performs the transition that may then be due).
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import hmac
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from .. import race as rules
from ..errors import Unavailable
from ..fanout.changes import Changes
from ..race import Race, RaceChange
from ..settings import Settings
from ..store import Store, leaderboard_score
from ..store.redisconn import raise_if_cancelled
from ..workers import (
    JobRefused,
    Priority,
    ProofCapReached,
    SolverWorkers,
    WorkerError,
    WorkersClosed,
)

__all__ = ["Demand", "Seeds", "daily_seed", "leaderboard_score", "utc_day"]

log = logging.getLogger(__name__)

DAILY_ATTEMPTS = 50
"""Seeds tried for a day's deal before giving up (until it is asked for again)."""
ATTEMPTS_PER_ROUND = 20
"""Seeds tried per variant in one round of the refill loop."""
REFILL_OWNER = "pool"


def utc_day(now: float) -> str:
    """The UTC day of a time, ``YYYY-MM-DD``."""
    return datetime.datetime.fromtimestamp(now, datetime.UTC).strftime("%Y-%m-%d")


def daily_seed(secret: bytes, variant: str, day: str, n: int) -> str:
    """The ``n``-th candidate seed of a variant's daily deal: 32 hex digits."""
    message = f"daily|{variant}|{day}|{n}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:32]


Key = tuple[str, ...]
"""A demand's key: ``("race", code)`` or ``("daily", variant, day)``."""


@dataclass(eq=False)
class Demand:
    """Proofs someone on this node waits for (see the module)."""

    key: Key
    variant: str
    identity: str | None
    """Whose proofs they are (counted against the cap), the player who started it."""
    address: str | None
    waiters: set[Hashable] = field(default_factory=set)
    task: asyncio.Task[Any] | None = None


class Seeds:
    """One node's part in keeping proven seeds (see the module's description).

    ``clock`` is the deployment's time; ``on_prepared`` is awaited with the code of a race
    that was given its seed and is now counting down; ``workers`` run the proofs."""

    def __init__(
        self,
        store: Store,
        changes: Changes,
        settings: Settings,
        secret: bytes,
        *,
        clock: Callable[[], float],
        on_prepared: Callable[[str], Awaitable[object]],
        workers: SolverWorkers,
    ) -> None:
        self.store = store
        self.changes = changes
        self.settings = settings
        self.secret = secret
        self.clock = clock
        self.on_prepared = on_prepared
        self.workers = workers
        self.wake = asyncio.Event()
        self.closed = False
        self.demands: dict[Key, Demand] = {}
        self._by_identity: Counter[str] = Counter()
        self._by_address: Counter[str] = Counter()
        self._ahead: dict[str, tuple[str, int]] = {}
        """Variant whose day's deal was asked for on this node -> the next day whose deal
        is proven ahead, and its next candidate."""

    async def _prove(self, variant: str, seed: str, demand: Demand | None = None) -> bool:
        """Whether a worker proves the deal won: at ``RACE`` priority for a race's demand,
        ``DAILY`` for a day's (its identity and address counted), else at ``REFILL``. A
        job past its deadline, or whose worker died, counts as not proven; a full queue is
        waited out."""
        while True:
            try:
                if demand is None:
                    line = await self.workers.prove(
                        variant,
                        seed,
                        self.settings.solve_budget,
                        priority=Priority.REFILL,
                        owner=REFILL_OWNER,
                    )
                else:
                    line = await self.workers.prove(
                        variant,
                        seed,
                        self.settings.solve_budget,
                        priority=Priority.RACE if demand.key[0] == "race" else Priority.DAILY,
                        identity=demand.identity,
                        address=demand.address,
                    )
                if line is None:
                    return False
                # the line that won: its race's provisional par at the finish
                with contextlib.suppress(Unavailable):  # proven all the same
                    await self.store.par.keep_proof(variant, seed, list(line))
                return True
            except JobRefused:  # the queue is full: try again soon
                await asyncio.sleep(self.settings.pool_interval)
            except WorkersClosed:
                raise
            except WorkerError as e:
                log.warning("proving a %s deal gave no answer: %s", variant, e)
                return False

    def close(self) -> None:
        """Nothing more is proven: every demand is cancelled (its proof with it);
        :meth:`run` returns. :meth:`stopped` waits for the demands to end."""
        self.closed = True
        self.wake.set()
        for demand in list(self.demands.values()):
            if demand.task is not None:
                demand.task.cancel()

    async def stopped(self) -> None:
        """Wait for the demands' tasks to end (after :meth:`close`)."""
        tasks = [d.task for d in self.demands.values() if d.task is not None]
        if tasks:
            await asyncio.wait(tasks)
            for task in tasks:
                if not task.cancelled():
                    task.exception()

    # -- demands (a race or a day's deal someone on this node waits for) --------------------

    @staticmethod
    def race_key(code: str) -> Key:
        return ("race", code)

    @staticmethod
    def daily_key(variant: str, day: str) -> Key:
        return ("daily", variant, day)

    def check_room(
        self, *, identity: str | None, address: str | None, key: Key | None = None
    ) -> None:
        """:class:`ProofCapReached` (``rate_limited``) when a new demand of ``identity``
        or ``address`` would pass its cap; nothing when ``key``'s demand runs already
        (joining it costs nothing)."""
        if key is not None and key in self.demands:
            return
        s = self.settings
        if identity is not None and self._by_identity[identity] >= s.proofs_per_identity:
            raise ProofCapReached(
                f"at most {s.proofs_per_identity} deals may be proven at once per player;"
                " wait until one of your races is prepared"
            )
        if address is not None and self._by_address[address] >= s.proofs_per_address:
            raise ProofCapReached(
                f"at most {s.proofs_per_address} deals may be proven at once per address;"
                " wait until a race is prepared"
            )

    def need(
        self,
        key: Key,
        waiter: Hashable,
        *,
        variant: str,
        identity: str | None,
        address: str | None,
    ) -> None:
        """``waiter`` waits for ``key`` (:meth:`race_key` or :meth:`daily_key`): it joins
        that demand, or starts one (counted against ``identity`` and ``address``, without
        a check: see :meth:`check_room`). Nothing once closed."""
        if self.closed:
            return
        demand = self.demands.get(key)
        if demand is None:
            demand = Demand(key, variant, identity, address)
            self.demands[key] = demand
            if identity is not None:
                self._by_identity[identity] += 1
            if address is not None:
                self._by_address[address] += 1
            work = self._race(demand) if key[0] == "race" else self._daily(demand)
            demand.task = asyncio.get_running_loop().create_task(work)
            demand.task.add_done_callback(lambda _: self._forget(demand))
        demand.waiters.add(waiter)

    def release(self, waiter: Hashable, key: Key | None = None) -> None:
        """``waiter`` no longer waits for ``key`` (None: for anything); a demand nobody
        waits for any more is cancelled, with the proof under way."""
        for demand in [self.demands.get(key)] if key is not None else list(self.demands.values()):
            if demand is None or waiter not in demand.waiters:
                continue
            demand.waiters.discard(waiter)
            if not demand.waiters and demand.task is not None:
                demand.task.cancel()

    def _forget(self, demand: Demand) -> None:
        if self.demands.get(demand.key) is not demand:
            return
        del self.demands[demand.key]
        for counter, value in (
            (self._by_identity, demand.identity),
            (self._by_address, demand.address),
        ):
            if value is not None:
                counter[value] -= 1
                if counter[value] <= 0:
                    del counter[value]

    async def _race(self, demand: Demand) -> None:
        """Prove fresh seeds until one is won, and give it to the race (or to the pool,
        when the race was given one meanwhile); ends when the race is prepared or gone."""
        code = demand.key[1]
        while not self.closed:
            try:
                race = await self.store.races.load_race(code)
                if race is None or not race.preparing:
                    return
                seed = rules.new_seed()
                if not await self._prove(demand.variant, seed, demand):
                    continue
                if await self.assign(code, seed):
                    await self.store.seeds.unqueue_for_seed(demand.variant, code)
                else:
                    await self.store.seeds.add_seed(demand.variant, seed)
                    self.wake.set()
                return
            except Unavailable:
                await asyncio.sleep(self.settings.pool_interval)
            except WorkersClosed:
                return

    async def _daily(self, demand: Demand) -> None:
        """Prove the day's candidates in order until one is won (unless a node did it
        already), then give the day's seed to the daily races waiting for it."""
        _, variant, day = demand.key
        for _ in range(3):  # Redis unavailable: a few more tries
            try:
                seed = await self.daily(variant, day)
                n = 0
                while seed is None and n < DAILY_ATTEMPTS and not self.closed:
                    candidate = daily_seed(self.secret, variant, day, n)
                    if await self._prove(variant, candidate, demand):
                        seed = await self.store.seeds.set_daily_seed(variant, day, candidate)
                    else:
                        seed = await self.daily(variant, day)  # another node's, maybe
                    n += 1
                if seed is not None:
                    await self._serve_daily(variant, day, seed)
                    await self.store.seeds.daily_served(variant, day)
                return
            except Unavailable:
                await asyncio.sleep(self.settings.pool_interval)
            except WorkersClosed:
                return

    # -- requests (never wait on a search) ---------------------------------------------------

    async def take(self, variant: str) -> str | None:
        """A proven seed for a new winnable race, or None when the pool is empty (the race
        then waits: :meth:`wait`)."""
        seed = await self.store.seeds.take_seed(variant)
        self.wake.set()
        return seed

    async def wait(self, variant: str, code: str) -> None:
        """Queue a preparing winnable race for the pool's next proven seed."""
        await self.store.seeds.queue_for_seed(variant, code)
        self.wake.set()

    async def daily(self, variant: str, day: str) -> str | None:
        """The day's proven seed, or None when not proven yet. A variant whose day's deal
        is asked for has its next day's proven ahead from then on (after a restart too)."""
        self._ahead.setdefault(variant, ("", 0))
        return await self.store.seeds.daily_seed(variant, day)

    async def wait_daily(self, variant: str, day: str, code: str) -> None:
        """Queue a preparing daily race for the day's seed (given at once if it was proven
        meanwhile)."""
        await self.store.seeds.queue_daily_race(variant, day, code)
        self.wake.set()
        seed = await self.daily(variant, day)
        if seed is not None:
            await self._serve_daily(variant, day, seed)

    # -- the background loop ----------------------------------------------------------------

    async def run(self) -> None:
        while not self.closed:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.settings.pool_interval):
                    await self.wake.wait()
            self.wake.clear()
            if self.closed:
                return
            try:
                await self.round()
            except (Unavailable, WorkersClosed):
                raise_if_cancelled()  # a cancel that came out as the call's own error
            except asyncio.CancelledError:
                raise
            except Exception:
                raise_if_cancelled()
                log.exception("proving seeds failed")

    async def round(self) -> None:
        """One round: daily races given a day's seed proven meanwhile, waiting races given
        the pools' seeds, then the pools refilled (``REFILL``, one proof at a time), then
        one candidate of the next day's deal proven for each variant whose day's deal was
        asked for on this node (``REFILL`` too)."""
        store = self.store
        for variant, day in await store.seeds.dailies_pending():
            seed = await self.daily(variant, day)
            if seed is not None:
                await self._serve_daily(variant, day, seed)
                await store.seeds.daily_served(variant, day)
        size = self.settings.pool_size
        for variant in await store.seeds.pool_variants():
            for _ in range(ATTEMPTS_PER_ROUND):
                await self._pair(variant)
                _, stocked = await store.seeds.pool_counts(variant)
                if stocked >= size or self.closed:
                    break
                seed = rules.new_seed()
                if await self._prove(variant, seed):
                    await store.seeds.add_seed(variant, seed)
        for variant in list(self._ahead):
            if not self.closed:
                await self._prove_ahead(variant)

    async def _prove_ahead(self, variant: str) -> None:
        """Prove one candidate of the next day's deal of ``variant`` (``REFILL``, as the
        pool's own work), unless that day has its seed already or its candidates ran out:
        on the day, nobody's request for it waits for a proof."""
        day = utc_day(self.clock() + 86_400)
        seen, n = self._ahead[variant]
        if seen != day:
            n = 0
        if n >= DAILY_ATTEMPTS or await self.daily(variant, day) is not None:
            self._ahead[variant] = (day, n)
            return
        candidate = daily_seed(self.secret, variant, day, n)
        self._ahead[variant] = (day, n + 1)
        if await self._prove(variant, candidate):
            await self.store.seeds.set_daily_seed(variant, day, candidate)

    async def _pair(self, variant: str) -> None:
        """Give waiting races the pool's seeds while there are both."""
        while (pair := await self.store.seeds.pair_seed(variant)) is not None:
            code, seed = pair
            if not await self.assign(code, seed):
                await self.store.seeds.return_seed(variant, seed)  # the race is gone

    async def _serve_daily(self, variant: str, day: str, seed: str) -> None:
        while (code := await self.store.seeds.pop_daily_race(variant, day)) is not None:
            await self.assign(code, seed)

    async def assign(self, code: str, seed: str) -> bool:
        """Give a preparing race its seed; False when there is no such race preparing."""

        def decide(race: Race | None) -> RaceChange | None:
            if race is None or not race.preparing:
                return None
            return rules.prepare(race, seed, self.clock())

        attempt = await self.changes.race(code, decide)
        change = attempt.decision
        if change is None:
            return False
        if change.race.state is rules.RaceState.COUNTDOWN:
            await self.on_prepared(code)
        return True
