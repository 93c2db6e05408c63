"""What a deleted account leaves: its results stay, under :data:`DELETED_NAME`.

A deletion first asks :meth:`Erasure.live_races` (Redis): a race of the player still
waiting, running, or finished but not archived yet would write the name again, so the
deletion is refused until none is. Then, in one transaction of the database
(:meth:`Erasure.erase_archive`): the account's row goes (its sessions and API tokens with
it: ``ON DELETE CASCADE``; its player id is kept in ``deleted_players``, so that a guest's
token of that player, one the account had taken over, speaks for nobody), and every archived race the player finished shows them as
:data:`DELETED_NAME` (``race_players.name``, the race's ``meta`` and ``entries`` blobs,
the player's ``player_records`` row). Then Redis (:meth:`Erasure.erase_live`): the
player's record there renamed, the name index no longer naming them, the daily
leaderboards' names, and the keys of the player's archived races still kept in Redis
dropped at once (reads go to the archive), and the rating changes kept of its races
renamed.

Others' races, replays, exports and ratings hold: nothing but the name is rewritten.
"""

from __future__ import annotations

import datetime
from typing import Any

import msgpack

from . import keys
from .archive import ArchiveStore, race_blobs, race_of_blobs
from .archive_queue import archive_marker
from .commits import race_keys
from .guard import as_unavailable
from .races import RaceStore
from .ratings import fold

__all__ = ["DELETED_NAME", "EXAMPLES", "QUERIES", "Erasure", "player_deleted"]

DELETED_NAME = "deleted player"
"""How a deleted account's player is shown in the results it leaves."""
DAILY_DAYS = 4
"""Days of daily leaderboards looked at (they live ``DAILY_TTL``, three days)."""

QUERIES: dict[str, str] = {
    "erase_account": "DELETE FROM accounts WHERE id = $1 RETURNING id",
    "erase_tombstone": (
        "INSERT INTO deleted_players (player, deleted_at) VALUES ($1, $2) ON CONFLICT DO NOTHING"
    ),
    "player_deleted": "SELECT 1 FROM deleted_players WHERE player = $1",
    "erase_names": "UPDATE race_players SET name = $2 WHERE player = $1 RETURNING race_id",
    "erase_races": (
        "SELECT id, code, created_at, meta, entries FROM races WHERE id = ANY($1::bigint[]) "
        "FOR UPDATE"
    ),
    "erase_race": "UPDATE races SET meta = $2, entries = $3 WHERE id = $1",
    "erase_record": "SELECT data FROM player_records WHERE player = $1 FOR UPDATE",
    "erase_record_write": "UPDATE player_records SET name = $2, data = $3 WHERE player = $1",
}
"""Every query of this module by name (timed by it; EXPLAINed by the index check)."""

EXAMPLES: dict[str, tuple[Any, ...]] = {
    "erase_account": (1,),
    "erase_tombstone": ("p0123456789ab", 1.7e9),
    "player_deleted": ("p0123456789ab",),
    "erase_names": ("p0123456789ab", DELETED_NAME),
    "erase_races": ([1, 2, 3],),
    "erase_race": (1, b"\x80", b"\x80"),
    "erase_record": ("p0123456789ab",),
    "erase_record_write": ("p0123456789ab", DELETED_NAME, b"\x80"),
}
"""Parameters each query of :data:`QUERIES` can be run with."""


def _pack(value: Any) -> bytes:
    out: bytes = msgpack.packb(value, use_bin_type=True)
    return out


def renamed_blobs(meta: bytes, entries: bytes, player: str) -> tuple[bytes, bytes]:
    """An archived race's blobs with ``player`` shown as :data:`DELETED_NAME` (their entry
    and their result); the rest as it was."""
    race = race_of_blobs(meta, entries)
    entry = race.players.get(player)
    if entry is not None:
        entry.name = DELETED_NAME
    if race.final is not None:
        for result in race.final.results:
            if result.player == player:
                result.name = DELETED_NAME
    return race_blobs(race)


async def player_deleted(archive: ArchiveStore, player: str) -> bool:
    """Whether ``player`` was a deleted account's (its guest's tokens speak for nobody)."""
    async with archive.connection() as conn:
        with archive.timed("player_deleted"):
            return await conn.fetchval(QUERIES["player_deleted"], player) is not None


