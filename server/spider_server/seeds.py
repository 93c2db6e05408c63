"""Proven-winnable deals: the pool of seeds per variant, and the daily deal.

Each node runs :meth:`Seeds.run` in the background. It proves seeds with the solver in a
worker thread (never on a request's path, one search at a time), each attempt within
:attr:`Settings.solve_budget` positions, and

- gives each ``winnable`` race that is preparing (``pool:waiting:<variant>``) a seed as
  soon as one is proven;
- keeps :attr:`Settings.pool_size` proven seeds ready (``pool:<variant>``) for every
  variant a winnable race was asked for, so that creating one pops a seed at once;
- proves the day's deal of a variant once it is asked for (``daily:pending``) and gives it
  to the daily races preparing for it.

The daily seed is derived from the deployment's secret and the date (HMAC-SHA256 of
``daily|<variant>|<day>|<n>``, the first ``n`` = 0, 1, 2, … whose deal is proven), so
nobody can compute it; every node derives the same one, and ``SET NX`` keeps the first.

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
from collections.abc import Awaitable, Callable
from typing import Any

from . import race as rules
from .errors import Conflict, Unavailable
from .settings import Settings
from .store import Store, cas_tries, leaderboard_score

__all__ = ["Seeds", "daily_seed", "leaderboard_score", "prove", "utc_day"]

log = logging.getLogger(__name__)

DAILY_ATTEMPTS = 50
"""Seeds tried for a day's deal before giving up until the next round."""
ATTEMPTS_PER_ROUND = 20
"""Seeds tried per variant in one round of the refill loop."""


def prove(variant: str, seed: str, budget: int) -> bool:
    """Whether the solver proves the deal of ``seed`` winnable within ``budget`` positions
    (runs in a worker thread)."""
    from spider_engine import Board
    from spider_engine.solver import solve

    return solve(Board.deal(variant, seed), budget=budget).verdict == "won"


def utc_day(now: float) -> str:
    """The UTC day of a time, ``YYYY-MM-DD``."""
    return datetime.datetime.fromtimestamp(now, datetime.UTC).strftime("%Y-%m-%d")


def daily_seed(secret: bytes, variant: str, day: str, n: int) -> str:
    """The ``n``-th candidate seed of a variant's daily deal: 32 hex digits."""
    message = f"daily|{variant}|{day}|{n}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:32]


class Seeds:
    """One node's part in keeping proven seeds (see the module's description).

    ``clock`` is the deployment's time; ``on_prepared`` is awaited with the code of a race
    that was given its seed and is now counting down."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        secret: bytes,
        *,
        clock: Callable[[], float],
        on_prepared: Callable[[str], Awaitable[Any]],
    ) -> None:
        self.store = store
        self.settings = settings
        self.secret = secret
        self.clock = clock
        self.on_prepared = on_prepared
        self.wake = asyncio.Event()
        self.closed = False

    async def _prove(self, variant: str, seed: str) -> bool:
        return await asyncio.to_thread(prove, variant, seed, self.settings.solve_budget)

    def close(self) -> None:
        """Nothing more is proven (a search under way ends within its budget); :meth:`run`
        returns."""
        self.closed = True
        self.wake.set()

    # -- requests (never wait on a search) ---------------------------------------------------

    async def take(self, variant: str) -> str | None:
        """A proven seed for a new winnable race, or None when the pool is empty (the race
        then waits: :meth:`wait`)."""
        seed = await self.store.take_seed(variant)
        self.wake.set()
        return seed

    async def wait(self, variant: str, code: str) -> None:
        """Queue a preparing winnable race for the next proven seed."""
        await self.store.queue_for_seed(variant, code)
        self.wake.set()

    async def daily(self, variant: str, day: str) -> str | None:
        """The day's proven seed, or None when not proven yet."""
        return await self.store.daily_seed(variant, day)

    async def wait_daily(self, variant: str, day: str, code: str) -> None:
        """Queue a preparing daily race for the day's seed (given at once if it was proven
        meanwhile)."""
        await self.store.queue_daily_race(variant, day, code)
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
            except Unavailable:
                pass
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("proving seeds failed")

    async def round(self) -> None:
        """One round: daily deals asked for, then the winnable pools."""
        store = self.store
        for variant, day in await store.dailies_pending():
            seed = await self.daily(variant, day)
            if seed is None:
                seed = await self._prove_daily(variant, day)
                if seed is None:
                    continue
            await self._serve_daily(variant, day, seed)
            await store.daily_served(variant, day)
        size = self.settings.pool_size
        for variant in await store.pool_variants():
            for _ in range(ATTEMPTS_PER_ROUND):
                await self._pair(variant)
                waiting, stocked = await store.pool_counts(variant)
                if not waiting and stocked >= size:
                    break
                seed = rules.new_seed()
                if await self._prove(variant, seed):
                    await store.add_seed(variant, seed)

    async def _pair(self, variant: str) -> None:
        """Give waiting races the pool's seeds while there are both."""
        while (pair := await self.store.pair_seed(variant)) is not None:
            code, seed = pair
            if not await self.assign(code, seed):
                await self.store.return_seed(variant, seed)  # the race is gone

    async def _prove_daily(self, variant: str, day: str) -> str | None:
        for n in range(DAILY_ATTEMPTS):
            seed = daily_seed(self.secret, variant, day, n)
            if await self._prove(variant, seed):
                return await self.store.set_daily_seed(variant, day, seed)
        return None

    async def _serve_daily(self, variant: str, day: str, seed: str) -> None:
        while (code := await self.store.pop_daily_race(variant, day)) is not None:
            await self.assign(code, seed)

    async def assign(self, code: str, seed: str) -> bool:
        """Give a preparing race its seed; False when there is no such race preparing."""
        for _ in cas_tries():
            race = await self.store.load_race(code)
            if race is None or not race.preparing:
                return False
            change = rules.prepare(race, seed, self.clock())
            try:
                await self.store.commit(change)
            except Conflict:
                continue
            if change.race.state is rules.RaceState.COUNTDOWN:
                await self.on_prepared(code)
            return True
        raise AssertionError("unreachable: cas_tries raises when the tries are spent")
