"""The address each player joined a rated race from, for the operators' report.

When a player joins a rated race (creates it, joins it, or confirms a quick match's seat),
the node notes their address key (:func:`~..limits.address_key`: an IPv4 address, or an
IPv6 address's /64) in a small hash of the race, ``{race:<code>}:addr`` (one HSET, off the
move's path; it lives twice the race's ``race_ttl``). The archiver, when it writes the
finished race, copies the hash into ``rated_addresses`` (race, player, address, the
race's finish) and deletes it. Rows older than ``address_keep_days`` are deleted by every
node's background step (:mod:`..runners.admin`). Nothing else about the player is kept.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio import Redis

from ..race import Race
from ..race.record import finished_at as race_finished_at
from . import keys
from .archive import ArchiveStore
from .codec import text
from .guard import as_unavailable

__all__ = ["EXAMPLES", "QUERIES", "addresses_key", "keep", "note", "prune"]

QUERIES: dict[str, str] = {
    "rated_address_insert": (
        "INSERT INTO rated_addresses (race_id, player, address, at) SELECT id, $3, $4, $5 "
        "FROM races WHERE code = $1 AND created_at = $2 ON CONFLICT DO NOTHING"
    ),
    "rated_addresses_prune": "DELETE FROM rated_addresses WHERE at < $1",
}
"""Every query of this module by name (see :data:`.archive.QUERIES`)."""

EXAMPLES: dict[str, tuple[Any, ...]] = {
    "rated_address_insert": ("K7QX2", 1.7e9, "p1", "198.51.100.7", 1.7e9 + 300),
    "rated_addresses_prune": (1.7e9,),
}
"""Parameters each query of :data:`QUERIES` can be run with."""


def addresses_key(code: str) -> str:
    """``{race:<code>}:addr``: player id -> address key, for a rated race's players."""
    return keys.race_key(code, "addr")


async def note(redis: Redis, code: str, player: str, address: str, ttl: int) -> None:
    """Note that ``player`` joined rated race ``code`` from ``address`` (the hash lives
    ``ttl`` seconds more)."""
    if not address:
        return
    name = addresses_key(code)
    with as_unavailable:
        async with redis.pipeline(transaction=False) as pipe:
            pipe.hset(name, player, address)
            pipe.expire(name, ttl)
            await pipe.execute()


async def keep(redis: Redis, archive: ArchiveStore, race: Race) -> int:
    """Copy archived rated ``race``'s addresses into ``rated_addresses`` (once: a second
    copy changes nothing) and drop its hash; how many were noted."""
    name = addresses_key(race.code)
    with as_unavailable:
        found: dict[Any, Any] = await redis.hgetall(name)
    if found:
        at = race_finished_at(race) or race.started_at or race.created_at
        rows = [
            (race.code, race.created_at, text(player), text(address), at)
            for player, address in found.items()
        ]
        async with archive.connection() as conn:
            with archive.timed("rated_address_insert"):
                await conn.executemany(QUERIES["rated_address_insert"], rows)
    with as_unavailable:
        await redis.delete(name)
    return len(found)


async def prune(archive: ArchiveStore, before: float) -> int:
    """Delete the addresses of races finished before ``before``; how many."""
    async with archive.connection() as conn:
        with archive.timed("rated_addresses_prune"):
            status = await conn.execute(QUERIES["rated_addresses_prune"], before)
    return int(status.split()[-1])
