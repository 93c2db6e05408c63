"""The operators' actions carried into Redis, and the old addresses deleted.

``spider-race admin`` reaches the database only; Redis holds the live records and the
ladders. Every node with an archive runs :meth:`AdminStep.step` each turn of its
background loop (:meth:`~.rebuild.Rebuild.run`): it takes the actions whose live part is
pending (``admin_actions.done_at`` is NULL), oldest first, and does it:

- a void: each player's rating change of the race is undone in their live record
  (:func:`~..store.admin_live.undo_change`, once per player, every node may try at once),
  the record written to ``player_records`` too (its new version), and their place on the
  ladder follows;
- a close: the account's player is taken off every ladder (their records and results
  are kept; a rebuild of the ladders leaves closed accounts out);
- a reopening: the account's player is put back on the ladders of its rated variants.

Then it sets ``done_at``. Once an hour it deletes the addresses of rated races older than
``address_keep_days`` (:mod:`..store.rated_addresses`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..settings import Settings
from ..store import Store, admin, rated_addresses
from ..store.admin_live import drop_from_ladders, undo_change
from ..store.archive import ArchiveStore
from ..store.archive_rebuild import import_records

__all__ = ["PRUNE_EVERY", "AdminStep"]

log = logging.getLogger(__name__)

PRUNE_EVERY = 3600.0
"""Seconds between two deletions of old addresses by a node."""
DAY = 24 * 3600


class AdminStep:
    """The node's part of the operators' actions."""

    def __init__(self, store: Store, settings: Settings, clock: Callable[[], float]) -> None:
        self.store = store
        self.settings = settings
        self.clock = clock
        self.pruned_at: float | None = None

    async def step(self, archive: ArchiveStore) -> int:
        """Do the pending actions' live part, and delete old addresses when due; how many
        actions were done. Unavailable when Redis or the database does not answer (what
        is left stays pending)."""
        now = self.clock()
        if self.pruned_at is None or now - self.pruned_at >= PRUNE_EVERY:
            before = now - self.settings.address_keep_days * DAY
            gone = await rated_addresses.prune(archive, before)
            self.pruned_at = now
            if gone:
                log.info("addresses of %d players of rated races deleted (kept %d days)",
                         gone, self.settings.address_keep_days)  # fmt: skip
        actions = await admin.pending(archive)
        for action, kind, race_id, player in actions:
            if kind == "void":
                await self._void(archive, action, race_id)
            elif kind == "close":
                await drop_from_ladders(self.store.redis, self.store.ratings, player)
            elif kind == "reopen":
                await self.store.ratings.put_on_ladders(player)
            await admin.done(archive, action, self.clock())
            log.info("operator's action %d (%s) done in the live records", action, kind)
        return len(actions)

    async def _void(self, archive: ArchiveStore, action: int, race_id: int) -> None:
        for change in await admin.void_changes(archive, race_id):
            record = await undo_change(self.store.redis, self.store.ratings, action, change)
            if record is not None:
                await import_records(archive, [record])