class Erasure:
    """A deleted account's player, erased from the archive and Redis (see the module)."""

    def __init__(self, redis: Any, archive: ArchiveStore, races: RaceStore) -> None:
        self.redis = redis
        self.archive = archive
        self.races = races

    async def _codes(self, player: str) -> list[str]:
        """The races the player is listed in (their races, their history)."""
        with as_unavailable:
            listed = await self.redis.zrange(keys.player_races(player), 0, -1)
            lines = await self.redis.lrange(keys.history(player), 0, -1)
        codes = [_text(c) for c in listed]
        codes += [msgpack.unpackb(line, raw=False).get("code", "") for line in lines]
        return [c for c in dict.fromkeys(codes) if c]

    async def live_races(self, player: str) -> tuple[list[str], list[Any]]:
        """(the codes of the player's races in Redis that are not archived yet — waiting,
        running, or finished with their record not written —, the archived races still
        kept in Redis)."""
        live: list[str] = []
        kept: list[Any] = []
        for code in await self._codes(player):
            race = await self.races.load_race(code)
            if race is None or player not in race.players:
                continue
            with as_unavailable:
                pending = await self.redis.zscore(keys.ARCHIVE, archive_marker(race))
            if race.final is None or pending is not None:
                live.append(code)
            else:
                kept.append(race)
        return live, kept

    async def erase_archive(self, account: int, player: str, now: float) -> list[str] | None:
        """Delete the account's row (sessions and tokens with it) and show its player as
        :data:`DELETED_NAME` in every archived race and their record, in one
        transaction; the races' markers (``code:created_at``), or None when there was no
        such account (nothing changed)."""
        archive = self.archive
        markers: list[str] = []
        async with archive.connection() as conn, conn.transaction():
            with archive.timed("erase_account"):
                gone = await conn.fetchval(QUERIES["erase_account"], account)
            if gone is None:
                return None
            with archive.timed("erase_tombstone"):
                await conn.execute(QUERIES["erase_tombstone"], player, now)
            with archive.timed("erase_names"):
                ids = [
                    r["race_id"]
                    for r in await conn.fetch(QUERIES["erase_names"], player, DELETED_NAME)
                ]
            if ids:
                with archive.timed("erase_races"):
                    found = await conn.fetch(QUERIES["erase_races"], ids)
                rewritten = [
                    (r["id"], *renamed_blobs(bytes(r["meta"]), bytes(r["entries"]), player))
                    for r in found
                ]
                with archive.timed("erase_race"):
                    await conn.executemany(QUERIES["erase_race"], rewritten)
                markers = [f"{r['code']}:{float(r['created_at'])!r}" for r in found]
            with archive.timed("erase_record"):
                data = await conn.fetchval(QUERIES["erase_record"], player)
            if data is not None:
                record = msgpack.unpackb(data, raw=False)
                record["name"] = DELETED_NAME
                with archive.timed("erase_record_write"):
                    await conn.execute(
                        QUERIES["erase_record_write"], player, DELETED_NAME, _pack(record)
                    )
        return markers

    async def erase_live(
        self, player: str, name: str, kept: list[Any], markers: list[str], now: float
    ) -> None:
        """Redis's part: the player's record renamed, the name index and the daily
        leaderboards no longer naming them, the rating changes kept of the races of
        ``markers`` (and ``kept``) renamed, the archived races ``kept`` dropped from Redis
        (read from the archive from now on)."""
        markers = list(dict.fromkeys([*markers, *(archive_marker(r) for r in kept)]))
        with as_unavailable:
            for mark in markers:
                data = await self.redis.hget(keys.APPLIED, mark)
                if data is None:
                    continue
                changes = msgpack.unpackb(data, raw=False)
                for change in changes:
                    if change.get("player") == player:
                        change["name"] = DELETED_NAME
                await self.redis.hset(keys.APPLIED, mark, _pack(changes))
            data = await self.redis.hget(keys.record(player), "d")
            variants: list[str] = []
            if data is not None:
                record = msgpack.unpackb(data, raw=False)
                record["name"] = DELETED_NAME
                variants = list(record.get("variants", {}))
                await self.redis.hset(keys.record(player), "d", _pack(record))
            held = await self.redis.hget(keys.NAMES, fold(name))
            if held is not None and _text(held) == player:
                await self.redis.hdel(keys.NAMES, fold(name))
            today = datetime.datetime.fromtimestamp(now, datetime.UTC).date()
            days = [str(today - datetime.timedelta(days=i)) for i in range(DAILY_DAYS)]
            for variant in variants:
                for day in days:
                    names = keys.leaderboard(variant, day, "names")
                    if await self.redis.hexists(names, player):
                        await self.redis.hset(names, player, DELETED_NAME)
            for race in kept:
                await self.redis.delete(*race_keys(race))


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
