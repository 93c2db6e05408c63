"""A finished deal's par in Redis: who computes it (a claim with a TTL), the daily deal's
par, kept once per variant and day, and the lines that proved deals winnable (a race dealt
one of them gets it as its provisional par at the finish).

The race's own par is a field of its meta hash, written by a race commit
(:meth:`~.commits.CommitLink.commit` of :func:`~..race.par_change`) like every other field
of the race: a check-and-set on the race's version, so that it lands once. The claims say
which node is computing a par; a claim lapses ``ttl`` seconds after its last renewal, so
that when its node dies another node (the next to show the race's end) starts again.
"""

from __future__ import annotations

import msgpack
from redis.asyncio import Redis

from spider_client.protocol import ParInfo

from ..settings import Settings
from . import keys
from .codec import par_bytes, par_from
from .guard import as_unavailable

__all__ = ["ParStore"]


class ParStore:
    """The par's claims and the daily deal's par. Every method raises
    :class:`~..errors.Unavailable` when Redis does not answer."""

    def __init__(self, redis: Redis, settings: Settings) -> None:
        self.redis = redis
        self.settings = settings

    async def claim_par(self, key: str, ttl: float) -> bool:
        """Claim the computing of a par for this node (``key``: :func:`~.keys.par_claim`
        of the race, or the day's ``daily:<variant>:<day>:par_claim``), for ``ttl`` seconds; False when another claim is
        live."""
        with as_unavailable:
            ok = await self.redis.set(key, self.settings.node, nx=True, px=int(ttl * 1000))
        return bool(ok)

    async def par_claim_left(self, key: str) -> float:
        """Seconds the claim ``key`` lives unless renewed (0 when there is none)."""
        with as_unavailable:
            ms = await self.redis.pttl(key)
        return max(0.0, ms / 1000)

    async def renew_par_claim(self, key: str, ttl: float) -> None:
        """Keep this node's claim alive ``ttl`` seconds more (a claim lost meanwhile stays
        lost: the other node's stands)."""
        with as_unavailable:
            if await self.redis.get(key) == self.settings.node.encode():
                await self.redis.pexpire(key, int(ttl * 1000))

    async def drop_par_claim(self, key: str) -> None:
        """Drop this node's claim (the par landed, or the job failed and may start again)."""
        with as_unavailable:
            if await self.redis.get(key) == self.settings.node.encode():
                await self.redis.delete(key)

    async def daily_par(self, variant: str, day: str) -> ParInfo | None:
        """The daily deal's par of ``variant`` on ``day`` (None until computed)."""
        with as_unavailable:
            data = await self.redis.get(keys.daily(variant, day, "par"))
        return None if data is None else par_from(data)

    async def set_daily_par(self, variant: str, day: str, par: ParInfo) -> ParInfo:
        """Keep ``par`` as the day's par unless one is kept already; the day's par."""
        with as_unavailable:
            await self.redis.set(
                keys.daily(variant, day, "par"), par_bytes(par), nx=True, ex=keys.DAILY_TTL
            )
        return await self.daily_par(variant, day) or par

    async def keep_proof(self, variant: str, seed: str, line: list[str]) -> None:
        """Keep the winning ``line`` that proved the deal of ``variant`` and ``seed``."""
        with as_unavailable:
            await self.redis.set(keys.proof(variant, seed), msgpack.packb(line), ex=keys.PROOF_TTL)

    async def proof(self, variant: str, seed: str) -> list[str] | None:
        """The line that proved the deal winnable (None: none kept)."""
        with as_unavailable:
            data = await self.redis.get(keys.proof(variant, seed))
        if data is None:
            return None
        line = msgpack.unpackb(data, raw=False)
        return [str(m) for m in line] if isinstance(line, list) else None
