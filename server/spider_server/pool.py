"""Proven-winnable deals: the pool of seeds per variant, and the daily deal.

Each node runs :meth:`Pool.run` in the background. It proves seeds with the solver in a
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
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import hashlib
import hmac
import logging
from typing import TYPE_CHECKING, Any

from redis.exceptions import RedisError

from . import keys
from . import race as rules
from .errors import Conflict, Unavailable

if TYPE_CHECKING:
    from .app import Node

__all__ = ["Pool", "daily_seed", "prove", "utc_day"]

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


class Pool:
    """One node's part in keeping proven seeds (see the module's description)."""

    def __init__(self, node: Node) -> None:
        self.node = node
        self.wake = asyncio.Event()
        self.closed = False

    @property
    def redis(self) -> Any:
        return self.node.redis

    async def _prove(self, variant: str, seed: str) -> bool:
        budget = self.node.settings.solve_budget
        return await asyncio.to_thread(prove, variant, seed, budget)

    def close(self) -> None:
        """Nothing more is proven (a search under way ends within its budget); :meth:`run`
        returns."""
        self.closed = True
        self.wake.set()

    # -- requests (never wait on a search) ---------------------------------------------------

    async def take(self, variant: str) -> str | None:
        """A proven seed for a new winnable race, or None when the pool is empty (the race
        then waits: :meth:`wait`)."""
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.sadd(keys.POOL_VARIANTS, variant)
                pipe.lpop(keys.pool(variant))
                _, seed = await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        self.wake.set()
        return None if seed is None else _text(seed)

    async def wait(self, variant: str, code: str) -> None:
        """Queue a preparing winnable race for the next proven seed."""
        try:
            await self.redis.rpush(keys.pool_waiting(variant), code)
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        self.wake.set()

    async def daily(self, variant: str, day: str) -> str | None:
        """The day's proven seed, or None when not proven yet."""
        try:
            seed = await self.redis.get(keys.daily(variant, day))
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return None if seed is None else _text(seed)

    async def wait_daily(self, variant: str, day: str, code: str) -> None:
        """Queue a preparing daily race for the day's seed (given at once if it was proven
        meanwhile)."""
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.sadd(keys.daily(variant, day, "waiting"), code)
                pipe.expire(keys.daily(variant, day, "waiting"), keys.DAILY_TTL)
                pipe.sadd(keys.DAILY_PENDING, f"{variant}|{day}")
                await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        self.wake.set()
        seed = await self.daily(variant, day)
        if seed is not None:
            await self._serve_daily(variant, day, seed)

    # -- the background loop ----------------------------------------------------------------

    async def run(self) -> None:
        while not self.closed:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.node.settings.pool_interval):
                    await self.wake.wait()
            self.wake.clear()
            if self.closed:
                return
            try:
                await self.round()
            except (Unavailable, RedisError):
                pass
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("proving seeds failed")

    async def round(self) -> None:
        """One round: daily deals asked for, then the winnable pools."""
        for item in [_text(i) for i in await self.redis.smembers(keys.DAILY_PENDING)]:
            variant, _, day = item.partition("|")
            seed = await self.daily(variant, day)
            if seed is None:
                seed = await self._prove_daily(variant, day)
                if seed is None:
                    continue
            await self._serve_daily(variant, day, seed)
            await self.redis.srem(keys.DAILY_PENDING, item)
        size = self.node.settings.pool_size
        for variant in sorted(_text(v) for v in await self.redis.smembers(keys.POOL_VARIANTS)):
            for _ in range(ATTEMPTS_PER_ROUND):
                await self._pair(variant)
                waiting = await self.redis.llen(keys.pool_waiting(variant))
                stocked = await self.redis.llen(keys.pool(variant))
                if not waiting and stocked >= size:
                    break
                seed = rules.new_seed()
                if await self._prove(variant, seed):
                    await self.redis.rpush(keys.pool(variant), seed)

    async def _pair(self, variant: str) -> None:
        """Give waiting races the pool's seeds while there are both."""
        while True:
            code = await self.redis.lpop(keys.pool_waiting(variant))
            if code is None:
                return
            seed = await self.redis.lpop(keys.pool(variant))
            if seed is None:
                await self.redis.lpush(keys.pool_waiting(variant), code)
                return
            if not await self.assign(_text(code), _text(seed)):
                await self.redis.lpush(keys.pool(variant), seed)  # the race is gone

    async def _prove_daily(self, variant: str, day: str) -> str | None:
        for n in range(DAILY_ATTEMPTS):
            seed = daily_seed(self.node.secret, variant, day, n)
            if await self._prove(variant, seed):
                key = keys.daily(variant, day)
                await self.redis.set(key, seed, nx=True, ex=keys.DAILY_TTL)
                return await self.daily(variant, day)
        return None

    async def _serve_daily(self, variant: str, day: str, seed: str) -> None:
        while True:
            code = await self.redis.spop(keys.daily(variant, day, "waiting"))
            if code is None:
                return
            await self.assign(_text(code), seed)

    async def assign(self, code: str, seed: str) -> bool:
        """Give a preparing race its seed; False when there is no such race preparing."""
        node = self.node
        for _ in range(20):
            race = await node.store.load_race(code)
            if race is None or not race.preparing:
                return False
            change = rules.prepare(race, seed, node.now())
            try:
                await node.store.commit(change)
            except Conflict:
                continue
            if change.race.state is rules.RaceState.COUNTDOWN:
                await node.advance(code)
            return True
        return False


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


