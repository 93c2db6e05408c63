"""Redis as a cache of the archive's ratings: archived records written into Redis (with their
ladder places and name), the markers that say the cache was rebuilt and today's data
archived, the leases that let one node at a time do either, and the scans of what Redis
held before the archive existed (the keys: :mod:`.keys`, "ratings cache").

An archived record is written only where Redis holds none at its version or newer
(:data:`CACHE_RECORDS`): Redis is ahead of the archive for races not archived yet, and a
record read afresh in Redis is the one every later race is decided on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Sequence
from typing import Any

import msgpack
from redis.asyncio import Redis

from ..race.ratings import Line, Record, pool_of
from . import keys
from .codec import text
from .guard import as_unavailable

__all__ = ["CACHE_RECORDS", "RatingsCache", "SCAN_PAGE", "fold"]

SCAN_PAGE = 500
"""Keys asked for at a time when scanning Redis (``SCAN … COUNT``), and records a page."""

CACHE_RECORDS = """
-- Archived records written into the ratings cache where Redis holds none as new.
-- KEYS: names (hash), rebuild names (hash), then each record's key, then the ladders
-- ARGV: ttl, rebuild (1: the name index keeps, per name, the record of the newest archived
--       race; 0: a name is set only where none is), items (msgpack: per record {player,
--       version, data, folded name, race id, {{ladder key index, rating}, ...}})
-- Returns how many records were written (the others were as new in Redis).
local items = cmsgpack.unpack(ARGV[3])
local written = 0
for i, it in ipairs(items) do
  local rec = KEYS[2 + i]
  local v = tonumber(redis.call('HGET', rec, 'v') or '-1')
  if v < it[2] then
    redis.call('HSET', rec, 'v', string.format('%d', it[2]), 'd', it[3])
    redis.call('EXPIRE', rec, ARGV[1])
    for _, l in ipairs(it[6]) do
      redis.call('ZADD', KEYS[l[1]], l[2], it[1])
    end
    local held = redis.call('HGET', KEYS[1], it[4])
    if not held then
      redis.call('HSET', KEYS[1], it[4], it[1])
      if ARGV[2] == '1' then redis.call('HSET', KEYS[2], it[4], it[5]) end
    elseif ARGV[2] == '1' then
      local at = redis.call('HGET', KEYS[2], it[4])
      if at and tonumber(at) < it[5] then
        redis.call('HSET', KEYS[1], it[4], it[1])
        redis.call('HSET', KEYS[2], it[4], it[5])
      end
    end
    written = written + 1
  end
end
return written
"""

_RENEW = """
-- A lease renewed (ARGV[2] ms) or let go (ARGV[2] = 0) by its holder (ARGV[1]) only.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then return redis.call('DEL', KEYS[1]) end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""


def fold(name: str) -> str:
    """A name as the name index keeps it (as :func:`.ratings.fold`)."""
    return name.casefold()


