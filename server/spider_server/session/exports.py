"""Finished races' records for export (``GET /races/<code>.json``): the race read from
Redis while it is there, else from the archive (:class:`~..store.archive_races.
FinishedRaces`), and turned into its record (:func:`~..race.record.race_record`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import RaceNotFound
from ..race import normalize_code, race_record
from ..runners.archiver import Archiver
from ..store.archive_races import FinishedRaces

__all__ = ["Exports"]


class Exports:
    """The node's reader of finished races' records. ``clock`` is the node's time (a daily
    race's record is out once its UTC day is over by it)."""

    def __init__(
        self, finished: FinishedRaces, archiver: Archiver, clock: Callable[[], float]
    ) -> None:
        self.finished = finished
        """The node's reader of finished races: Redis first, then the archive."""
        self.archiver = archiver
        self.clock = clock

    async def record(self, text: str) -> dict[str, Any]:
        """The record of the race of code ``text``: RaceNotFound for a text that is no
        code (checked before any store is asked) or a race that is in no store;
        WrongState when it is not finished; :class:`~..race.NotYet` for a daily race
        before its day is over; Unavailable when a store does not answer."""
        code = normalize_code(text)
        if code is None:
            raise RaceNotFound(
                f"{text[:20]!r} is not a race code (5 letters and digits, such as K7QX2)"
            )
        race = await self.finished.races.load_race(code)
        if race is None and self.finished.on:
            await self.archiver.open()  # a node whose database was down at its start
            race = await self.finished.archived_race(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        return race_record(race, now=self.clock())
