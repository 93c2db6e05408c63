"""Finished races read once Redis dropped them, and the later changes of an archived race.

A finished race lives in Redis until ``archived_ttl`` after its record is written
(:mod:`..runners.archiver`); from then on it is read from its archived row. Every read of a
finished race goes through :class:`FinishedRaces`: Redis first (a race of that code there,
finished or not, is the one the code names now: a code is reused only once its race left
Redis, so a newer race of the same code wins over an archived older one), then the newest
archived race of the code (:meth:`~.archive.ArchiveStore.race`). The race read from the
archive is the :class:`~..race.Race` that Redis held (its results, replays with their
times, final boards, seed and salt, par): what may be shown of it is decided by the same
rules as for a race in Redis (:func:`~..race.revealed`: a daily race's seed and moves stay
hidden until its UTC day is over).

A finished race still changes after its archive: its par lands (:mod:`..runners.par`).
:meth:`ArchivedRaces.change` decides and writes such a change on the archived row itself,
under the row's lock (a check-and-set like Redis's, on the race's version), and
:meth:`ArchivedRaces.keep_newer` writes a change committed in Redis meanwhile to the row.

Every SQL string is in :data:`QUERIES` by name (the metrics time them by name; a test runs
``EXPLAIN`` on each with the arguments of :data:`EXAMPLES`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..race import Race, RaceChange
from .archive import ArchiveStore, race_blobs, race_of_blobs
from .players import PlayerRace
from .races import RaceStore

__all__ = ["EXAMPLES", "QUERIES", "ArchivedRaces", "FinishedRaces"]


QUERIES: dict[str, str] = {
    "finished_race_row": (
        "SELECT id, meta, entries FROM races WHERE code = $1 AND created_at = $2 FOR UPDATE"
    ),
    "finished_set_race": "UPDATE races SET meta = $3, entries = $4 WHERE code = $1 AND created_at = $2",
    "finished_player_races": (
        "SELECT DISTINCT ON (r.code) r.code, r.variant, r.players, p.status FROM "
        "race_players p JOIN races r ON r.id = p.race_id WHERE p.player = $1 AND r.code = "
        "ANY($2::text[]) ORDER BY r.code, p.race_id DESC"
    ),
}
"""Every query of this module by name."""

EXAMPLES: dict[str, tuple[Any, ...]] = {
    "finished_race_row": ("K7QX2", 1.0),
    "finished_set_race": ("K7QX2", 1.0, b"", b""),
    "finished_player_races": ("p0123456789", ["K7QX2", "B4RN5"]),
}
"""Arguments each query of :data:`QUERIES` can be run (or explained) with."""


class ArchivedRaces:
    """Finished races in the archive, read and changed. Every method raises
    :class:`~..errors.Unavailable` when the database does not answer."""

    def __init__(self, archive: ArchiveStore) -> None:
        self.archive = archive

    async def race(self, code: str) -> Race | None:
        """The newest archived race of that code, or None."""
        row = await self.archive.race(code)
        return None if row is None else row.race

    async def change(
        self, code: str, created_at: float, decide: Callable[[Race], RaceChange | None]
    ) -> RaceChange | None:
        """Decide a change of the archived race (``code``, ``created_at``) and write it,
        the row locked meanwhile (two nodes deciding at once: the second decides on the
        first one's race). The change written, its race at its new version (one more per
        event, as in Redis); None when the race is not archived or nothing changes."""
        async with self.archive.connection() as conn, conn.transaction():
            with self.archive.timed("finished_race_row"):
                row = await conn.fetchrow(QUERIES["finished_race_row"], code, created_at)
            if row is None:
                return None
            race = race_of_blobs(row["meta"], row["entries"])
            change = decide(race)
            if change is None:
                return None
            new = replace(change.race, version=race.version + len(change.events))
            meta, entries = race_blobs(new)
            with self.archive.timed("finished_set_race"):
                await conn.execute(QUERIES["finished_set_race"], code, created_at, meta, entries)
        return replace(change, race=new)

    async def keep_newer(self, race: Race) -> bool:
        """Write ``race`` (as Redis has it now) to its archived row when the row holds an
        older version of it; whether the race is archived."""
        async with self.archive.connection() as conn, conn.transaction():
            with self.archive.timed("finished_race_row"):
                row = await conn.fetchrow(QUERIES["finished_race_row"], race.code, race.created_at)
            if row is None:
                return False
            kept = race_of_blobs(row["meta"], row["entries"]).version
            meta, entries = race_blobs(race)
            # newer, or as new but changed without an event (a daily race's par in its day)
            if kept < race.version or (kept == race.version and meta != row["meta"]):
                with self.archive.timed("finished_set_race"):
                    await conn.execute(
                        QUERIES["finished_set_race"], race.code, race.created_at, meta, entries
                    )
        return True

    async def player_races(self, player: str, codes: Sequence[str]) -> dict[str, PlayerRace]:
        """The archived races among ``codes`` that ``player`` played (the newest of a
        code), as a player's list shows them."""
        if not codes:
            return {}
        async with self.archive.connection() as conn:
            with self.archive.timed("finished_player_races"):
                rows = await conn.fetch(QUERIES["finished_player_races"], player, list(codes))
        return {
            row["code"]: PlayerRace(
                code=row["code"],
                state="finished",
                variant=row["variant"],
                preparing=False,
                players=row["players"],
                status=row["status"],
            )
            for row in rows
        }


class FinishedRaces:
    """The one place a race is read from when it may be finished and gone from Redis:
    Redis first, then the archive (None: the node keeps none)."""

    def __init__(self, races: RaceStore, archived: ArchivedRaces | None = None) -> None:
        self.races = races
        self.archived = archived

    @classmethod
    def of(cls, races: RaceStore, archive: ArchiveStore | None) -> FinishedRaces:
        """The reader of a node whose archive is ``archive`` (None: Redis only)."""
        return cls(races, None if archive is None else ArchivedRaces(archive))

    @property
    def on(self) -> bool:
        """Whether races are read from an archive too."""
        return self.archived is not None

    async def race(self, code: str) -> Race | None:
        """The race of that code: in Redis, else archived; None when neither has it."""
        race = await self.races.load_race(code)
        if race is None:
            race = await self.archived_race(code)
        return race

    async def archived_race(self, code: str) -> Race | None:
        """The newest archived race of that code (None: none, or no archive). Only for a
        code Redis has no race of (a race in Redis is the one the code names)."""
        if self.archived is None:
            return None
        return await self.archived.race(code)
