"""A node's hints: searched before they are asked for, kept, and answered at once.

In a race with hints, each time a player's position changes (an acked action, the deal)
the node starts a *prefetch* of that position's hint (:meth:`Hints.schedule`, which only
schedules it: the move's path does no more): a search of ``hint_budget`` positions at the
solver workers' lowest priority (``Priority.PREFETCH``: below the seed pool's refills, and
stopped for any hint or race's proof that waits). Each player has one prefetch at a time:
a newer position cancels the older search, unless another player wants the same position
(everyone at the deal). A race may start ``prefetch_per_race`` of them on a node, every
player together; past it, its hints are searched when asked for only.

What a prefetch finds is kept in a small cache (:class:`HintCache`, bounded in entries and
bytes) keyed by the full position and the budget: the search is deterministic, so a hint
for a position and budget is the same for every player who reaches it.

When a player asks (:meth:`Hints.answer`):

- the cache has it: answered at once (``spider_hints_total{how="cache"}``);
- a prefetch of that position is running: its answer is awaited while it runs (at most
  :data:`WAIT` seconds); once its search is past ``hint_quick_budget`` positions without a
  win, the answer is the one a search of that budget gives (the players' ranking), sent
  at once (``prefetch``);
- otherwise a search of ``hint_quick_budget`` positions (at most ``hint_budget``) at the
  hints' priority answers (``quick``): about half a second on spider4.

A player answered without the prefetch's full answer stops wanting it (the search is
cancelled unless another player wants it). This module runs no solver code: the workers
do; it imports no engine.
"""

from __future__ import annotations

import asyncio
import functools
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from ..metrics import Metrics
from ..settings import Settings
from ..workers import JobRefused, Prefetch, SolverWorkers, Suggested, WorkersClosed

__all__ = ["WAIT", "HintCache", "Hints"]

WAIT = 5.0
"""Seconds a hint asked for waits at most for a running prefetch of its position (it is
ahead of a new search of the quick budget, which would start from nothing, so it is waited
for while it runs; the bound only guards against a stalled worker)."""
SLICE = 0.05
"""How often that wait looks whether the prefetch still runs (a preempted one does not)."""
RACES_KEPT = 10_000
"""Races whose prefetches are counted on a node (the oldest counted are forgotten)."""


class HintCache:
    """Hints by (full position, budget), the least recently used dropped first once there
    are more than ``entries`` or they hold more than ``limit`` bytes."""

    def __init__(self, entries: int, limit: int) -> None:
        self.entries = entries
        self.limit = limit
        self.bytes = 0
        self._items: OrderedDict[tuple[str, int], Suggested] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, position: str, budget: int) -> Suggested | None:
        value = self._items.get((position, budget))
        if value is not None:
            self._items.move_to_end((position, budget))
        return value

    def put(self, position: str, budget: int, value: Suggested) -> None:
        key = (position, budget)
        old = self._items.pop(key, None)
        if old is not None:
            self.bytes -= _size(position, old)
        self._items[key] = value
        self.bytes += _size(position, value)
        while self._items and (len(self._items) > self.entries or self.bytes > self.limit):
            (dropped, _), gone = self._items.popitem(last=False)
            self.bytes -= _size(dropped, gone)


def _size(position: str, value: Suggested) -> int:
    # a line's move is a str object of its own: about 60 bytes with its place in the tuple
    return len(position) + sum(len(m) for m in value.moves) + 60 * len(value.line) + 64


class _Search:
    """A prefetch under way and the players (race, player) who want it."""

    def __init__(self, position: str, handle: Prefetch) -> None:
        self.position = position
        self.handle = handle
        self.wanted: set[tuple[str, str]] = set()


