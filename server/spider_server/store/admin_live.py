"""The operators' actions in Redis: a void's rating changes undone in the players' live
records, a closed account taken off the ladders.

A void moves each player's ``mu`` and ``sigma`` in the race's variant back by the race's
change (and counts one rated race less), with a check-and-set on the record's version
(:data:`UNDO_CHANGE`, one more version, as a race's settlement writes it), and puts the
rating shown on the player's ladder where they stand on it (ZADD XX: a player off the
ladders stays off), or takes them off it when no rated race is left or the rating is
provisional again. Each (action, player) is done once: ``{ratings}:voided`` (a hash,
``<action id>:<player>`` -> 1) holds those done, and the script checks it in the same
step, so every node may try at once.
"""

from __future__ import annotations

from typing import Any

import msgpack
from redis.asyncio import Redis

from ..errors import Conflict
from ..race.ratings import Record, pool_of
from . import keys
from .admin import VoidChange
from .guard import as_unavailable, check_and_set
from .ratings import RatingStore

__all__ = ["UNDO_CHANGE", "VOIDED", "drop_from_ladders", "undo_change"]

VOIDED = "{ratings}:voided"
"""hash: ``<action id>:<player>`` -> 1, each rating change a void undid (once)."""

UNDO_CHANGE = """
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
local v = redis.call('HGET', KEYS[1], 'v')
if v ~= ARGV[2] then return -1 end
redis.call('HSET', KEYS[1], 'v', tostring(tonumber(v) + 1), 'd', ARGV[3])
redis.call('HSET', KEYS[2], ARGV[1], '1')
if ARGV[4] == '' then
  redis.call('ZREM', KEYS[3], ARGV[5])
else
  redis.call('ZADD', KEYS[3], 'XX', ARGV[4], ARGV[5])
end
return 1
"""
"""KEYS: the record, :data:`VOIDED`, the ladder; ARGV: the done field, the version read,
the record's new fields (msgpack), the rating shown ('' when no rated race is left or the
rating is provisional: off the ladder), the player. 0: done before; -1: the record moved on; 1: written."""

MIN_SIGMA = 0.001


def _pack(value: Any) -> bytes:
    out: bytes = msgpack.packb(value, use_bin_type=True)
    return out


async def undo_change(
    redis: Redis, ratings: RatingStore, action: int, change: VoidChange
) -> Record | None:
    """Undo one player's rating change of a voided race in their live record, once; the
    record as written (None: done before, or the player has no record of that variant)."""
    script = redis.register_script(UNDO_CHANGE)
    field = f"{action}:{change.player}"

    async def load() -> tuple[bool, Record | None]:
        with as_unavailable:
            seen = await redis.hexists(VOIDED, field)
        if seen:
            return True, None
        return False, (await ratings.load_records([change.player])).get(change.player)

    def decide(loaded: tuple[bool, Record | None]) -> Record | None:
        seen, record = loaded
        if seen or record is None or change.variant not in record.variants:
            return None
        vr = record.variants[change.variant]
        vr.mu -= change.mu
        vr.sigma = max(MIN_SIGMA, vr.sigma - change.sigma)
        vr.rated = max(0, vr.rated - 1)
        return record

    async def commit(record: Record) -> Record | None:
        vr = record.variants[change.variant]
        ladder = keys.ladder(pool_of(record.bot), change.variant)
        rating = str(vr.rating) if vr.rated and not vr.provisional else ""
        with as_unavailable:
            reply = await script(
                keys=[keys.record(change.player), VOIDED, ladder],
                args=[field, str(record.version), _pack(record.fields()), rating, change.player],
            )
        if int(reply) == -1:
            raise Conflict(f"{change.player}'s record moved on")
        if int(reply) == 0:  # another node undid it meanwhile
            return None
        record.version += 1
        return record

    attempt = await check_and_set(load, decide, commit, busy="a player's record is too busy")
    return attempt.committed


async def drop_from_ladders(redis: Redis, ratings: RatingStore, player: str) -> int:
    """Take ``player`` off every ladder they stand on (their record's variants); how many
    ladders were looked at. Doing it again changes nothing."""
    record = (await ratings.load_records([player])).get(player)
    if record is None:
        return 0
    names = [keys.ladder(pool_of(record.bot), variant) for variant in record.variants]
    with as_unavailable:
        async with redis.pipeline(transaction=False) as pipe:
            for name in names:
                pipe.zrem(name, player)
            await pipe.execute()
    return len(names)
