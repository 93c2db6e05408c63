"""Each player's list of races (``player_races:<player>``), newest first. Every method
raises :class:`~..errors.Unavailable` when Redis does not answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from redis.asyncio import Redis

from . import keys
from .codec import entry_from, text
from .guard import as_unavailable

__all__ = ["PlayerRace", "PlayerStore"]


class PlayerRace(NamedTuple):
    """A race of a player's list as it is now."""

    code: str
    state: str | None
    """The race's state; None when the race is gone."""
    variant: str
    preparing: bool
    players: int
    status: str | None
    """The player's status in it; None when they are no longer in it."""


class PlayerStore:
    """The players' lists of races."""

    def __init__(self, redis: Redis, clock: Callable[[], float]) -> None:
        self.redis = redis
        self.clock = clock
        """The deployment's time (a race's place in a list)."""

    async def player_races(self, player: str) -> list[PlayerRace]:
        """The races of the player's list (newest first), each as it is now: one round trip
        for the list, one pipeline for the races."""
        with as_unavailable:
            found = await self.redis.zrange(keys.player_races(player), 0, -1, desc=True)
            codes = [text(c) for c in found if isinstance(c, (bytes, str))]
            if not codes:
                return []
            async with self.redis.pipeline(transaction=False) as pipe:
                for code in codes:
                    pipe.hmget(keys.meta(code), "state", "variant", "preparing")
                    pipe.hget(keys.players(code), player)
                    pipe.hlen(keys.players(code))
                replies = await pipe.execute()
        out = []
        for i, code in enumerate(codes):
            (state, variant, preparing), entry, count = replies[3 * i : 3 * i + 3]
            out.append(
                PlayerRace(
                    code=code,
                    state=text(state) or None,
                    variant=text(variant),
                    preparing=preparing == b"1",
                    players=int(count),
                    status=entry_from(entry).status if entry else None,
                )
            )
        return out

    async def add_player_race(self, player: str, code: str) -> None:
        """Put race ``code`` in the player's list, at the server's clock (as the lobby's
        :meth:`race_since` reads it)."""
        key = keys.player_races(player)
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(key, {code: self.clock()})
                pipe.expire(key, keys.PLAYER_RACES_TTL)
                await pipe.execute()

    async def drop_player_races(self, player: str, codes: list[str]) -> None:
        if not codes:
            return
        with as_unavailable:
            await self.redis.zrem(keys.player_races(player), *codes)
