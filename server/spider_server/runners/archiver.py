"""Finished races written to the database, off the move's path.

Every node runs :meth:`Archiver.run`: each step takes the due markers of
``{archive}:pending`` (:class:`~..store.archive_queue.ArchiveQueue`, held for a lease), and
for each finished race whose results are written (its rating changes known) writes its
record (:meth:`~..store.archive.ArchiveStore.write`, once: a retry or a second node changes
nothing), then drops the marker and shortens the race's keys' lives in Redis to
``archived_ttl``. A race not finished yet, or whose results are still pending, waits for a
later step. While the database does not answer, races finish in Redis as without it, their
markers wait, and the step tries again; :attr:`Archiver.backlog` counts them (``/readyz``
says it, :meth:`Archiver.report`, and the metrics). Past ``archive_backlog_max`` waiting,
every way a race is made is refused (:meth:`Archiver.check`, counted afresh at each
creation: a burst of finishes between two steps cannot carry the backlog past the bound by
more than the races already made), so that Redis memory stays bounded while the database
is down; joining, moving and finishing races go on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from ..errors import Unavailable
from ..race import Race
from ..settings import Settings
from ..store import Store, rated_addresses
from ..store.archive import ArchiveStore
from ..store.archive_queue import ArchiveQueue, parse_marker
from ..store.archive_races import ArchivedRaces
from ..store.redisconn import raise_if_cancelled

__all__ = ["LAG_KEPT", "LEASE", "RETRY", "Archiver"]

log = logging.getLogger(__name__)

LEASE = 60.0
"""Seconds a node holds the markers it took (another node takes them up after)."""
RETRY = 2.0
"""Seconds before a race not ready to archive (unfinished, results pending) is looked at
again."""
LAG_KEPT = 10_000
"""Finish-to-archive times kept for the metrics at most (the oldest are dropped when no
scrape takes them)."""


class Archiver:
    """The node's archive step, and what it knows of the backlog."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        clock: Callable[[], float],
        archive: ArchiveStore | None = None,
        archived: ArchivedRaces | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.archive = archive
        """The database (None: this node keeps no archive)."""
        self.archived_races = archived
        """The archived races' later changes (a change committed in Redis while this
        step wrote the race goes to its row too)."""
        self.queue = ArchiveQueue(store.redis)
        self.opened = False
        self.backlog = 0
        """Finished races not archived yet, as last counted."""
        self.archived = 0
        """Races this node wrote."""
        self.lag: list[float] = []
        """Seconds from each finish to its archive, since last read (the metrics take them)."""
        self.error: str | None = None
        """Why the last step could not reach the database (None: it could)."""

    @property
    def on(self) -> bool:
        return self.archive is not None

    @property
    def full(self) -> bool:
        """Whether the backlog reached ``archive_backlog_max`` (new races are refused)."""
        return self.on and self.backlog >= self.settings.archive_backlog_max

    async def check(self) -> None:
        """Unavailable when ``archive_backlog_max`` finished races wait for the database
        (counted now: one ZCARD): a new race is refused and nothing is changed."""
        if not self.on:
            return
        self.backlog = await self.queue.backlog()
        if self.full:
            raise Unavailable(
                f"finished races cannot be kept now ({self.backlog} wait for the database): "
                "no new race can be made for the moment; try again later"
            )

    async def report(self) -> str | None:
        """The archive's line of ``/readyz`` (None: this node keeps no archive):
        ``archive: ok, backlog N`` or ``archive: database unavailable (why), backlog N,
        oldest waiting S s``. The backlog is counted now; the database's state is the last
        step's."""
        if not self.on:
            return None
        self.backlog = await self.queue.backlog()
        if self.error is None:
            return f"archive: ok, backlog {self.backlog}"
        oldest = await self.queue.oldest()
        waited = 0 if oldest is None else max(0, round(self.clock() - oldest))
        return (
            f"archive: database unavailable ({self.error}), backlog {self.backlog}, "
            f"oldest waiting {waited} s"
        )

    async def mark(self, race: Race) -> None:
        """Queue finished ``race`` (called before its finish is committed)."""
        if self.on:
            await self.queue.mark(race, self.clock())

    async def open(self) -> bool:
        """Connect to the database and migrate it, once; whether it is open."""
        if self.archive is None:
            return False
        if not self.opened:
            await self.archive.open()
            self.opened = True
        return True

    async def close(self) -> None:
        if self.archive is not None:
            await self.archive.close()

    async def step(self, limit: int = 32) -> int:
        """Archive the due races; how many were written. Unavailable when Redis or the
        database does not answer (the markers wait)."""
        if self.archive is None:
            return 0
        self.backlog = await self.queue.backlog()
        try:
            await self.open()
        except Unavailable as e:
            self.error = str(e)
            raise
        written = 0
        markers = await self.queue.take(self.clock(), LEASE, limit)
        for i, marker in enumerate(markers):
            try:
                written += await self._archive(marker)
            except Unavailable as e:
                self.error = str(e)
                await self.queue.later(markers[i:], self.clock() + RETRY)
                raise
        if not written:  # nothing written: ask whether the database answers still
            try:
                await self.archive.ping()
            except Unavailable as e:
                self.error = str(e)
                raise
        self.error = None
        self.backlog = await self.queue.backlog()
        self.archived += written
        return written

    async def _archive(self, marker: str) -> int:
        assert self.archive is not None
        code, created_at = parse_marker(marker)
        race = await self.store.races.load_race(code)
        if race is None or race.created_at != created_at:
            found = await self.archive.race(code)
            if found is None or found.race.created_at != created_at:
                log.error("race %s finished but is gone from Redis unarchived", code)
            await self.queue.done(marker)
            return 0
        changes = await self.store.ratings.applied_changes(race)
        if race.final is None or changes is None:
            await self.queue.later([marker], self.clock() + RETRY)
            return 0
        players = [r.player for r in race.final.results if not r.ghost]
        records = await self.store.ratings.load_records(players)
        wrote = await self.archive.write(race, changes, records)
        if race.options.rated:  # the addresses its players joined from, for the report
            await rated_addresses.keep(self.store.redis, self.archive, race)
        if self.archived_races is not None:  # changed meanwhile (its par landed): the row too
            version = await self.store.races.race_version(code)
            if version is not None and version != race.version:
                now = await self.store.races.load_race(code)
                if now is not None and now.created_at == created_at:
                    await self.archived_races.keep_newer(now)
        await self.queue.archived(marker, race, self.settings.archived_ttl)
        if wrote and race.ends_at is not None:
            self.lag.append(max(0.0, self.clock() - race.ends_at))
            del self.lag[:-LAG_KEPT]
        return int(wrote)

    async def run(self) -> None:
        """Archive every ``sweep_interval`` (sooner while there is a backlog)."""
        while True:
            busy = False
            try:
                busy = await self.step() > 0
            except Unavailable as e:
                raise_if_cancelled()  # a cancel that came out as the call's own error
                log.warning("archive: %s", e)
            except Exception:
                raise_if_cancelled()
                log.exception("archive step failed")
            await asyncio.sleep(0 if busy else self.settings.sweep_interval)
