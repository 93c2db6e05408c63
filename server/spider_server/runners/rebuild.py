"""The ratings cache rebuilt from the archive when Redis lacks it, and the data Redis held
from before the archive archived once.

Every node with an archive runs :meth:`Rebuild.run`: each turn (every ``sweep_interval``)
it looks for three markers in Redis, and does what one lacks, under a lease that lets one
node at a time do it (another node waits for the marker):

- ``{ratings}:rebuilt`` missing (a new deployment, or a Redis emptied): the ratings cache
  is rebuilt from ``player_records``, a page of :data:`PAGE` players at a time in the
  order of their ids (keyset), progress logged: each player's record, their places in the
  ladders of every variant they have a rated race in (the rating shown, in their pool's
  ladder, as a race's settlement writes it), their name (the player of that name whose
  record came with the newest archived race). A player whose Redis record is at the
  archived version or newer is left as Redis has it (its races are not archived yet).
- ``{ratings}:ladders_accounts`` missing (once, when accounts came; again when Redis lost
  it): every player who is not an account's is taken off the ladders. The players from
  before accounts are guests: their ratings stay as they were (frozen; a guest is never
  rated) until one signs up from its token and the account takes them over (back on the
  ladders). Guests never get on a ladder (a rebuild puts accounts' ratings only).
- ``{archive}:imported`` missing: what Redis held from before the archive is archived:
  every finished race still in Redis is queued for the archive (the archiver writes it,
  once), every player's record is written to ``player_records`` with its Redis version
  (a newer archived one is kept), and the history lines of races gone from Redis before
  they could be archived (a history keeps 50 lines, a race lives 7 days) are kept in
  ``history_lines`` as the history showed them: their replays are gone, and no line is
  dropped silently. Doing it again changes nothing: the archive keeps each thing once.

Until the rebuild is done, a record asked for and missing in Redis is read from the
archive (:meth:`~..store.RatingStore.load_records`), so no race is decided on a fresh
record while an older one is archived.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from ..closing import between_turns
from ..errors import Unavailable
from ..settings import Settings
from ..store import Store, keys
from ..store.accounts import accounts_of_players, ranked_players
from ..store.archive import ArchiveStore
from ..store.archive_rebuild import archived_codes, import_records, keep_lines, records_page
from ..store.ratings_cache import RatingsCache
from ..store.redisconn import raise_if_cancelled
from .admin import AdminStep
from .archiver import Archiver

__all__ = ["LEASE", "PAGE", "Rebuild"]

log = logging.getLogger(__name__)

PAGE = 500
"""Players' records read from the archive (and written into Redis) at a time."""
LEASE = 60.0
"""Seconds a node holds the rebuild's or the import's lease without renewing it (each page
renews it): a node that dies while holding it is relieved after that."""


