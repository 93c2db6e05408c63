"""The archive's side of the ratings cache and of today's data (the queries; the steps are
:mod:`..runners.rebuild`'s).

The ratings cache in Redis (each player's record, the ladders, the name index) is derived
from ``player_records``: :func:`records_page` reads it a page at a time, in the order of its
primary key (keyset paging: each page starts after the last player of the one before).

Today's data, from before the archive existed, comes the other way: :func:`import_records`
writes players' records read from Redis (with the version Redis gave them; an archived
record at that version or newer is kept), and :func:`keep_lines` keeps the history lines
whose race was gone from Redis before it could be archived (``history_lines``: the line as
the player's history showed it; no replay is left of such a race).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import msgpack

from ..race.ratings import Line, Record
from .archive import ArchiveStore

__all__ = [
    "EXAMPLES",
    "QUERIES",
    "archived_codes",
    "import_records",
    "keep_lines",
    "records_page",
]

QUERIES: dict[str, str] = {
    "records_page": (
        "SELECT player, version, data, race_id FROM player_records WHERE player > $1 "
        "ORDER BY player LIMIT $2"
    ),
    "import_records": (
        "INSERT INTO player_records (player, version, name, data, race_id) VALUES ($1, "
        "$2, $3, $4, NULL) ON CONFLICT (player) DO UPDATE SET version = excluded.version, "
        "name = excluded.name, data = excluded.data, race_id = NULL WHERE "
        "player_records.version < excluded.version"
    ),
    "archived_codes": "SELECT DISTINCT code FROM races WHERE code = ANY($1)",
    "keep_lines": (
        "INSERT INTO history_lines (player, code, at, line) VALUES ($1, $2, $3, $4) "
        "ON CONFLICT DO NOTHING"
    ),
}
"""Every query of this module by name (see :data:`.archive.QUERIES`)."""

EXAMPLES: dict[str, tuple[Any, ...]] = {
    "records_page": ("", 500),
    "import_records": ("p1", 3, "Ada", b"\x80"),
    "archived_codes": (["K7QX2", "AB2CD"],),
    "keep_lines": ("p1", "K7QX2", 1.7e9, b"\x80"),
}
"""Parameters each query of :data:`QUERIES` can be run with (the index check runs
``EXPLAIN`` on each)."""


def _pack(value: Any) -> bytes:
    out: bytes = msgpack.packb(value, use_bin_type=True)
    return out


async def records_page(
    archive: ArchiveStore, after: str, limit: int
) -> list[tuple[Record, int | None]]:
    """Up to ``limit`` archived records of the players after ``after`` (by id), each with
    the id of the race archived with it (None: a record taken from Redis, see
    :func:`import_records`)."""
    async with archive.connection() as conn:
        rows = await conn.fetch(QUERIES["records_page"], after, limit)
    return [
        (
            Record.from_fields(
                row["player"], row["version"], msgpack.unpackb(row["data"], raw=False)
            ),
            row["race_id"],
        )
        for row in rows
    ]


async def import_records(archive: ArchiveStore, records: Sequence[Record]) -> None:
    """Write players' records as Redis holds them (an archived record at the same version
    or newer is kept: writing again changes nothing)."""
    if not records:
        return
    async with archive.connection() as conn:
        await conn.executemany(
            QUERIES["import_records"],
            [(r.player, r.version, r.name, _pack(r.fields())) for r in records],
        )


async def archived_codes(archive: ArchiveStore, codes: Sequence[str]) -> set[str]:
    """Which of ``codes`` name an archived race."""
    if not codes:
        return set()
    async with archive.connection() as conn:
        rows = await conn.fetch(QUERIES["archived_codes"], list(codes))
    return {row["code"] for row in rows}


async def keep_lines(archive: ArchiveStore, lines: Sequence[tuple[str, Line]]) -> None:
    """Keep (player, history line) pairs of races gone from Redis unarchived (once: a
    line kept already is left as it is)."""
    if not lines:
        return
    async with archive.connection() as conn:
        await conn.executemany(
            QUERIES["keep_lines"],
            [(player, line.code, line.at, _pack(asdict(line))) for player, line in lines],
        )
