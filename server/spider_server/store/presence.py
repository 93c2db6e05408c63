"""The claims that say who watches a race: players and spectators connected to it
(``online``, ``spectators``) and the nodes that follow it (``nodes``), each a sorted set of
members by expiry. Every method raises :class:`~..errors.Unavailable` when Redis does not
answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from ..race import Race
from ..settings import Settings
from . import keys
from .codec import race_from, text
from .guard import as_unavailable

__all__ = ["PRESENCE_CHUNK", "PresenceStore"]

PRESENCE_CHUNK = 32
"""Races whose presence one pipeline renews."""


class PresenceStore:
    """Who watches which race, by claims that expire unless renewed."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings

    async def touch_presence(self, items: list[tuple[str, str, bool]], now: float) -> None:
        """Claim, until ``now + presence_ttl``, that members watch races: (code, member,
        is_spectator) each."""
        expiry = now + self.settings.presence_ttl
        members: dict[str, dict[str, float]] = {}
        for code, member, spectator in items:
            key = keys.spectators(code) if spectator else keys.online(code)
            members.setdefault(key, {})[member] = expiry
        await self._claim(members, now)

    async def claim_watch(self, codes: Sequence[str], now: float) -> None:
        """Claim, until ``now + presence_ttl``, that this node watches these races: their
        events are then published for it."""
        expiry = now + self.settings.presence_ttl
        await self._claim({keys.nodes(code): {self.settings.node: expiry} for code in codes}, now)

    async def _claim(self, claims: dict[str, dict[str, float]], now: float) -> None:
        """Add each key's claims (member -> expiry) to its sorted set, dropping the claims
        that expired by ``now`` (of nodes that died). One ZADD a key, in pipelines of a few
        dozen keys: a node with thousands of connections never holds the event loop for
        long building or reading one."""
        todo = list(claims.items())
        with as_unavailable:
            for start in range(0, len(todo), PRESENCE_CHUNK):
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key, members in todo[start : start + PRESENCE_CHUNK]:
                        pipe.zremrangebyscore(key, "-inf", now)
                        pipe.zadd(key, members)
                        pipe.expire(key, self.settings.race_ttl)
                    await pipe.execute()

    async def drop_watch(self, code: str) -> None:
        """This node no longer watches the race."""
        with as_unavailable:
            await self.redis.zrem(keys.nodes(code), self.settings.node)

    async def drop_presence(self, code: str, member: str, spectator: bool) -> None:
        key = keys.spectators(code) if spectator else keys.online(code)
        with as_unavailable:
            await self.redis.zrem(key, member)

    async def presence(self, code: str, now: float) -> tuple[set[str], int]:
        """Players connected to a race now, and how many spectators watch it."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrangebyscore(keys.online(code), now, "+inf")
                pipe.zcount(keys.spectators(code), now, "+inf")
                online, spectators = await pipe.execute()
        return {text(m).split("|", 1)[0] for m in online}, int(spectators)

    async def races_present(
        self, codes: Sequence[str], now: float
    ) -> list[tuple[Race | None, set[str]]]:
        """Each race now (None: gone) with its players that have a live claim, in
        pipelines of :data:`PRESENCE_CHUNK` races (the presence sweep). The meta hash is
        read first: a decision on a race that changed after it loses its check-and-set."""
        out: list[tuple[Race | None, set[str]]] = []
        with as_unavailable:
            for start in range(0, len(codes), PRESENCE_CHUNK):
                chunk = codes[start : start + PRESENCE_CHUNK]
                async with self.redis.pipeline(transaction=False) as pipe:
                    for code in chunk:
                        pipe.hgetall(keys.meta(code))
                        pipe.hgetall(keys.players(code))
                        pipe.zrangebyscore(keys.online(code), now, "+inf")
                    replies = await pipe.execute()
                for i in range(len(chunk)):
                    meta, players, online = replies[3 * i : 3 * i + 3]
                    race = race_from(meta, players) if meta and b"state" in meta else None
                    out.append((race, {text(m).split("|", 1)[0] for m in online}))
        return out

    async def last_claims(self, code: str, player: str, now: float) -> list[float]:
        """When each live claim of the player on the race expires (one per connection)."""
        with as_unavailable:
            claims: list[Any] = await self.redis.zrangebyscore(
                keys.online(code), now, "+inf", withscores=True
            )
        out: list[float] = []
        for member, score in claims:
            if text(member).split("|", 1)[0] == player:
                out.append(float(score))
        return out