class Rebuild:
    """The node's rebuild of the ratings cache and its import of today's data."""

    def __init__(
        self,
        store: Store,
        archiver: Archiver,
        settings: Settings,
        clock: Callable[[], float],
    ) -> None:
        self.store = store
        self.archiver = archiver
        self.settings = settings
        self.clock = clock
        self.cache = RatingsCache(store.redis)
        self.node = settings.node
        self.ready = asyncio.Event()
        """Set once the ratings cache is whole and today's data archived (by any node)."""
        self.admin = AdminStep(store, settings, clock)
        """The operators' actions carried into Redis (each turn, once the cache is whole)."""

    @property
    def archive(self) -> ArchiveStore | None:
        return self.archiver.archive

    async def step(self) -> bool:
        """Rebuild the cache and import today's data where Redis lacks their markers and no
        other node is at it; whether both are done. Unavailable when Redis or the database
        does not answer."""
        if self.archive is None or not await self.archiver.open():
            return False
        if not await self.cache.marked(keys.RATINGS_REBUILT):
            await self._leased(keys.RATINGS_REBUILD_LEASE, self.rebuild)
        if not await self.cache.marked(keys.LADDERS_ACCOUNTS):
            await self._leased(keys.LADDERS_ACCOUNTS_LEASE, self.accounts_only)
        if not await self.cache.marked(keys.ARCHIVE_IMPORTED):
            await self._leased(keys.ARCHIVE_IMPORT_LEASE, self.import_today)
        marks = (keys.RATINGS_REBUILT, keys.LADDERS_ACCOUNTS, keys.ARCHIVE_IMPORTED)
        done = all([await self.cache.marked(m) for m in marks])
        if done:
            self.ready.set()
        return done

    async def _leased(self, lease: str, work: Callable[[str], Awaitable[None]]) -> None:
        if not await self.cache.hold(lease, self.node, LEASE):
            return  # another node is at it
        try:
            await work(lease)
        finally:
            await self.cache.release(lease, self.node)

    async def _renew(self, lease: str) -> None:
        if not await self.cache.renew(lease, self.node, LEASE):
            raise Unavailable(f"{lease}: the lease lapsed (another node takes it up)")

    async def rebuild(self, lease: str) -> None:
        """Rebuild the ratings cache from the archive (see the module), then mark it."""
        assert self.archive is not None
        started = self.clock()
        await self.cache.forget_rebuild_names()
        after, seen, written = "", 0, 0
        while True:
            page = await records_page(self.archive, after, PAGE)
            if not page:
                break
            ranked = await ranked_players(self.archive, [rec.player for rec, _ in page])
            written += await self.cache.put(page, rebuild=True, ranked=ranked)
            seen += len(page)
            after = page[-1][0].player
            await self._renew(lease)
            log.info("ratings cache rebuild: %d players read, %d written", seen, written)
        await self.cache.forget_rebuild_names()
        await self.cache.mark(keys.RATINGS_REBUILT, self.clock())
        log.info(
            "ratings cache rebuilt from the archive: %d players, %d written (the others "
            "were as new in Redis) in %.1f s",
            seen,
            written,
            self.clock() - started,
        )

    async def accounts_only(self, lease: str) -> None:
        """Take every player who is not an account's off the ladders (see the module),
        then mark it."""
        assert self.archive is not None
        seen = dropped = 0
        async for key, players in self.cache.ladder_members():
            accounts = await accounts_of_players(self.archive, players)
            guests = [p for p in players if p not in accounts]
            await self.cache.drop_from_ladder(key, guests)
            seen, dropped = seen + len(players), dropped + len(guests)
            await self._renew(lease)
        await self.cache.mark(keys.LADDERS_ACCOUNTS, self.clock())
        log.info(
            "ladders left to accounts: %d places looked at, %d players without an account"
            " taken off (their ratings kept, frozen)",
            seen,
            dropped,
        )

    async def import_today(self, lease: str) -> None:
        """Archive what Redis held from before the archive (see the module), then mark it."""
        assert self.archive is not None
        races = records = lines = 0
        async for codes in self.cache.finished_races():
            for code in codes:
                race = await self.store.races.load_race(code)
                if race is not None and race.final is not None:
                    await self.archiver.mark(race)
                    races += 1
            await self._renew(lease)
            await self._wait_for_backlog(lease)
            log.info("archiving today's data: %d finished races queued", races)
        async for page in self.cache.records():
            await import_records(self.archive, page)
            records += len(page)
            await self._renew(lease)
        async for pairs in self.cache.histories():
            codes = list(dict.fromkeys(line.code for _, line in pairs))
            known = await self.cache.races_present(codes) | await archived_codes(
                self.archive, codes
            )
            gone = [(player, line) for player, line in pairs if line.code not in known]
            await keep_lines(self.archive, gone)
            lines += len(gone)
            await self._renew(lease)
        await self.cache.mark(keys.ARCHIVE_IMPORTED, self.clock())
        log.info(
            "today's data archived: %d finished races queued, %d players' records written, "
            "%d history lines of races gone from Redis kept",
            races,
            records,
            lines,
        )

    async def _wait_for_backlog(self, lease: str) -> None:
        """Hold the import while the archive's backlog is past half its limit (new races
        are refused at the limit): the archiver drains it meanwhile."""
        while await self.archiver.queue.backlog() >= self.settings.archive_backlog_max // 2:
            await self._renew(lease)
            await asyncio.sleep(self.settings.sweep_interval)

    async def run(self) -> None:
        """A step every ``sweep_interval``, for as long as the node runs (a Redis emptied
        meanwhile is rebuilt again)."""
        if self.archive is None:
            return
        while True:
            try:
                if await self.step() and self.archive is not None:
                    await self.admin.step(self.archive)
            except Unavailable as e:
                raise_if_cancelled()  # a cancel that came out as the call's own error
                log.warning("ratings cache rebuild: %s", e)
            except Exception:
                raise_if_cancelled()
                log.exception("ratings cache rebuild failed")
            await between_turns(self.settings.sweep_interval)