# -- the daily races and their leaderboard ---------------------------------------------------


async def daily_race_of(redis: Any, variant: str, day: str, player: str) -> str | None:
    """The code of the player's daily race of that day, if they have one."""
    try:
        code = await redis.hget(keys.daily(variant, day, "races"), player)
    except RedisError as e:
        raise Unavailable(f"storage: {e}") from None
    return None if code is None else _text(code)


async def set_daily_race(redis: Any, variant: str, day: str, player: str, code: str) -> bool:
    """Record the player's daily race of the day; False when they have one already."""
    key = keys.daily(variant, day, "races")
    try:
        async with redis.pipeline(transaction=False) as pipe:
            pipe.hsetnx(key, player, code)
            pipe.expire(key, keys.DAILY_TTL)
            done, _ = await pipe.execute()
    except RedisError as e:
        raise Unavailable(f"storage: {e}") from None
    return bool(done)


def leaderboard_score(time: float, moves: int) -> int:
    """The sorted set's score: by time (milliseconds), then moves."""
    return int(round(time * 1000)) * 1_000_000 + min(moves, 999_999)


async def record_daily(redis: Any, race: rules.Race) -> None:
    """Put the winners of a finished daily race on its day's leaderboard (first finish
    only)."""
    o = race.options
    if not o.daily or race.final is None:
        return
    board = keys.leaderboard(o.variant, o.daily)
    names = keys.leaderboard(o.variant, o.daily, "names")
    try:
        async with redis.pipeline(transaction=False) as pipe:
            for r in race.final.results:
                if r.status == rules.Status.WON and r.time is not None:
                    pipe.zadd(board, {r.player: leaderboard_score(r.time, r.moves)}, nx=True)
                    pipe.hsetnx(names, r.player, r.name)
            pipe.expire(board, keys.DAILY_TTL)
            pipe.expire(names, keys.DAILY_TTL)
            await pipe.execute()
    except RedisError as e:
        raise Unavailable(f"storage: {e}") from None


async def leaderboard(
    redis: Any, variant: str, day: str, limit: int = 100
) -> list[tuple[str, str, float, int]]:
    """The day's leaderboard, best first: (player, name, time, moves)."""
    board, names = keys.leaderboard(variant, day), keys.leaderboard(variant, day, "names")
    try:
        rows = await redis.zrange(board, 0, limit - 1, withscores=True)
        players = [_text(p) for p, _ in rows]
        shown = await redis.hmget(names, players) if players else []
    except RedisError as e:
        raise Unavailable(f"storage: {e}") from None
    out = []
    for (_, score), player, name in zip(rows, players, shown, strict=True):
        value = int(score)
        out.append((player, _text(name or player), value // 1_000_000 / 1000, value % 1_000_000))
    return out