class RatingsCache:
    """The ratings cache's writes from the archive, its markers and leases, and the scans
    of today's data."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._cache: Any = None
        self._renew: Any = None

    async def put(
        self,
        records: Sequence[tuple[Record, int | None]],
        *,
        rebuild: bool,
        ranked: Collection[str] | None = None,
    ) -> int:
        """Write archived ``records`` (each with its archived race's id, None when unknown)
        where Redis holds none as new: the record, its places in the ladders of every
        variant it has a rated race in (only for the players in ``ranked``, accounts':
        a guest's ratings stand on no ladder; None: everyone's), its name. How many were
        written."""
        if not records:
            return 0
        if self._cache is None:
            self._cache = self.redis.register_script(CACHE_RECORDS)
        ladders: dict[str, int] = {}
        record_keys: list[str] = []
        items: list[Any] = []
        first = 3 + len(records)  # the first ladder's index in KEYS (Lua counts from 1)
        for rec, race_id in records:
            places = []
            for variant, vr in sorted(rec.variants.items()):
                if vr.rated > 0 and not vr.provisional and (ranked is None or rec.player in ranked):
                    key = keys.ladder(pool_of(rec.bot), variant)
                    index = ladders.setdefault(key, first + len(ladders))
                    places.append([index, vr.rating])
            record_keys.append(keys.record(rec.player))
            items.append(
                [
                    rec.player,
                    rec.version,
                    msgpack.packb(rec.fields(), use_bin_type=True),
                    fold(rec.name),
                    race_id or 0,
                    places,
                ]
            )
        with as_unavailable:
            written = await self._cache(
                keys=[keys.NAMES, keys.REBUILD_NAMES, *record_keys, *ladders],
                args=[
                    str(keys.PROFILE_TTL),
                    "1" if rebuild else "0",
                    msgpack.packb(items, use_bin_type=False),  # Lua's cmsgpack: no bin
                ],
            )
        return int(written)

    # -- markers and leases -----------------------------------------------------------------

    async def marked(self, key: str) -> bool:
        with as_unavailable:
            return bool(await self.redis.exists(key))

    async def mark(self, key: str, now: float) -> None:
        with as_unavailable:
            await self.redis.set(key, repr(now))

    async def hold(self, key: str, node: str, lease: float) -> bool:
        """Take the lease ``key`` for ``node`` unless another node holds it."""
        with as_unavailable:
            return bool(await self.redis.set(key, node, nx=True, px=int(lease * 1000)))

    async def renew(self, key: str, node: str, lease: float) -> bool:
        """Renew ``node``'s lease (False: it lapsed and is not this node's now)."""
        return await self._lease(key, node, int(lease * 1000))

    async def release(self, key: str, node: str) -> None:
        await self._lease(key, node, 0)

    async def _lease(self, key: str, node: str, ms: int) -> bool:
        if self._renew is None:
            self._renew = self.redis.register_script(_RENEW)
        with as_unavailable:
            return bool(await self._renew(keys=[key], args=[node, str(ms)]))

    async def forget_rebuild_names(self) -> None:
        with as_unavailable:
            await self.redis.delete(keys.REBUILD_NAMES)

    # -- the ladders: accounts only ------------------------------------------------------------

    async def ladder_members(self) -> AsyncIterator[tuple[str, list[str]]]:
        """Every ladder's players, (ladder key, a page of players) at a time (each ladder
        read whole first, so that players taken off meanwhile move no page)."""
        async for page in self._scan(keys.ladder("*", "*")):
            for key in page:
                members: list[str] = []
                while True:
                    start = len(members)
                    with as_unavailable:
                        found: list[Any] = await self.redis.zrange(
                            key, start, start + SCAN_PAGE - 1
                        )
                    members += [text(p) for p in found]
                    if len(found) < SCAN_PAGE:
                        break
                for at in range(0, len(members), SCAN_PAGE):
                    yield key, members[at : at + SCAN_PAGE]

    async def drop_from_ladder(self, key: str, players: Collection[str]) -> None:
        if players:
            with as_unavailable:
                await self.redis.zrem(key, *players)

    # -- today's data: what Redis held before the archive -----------------------------------

    async def _scan(self, match: str) -> AsyncIterator[list[str]]:
        """The keys matching ``match``, a page at a time (SCAN, never KEYS)."""
        page: list[str] = []
        with as_unavailable:
            async for key in self.redis.scan_iter(match=match, count=SCAN_PAGE):
                page.append(text(key))
                if len(page) >= SCAN_PAGE:
                    yield page
                    page = []
        if page:
            yield page

    async def finished_races(self) -> AsyncIterator[list[str]]:
        """Codes of the finished races in Redis (their meta has ``final``), a page at a
        time."""
        async for page in self._scan("{race:*}:meta"):
            with as_unavailable:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key in page:
                        pipe.hexists(key, "final")
                    finals = await pipe.execute()
            yield [_code(key) for key, final in zip(page, finals, strict=True) if final]

    async def records(self) -> AsyncIterator[list[Record]]:
        """The players' records in Redis, a page at a time."""
        prefix = keys.record("")
        async for page in self._scan(prefix + "*"):
            with as_unavailable:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key in page:
                        pipe.hmget(key, "v", "d")
                    replies = await pipe.execute()
            out = []
            for key, (version, data) in zip(page, replies, strict=True):
                if version is not None and data is not None:
                    fields = msgpack.unpackb(data, raw=False)
                    out.append(Record.from_fields(key[len(prefix) :], int(version), fields))
            yield out

    async def histories(self) -> AsyncIterator[list[tuple[str, Line]]]:
        """Every (player, line) of the players' histories in Redis, a page of players at a
        time."""
        prefix = keys.history("")
        async for page in self._scan(prefix + "*"):
            with as_unavailable:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key in page:
                        pipe.lrange(key, 0, keys.HISTORY_MAX - 1)
                    replies = await pipe.execute()
            yield [
                (key[len(prefix) :], Line(**msgpack.unpackb(item, raw=False)))
                for key, items in zip(page, replies, strict=True)
                for item in items
            ]

    async def races_present(self, codes: Sequence[str]) -> set[str]:
        """Which of ``codes`` name a race Redis holds."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for code in codes:
                    pipe.exists(keys.meta(code))
                found = await pipe.execute()
        return {code for code, n in zip(codes, found, strict=True) if n}


def _code(meta_key: str) -> str:
    """``{race:<code>}:meta`` -> ``<code>``."""
    return meta_key[len("{race:") : meta_key.index("}")]
