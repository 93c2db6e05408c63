"""The finished races waiting for the database: ``{archive}:pending`` in Redis.

A race is marked (:meth:`ArchiveQueue.mark`) before its finish is committed, like its
results (:mod:`.ratings`): a node that dies between the finish and the archive leaves the
marker, which any node's archive step takes up. :meth:`ArchiveQueue.take` hands each due
marker to one node for a lease (its time is pushed on), so two nodes seldom write the same
race (and when they do, the database's unique key keeps one).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from ..race import Race
from . import keys
from .codec import text
from .commits import race_keys
from .guard import as_unavailable
from .scripts import DUE_CONFIRMS

__all__ = ["ArchiveQueue", "archive_marker", "parse_marker"]


def archive_marker(race: Race) -> str:
    """The race's marker in the queue: its code and creation time (a code is reused only
    after its race is gone)."""
    return f"{race.code}:{race.created_at!r}"


def parse_marker(marker: str) -> tuple[str, float]:
    code, _, created = marker.partition(":")
    return code, float(created)


class ArchiveQueue:
    """The queue of finished races to archive, and their keys' lives once archived."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._take: Any = None

    async def mark(self, race: Race, now: float) -> None:
        """Queue ``race``, due ``now`` (one round trip: the queue and its waiting times
        share a slot)."""
        marker = archive_marker(race)
        with as_unavailable:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.zadd(keys.ARCHIVE, {marker: now}, nx=True)
                pipe.zadd(keys.ARCHIVE_SINCE, {marker: now}, nx=True)
                await pipe.execute()

    async def take(self, now: float, lease: float, limit: int = 32) -> list[str]:
        """Markers due at ``now``, each held by this node for ``lease`` seconds."""
        if self._take is None:
            self._take = self.redis.register_script(DUE_CONFIRMS)
        with as_unavailable:
            found = await self._take(keys=[keys.ARCHIVE], args=[repr(now), repr(lease), str(limit)])
        return [text(m) for m in found]

    async def later(self, markers: Sequence[str], at: float) -> None:
        """Markers taken and not archived: due again at ``at``."""
        if markers:
            with as_unavailable:
                await self.redis.zadd(keys.ARCHIVE, dict.fromkeys(markers, at), xx=True)

    async def done(self, marker: str) -> None:
        with as_unavailable:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.zrem(keys.ARCHIVE, marker)
                pipe.zrem(keys.ARCHIVE_SINCE, marker)
                await pipe.execute()

    async def backlog(self) -> int:
        """Finished races not archived yet."""
        with as_unavailable:
            return int(await self.redis.zcard(keys.ARCHIVE))

    async def oldest(self) -> float | None:
        """When the oldest waiting race was queued (None: none waits)."""
        with as_unavailable:
            found = await self.redis.zrange(keys.ARCHIVE_SINCE, 0, 0, withscores=True)
        return float(found[0][1]) if found else None

    async def archived(self, marker: str, race: Race, ttl: int) -> None:
        """Archived ``race``: its marker dropped and its keys given ``ttl`` seconds more (0:
        dropped now), in one round trip."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrem(keys.ARCHIVE, marker)
                pipe.zrem(keys.ARCHIVE_SINCE, marker)
                _expire(pipe, race, ttl)
                await pipe.execute()

    async def expire_race(self, race: Race, ttl: int) -> None:
        """Give every key of archived ``race`` ``ttl`` seconds more (0: drop them now)."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                _expire(pipe, race, ttl)
                await pipe.execute()


def _expire(pipe: Any, race: Race, ttl: int) -> None:
    for name in race_keys(race):
        if ttl > 0:
            pipe.expire(name, ttl, lt=True)
        else:
            pipe.delete(name)