class Hints:
    """The node's hints (see the module): prefetches, their cache, and the answers."""

    def __init__(
        self,
        workers: SolverWorkers,
        settings: Settings,
        metrics: Metrics,
        *,
        on_prefetch: Callable[[str, str], None] | None = None,
    ) -> None:
        self.workers = workers
        self.settings = settings
        self.metrics = metrics
        self.cache = HintCache(settings.hint_cache_entries, settings.hint_cache_bytes)
        self.on_prefetch = on_prefetch
        """Called with (race, position) when a prefetch starts (tests watch it)."""
        self._searches: dict[str, _Search] = {}
        """Full position -> its prefetch under way."""
        self._wants: dict[tuple[str, str], str] = {}
        """(race, player) -> the position of the player's prefetch."""
        self._spent: OrderedDict[str, int] = OrderedDict()
        """Race -> prefetches started on this node."""

    @property
    def budget(self) -> int:
        return self.settings.hint_budget

    @property
    def quick(self) -> int:
        return min(self.settings.hint_quick_budget, self.settings.hint_budget)

    def spent(self, code: str) -> int:
        """Prefetches race ``code`` started on this node."""
        return self._spent.get(code, 0)

    def searching(self, position: str) -> bool:
        """Whether a prefetch of ``position`` is under way."""
        return position in self._searches

    # -- prefetches -------------------------------------------------------------------------

    def schedule(self, code: str, player: str, position: str) -> None:
        """Prefetch the hint of ``player``'s new ``position`` (a full position's text) in
        race ``code`` soon: called on the move's path, it only schedules the work."""
        asyncio.get_running_loop().call_soon(self.prefetch, code, player, position)

    def prefetch(self, code: str, player: str, position: str) -> None:
        """Start (or join) the prefetch of ``position`` for ``player``, who stops wanting
        their older one; nothing when the hint is kept already or the race's prefetches
        are spent."""
        key = (code, player)
        if self._wants.get(key) == position:
            return
        self.forget(code, player)
        if self.cache.get(position, self.budget) is not None:
            return
        search = self._searches.get(position)
        if search is None:
            spent = self._spent.get(code, 0)
            if spent >= self.settings.prefetch_per_race:
                self.metrics.hints_total["prefetch_capped"] += 1
                return
            try:
                handle = self.workers.prefetch(position, self.budget, self.quick, owner=code)
            except (JobRefused, WorkersClosed):
                return
            self._spent[code] = spent + 1
            self._spent.move_to_end(code)
            while len(self._spent) > RACES_KEPT:
                self._spent.popitem(last=False)
            self.metrics.hints_total["prefetched"] += 1
            search = self._searches[position] = _Search(position, handle)
            handle.result.add_done_callback(functools.partial(self._found, search))
            if self.on_prefetch is not None:
                self.on_prefetch(code, position)
        search.wanted.add(key)
        self._wants[key] = position

    def forget(self, code: str, player: str) -> None:
        """``player`` of race ``code`` wants no prefetch any more (a newer position, an
        answer, gone): the search is cancelled unless another player wants it."""
        position = self._wants.pop((code, player), None)
        search = self._searches.get(position) if position is not None else None
        if search is None:
            return
        search.wanted.discard((code, player))
        if not search.wanted:
            del self._searches[search.position]
            self.workers.cancel(search.handle)

    def _found(self, search: _Search, future: asyncio.Future[Suggested]) -> None:
        if self._searches.get(search.position) is search:
            del self._searches[search.position]
        if future.cancelled() or future.exception() is not None:
            return
        self.cache.put(search.position, self.budget, future.result())

    # -- answers ----------------------------------------------------------------------------

    async def answer(self, code: str, player: str, view: str, position: str) -> Suggested:
        """The hint of ``player``'s ``position`` (see the module); :class:`~.workers.
        WorkerError` when the workers give no answer (the caller falls back)."""
        kept = self.cache.get(position, self.budget)
        if kept is not None:
            self.metrics.hints_total["cache"] += 1
            return kept
        search = self._searches.get(position)
        if search is not None and search.handle.running:
            found = await _first(search.handle, WAIT)
            if found is not None:
                self.metrics.hints_total["prefetch"] += 1
                if not search.handle.result.done():
                    self.forget(code, player)  # answered: the rest is not needed here
                return found
        self.forget(code, player)
        found = await self.workers.suggest(view, position, self.quick, player=player)
        self.metrics.hints_total["quick"] += 1
        return found


async def _first(handle: Prefetch, timeout: float) -> Suggested | None:
    """The prefetch's final answer, or what the quick budget answers, whichever comes
    first while it runs, within ``timeout`` seconds; None when neither (it failed, was
    preempted or cancelled, or the time ran out)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    waiting: set[asyncio.Future[Any]] = {handle.passed, handle.result}
    while True:
        await asyncio.wait(waiting, timeout=SLICE, return_when=asyncio.FIRST_COMPLETED)
        for future in (handle.result, handle.passed):
            if future.done() and not future.cancelled() and future.exception() is None:
                value: Suggested = future.result()
                return value
        if all(f.done() for f in waiting) or not handle.running or loop.time() >= end:
            return None
