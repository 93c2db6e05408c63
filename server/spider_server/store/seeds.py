"""Redis commands of the proven seeds' pools, the daily deals and their leaderboards (the
keys are described in :mod:`.keys`; what uses them is :mod:`..runners.seeds`)."""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from ..race import Race, Status
from . import keys
from .codec import text
from .guard import as_unavailable

__all__ = ["SeedStore", "leaderboard_score"]


def leaderboard_score(time: float, moves: int) -> int:
    """The sorted set's score: by time (milliseconds), then moves."""
    return int(round(time * 1000)) * 1_000_000 + min(moves, 999_999)


def _opt_text(value: bytes | str | None) -> str | None:
    return None if value is None else text(value)


class SeedStore:
    """The pools of proven seeds (``pool:*``), the daily deals (``daily:*``) and their
    leaderboards (``leaderboard:*``)."""

    def __init__(self, redis: Redis) -> None:
        self._redis: Any = redis

    # -- the winnable pools -------------------------------------------------------------------

    async def take_seed(self, variant: str) -> str | None:
        """Pop a proven seed of ``variant`` (None when there is none), noting that the
        variant is asked for (its pool is refilled)."""
        with as_unavailable:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.sadd(keys.POOL_VARIANTS, variant)
                pipe.lpop(keys.pool(variant))
                _, seed = await pipe.execute()
        return _opt_text(seed)

    async def queue_for_seed(self, variant: str, code: str) -> None:
        """Queue a preparing winnable race for the next proven seed."""
        with as_unavailable:
            await self._redis.rpush(keys.pool_waiting(variant), code)

    async def unqueue_for_seed(self, variant: str, code: str) -> None:
        """Take a race off the queue for the pool's seeds (it was given one otherwise)."""
        with as_unavailable:
            await self._redis.lrem(keys.pool_waiting(variant), 0, code)

    async def pool_variants(self) -> list[str]:
        """The variants winnable races were asked for, sorted."""
        with as_unavailable:
            members = await self._redis.smembers(keys.POOL_VARIANTS)
        return sorted(text(v) for v in members)

    async def pool_counts(self, variant: str) -> tuple[int, int]:
        """Races waiting for a seed of ``variant``, and seeds ready."""
        with as_unavailable:
            waiting = await self._redis.llen(keys.pool_waiting(variant))
            stocked = await self._redis.llen(keys.pool(variant))
        return int(waiting), int(stocked)

    async def add_seed(self, variant: str, seed: str) -> None:
        """Put a proven seed in the pool."""
        with as_unavailable:
            await self._redis.rpush(keys.pool(variant), seed)

    async def pair_seed(self, variant: str) -> tuple[str, str] | None:
        """Pop the first race waiting for a seed and a seed for it, or None (and nothing
        popped) unless there are both."""
        with as_unavailable:
            code = await self._redis.lpop(keys.pool_waiting(variant))
            if code is None:
                return None
            seed = await self._redis.lpop(keys.pool(variant))
            if seed is None:
                await self._redis.lpush(keys.pool_waiting(variant), code)
                return None
        return text(code), text(seed)

    async def return_seed(self, variant: str, seed: str) -> None:
        """Put back a seed popped for a race that is gone (first in line)."""
        with as_unavailable:
            await self._redis.lpush(keys.pool(variant), seed)

    # -- the daily deals ----------------------------------------------------------------------

    async def daily_seed(self, variant: str, day: str) -> str | None:
        """The day's proven seed, or None when not proven yet."""
        with as_unavailable:
            seed = await self._redis.get(keys.daily(variant, day))
        return _opt_text(seed)

    async def set_daily_seed(self, variant: str, day: str, seed: str) -> str | None:
        """Keep ``seed`` as the day's deal unless a node kept one already; the day's seed."""
        with as_unavailable:
            await self._redis.set(keys.daily(variant, day), seed, nx=True, ex=keys.DAILY_TTL)
        return await self.daily_seed(variant, day)

    async def queue_daily_race(self, variant: str, day: str, code: str) -> None:
        """Queue a preparing daily race for the day's seed, and ask for that seed."""
        waiting = keys.daily(variant, day, "waiting")
        with as_unavailable:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.sadd(waiting, code)
                pipe.expire(waiting, keys.DAILY_TTL)
                pipe.sadd(keys.DAILY_PENDING, f"{variant}|{day}")
                await pipe.execute()

    async def dailies_pending(self) -> list[tuple[str, str]]:
        """The (variant, day) daily deals asked for and not yet served."""
        with as_unavailable:
            items = await self._redis.smembers(keys.DAILY_PENDING)
        out = []
        for item in items:
            variant, _, day = text(item).partition("|")
            out.append((variant, day))
        return out

    async def daily_served(self, variant: str, day: str) -> None:
        """The day's deal of ``variant`` is no longer asked for."""
        with as_unavailable:
            await self._redis.srem(keys.DAILY_PENDING, f"{variant}|{day}")

    async def pop_daily_race(self, variant: str, day: str) -> str | None:
        """A daily race waiting for the day's seed, taken from the queue; None when none."""
        with as_unavailable:
            code = await self._redis.spop(keys.daily(variant, day, "waiting"))
        return _opt_text(code)

    # -- players' daily races and the leaderboards --------------------------------------------

    async def daily_race_of(self, variant: str, day: str, player: str) -> str | None:
        """The code of the player's daily race of that day, if they have one."""
        with as_unavailable:
            code = await self._redis.hget(keys.daily(variant, day, "races"), player)
        return _opt_text(code)

    async def daily_races_of(self, variant: str, day: str, players: list[str]) -> list[str | None]:
        """The codes of these players' daily races of that day (None: none), in order."""
        if not players:
            return []
        with as_unavailable:
            codes = await self._redis.hmget(keys.daily(variant, day, "races"), players)
        return [_opt_text(c) for c in codes]

    async def set_daily_race(self, variant: str, day: str, player: str, code: str) -> bool:
        """Record the player's daily race of the day; False when they have one already."""
        key = keys.daily(variant, day, "races")
        with as_unavailable:
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.hsetnx(key, player, code)
                pipe.expire(key, keys.DAILY_TTL)
                done, _ = await pipe.execute()
        return bool(done)

    async def record_daily(self, race: Race) -> None:
        """Put the winners of a finished daily race on its day's leaderboard (first finish
        only; a ghost never is, nor a guest: the leaderboards are accounts')."""
        o = race.options
        if not o.daily or race.final is None:
            return
        board = keys.leaderboard(o.variant, o.daily)
        names = keys.leaderboard(o.variant, o.daily, "names")
        bots = keys.leaderboard(o.variant, o.daily, "bots")
        with as_unavailable:
            async with self._redis.pipeline(transaction=False) as pipe:
                for r in race.final.results:
                    if r.status == Status.WON and r.time is not None and not (r.ghost or r.guest):
                        pipe.zadd(board, {r.player: leaderboard_score(r.time, r.moves)}, nx=True)
                        pipe.hsetnx(names, r.player, r.name)
                        if r.bot:
                            pipe.sadd(bots, r.player)
                for key in (board, names, bots):
                    pipe.expire(key, keys.DAILY_TTL)
                await pipe.execute()

    async def leaderboard(
        self, variant: str, day: str, limit: int = 100
    ) -> list[tuple[str, str, float, int, bool]]:
        """The day's leaderboard, best first: (player, name, time, moves, bot)."""
        board, names = keys.leaderboard(variant, day), keys.leaderboard(variant, day, "names")
        bots = keys.leaderboard(variant, day, "bots")
        with as_unavailable:
            rows = await self._redis.zrange(board, 0, limit - 1, withscores=True)
            players = [text(p) for p, _ in rows]
            shown: list[object] = []
            marked: list[object] = []
            if players:
                async with self._redis.pipeline(transaction=False) as pipe:
                    pipe.hmget(names, players)
                    for player in players:
                        pipe.sismember(bots, player)
                    shown, *marked = await pipe.execute()
        out = []
        for (_, score), player, name, bot in zip(rows, players, shown, marked, strict=True):
            value = int(score)
            time, moves = value // 1_000_000 / 1000, value % 1_000_000
            out.append((player, text(name or player), time, moves, bool(bot)))  # type: ignore[arg-type]
        return out
