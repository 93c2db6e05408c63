"""The ranking of a finished race (rules.md §7a, "Race results").

Four groups, in order; within each, the key of :func:`standing` (smaller first):

1. players who won, by the race time of their winning action, then by fewer actions;
2. players who did not win and did not forfeit (stuck, out of time, still playing), by
   progress — (sets completed, cards turned up, suited score) compared as a tuple, larger
   first — then by the race time of the action that last raised it, earlier first;
3. players who forfeited (:data:`~.model.FORFEIT`: resigned, left, abandoned, idle), by the
   same keys as the second group;
4. players who left before the start (a quick match's dodge past the free ones: ``left``,
   :attr:`~.model.Entry.dodged`), below everyone.

So nobody ranks higher for stopping early or for making fewer moves: a resign ranks below
every player who played on, and moves alone never raise progress. The classic and suited
scores are shown in the results; the classic score plays no part in the ranking.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from spider_client.protocol import Result

from .model import FORFEIT, Entry, Status

__all__ = ["Standing", "rank", "shared_ranks", "standing"]

Standing = tuple[int, float, int, int, int, int, float]
"""A player's key in the ranking: (group, win time, actions, -sets completed, -cards turned
up, -suited score, time progress was last raised); smaller ranks first."""


def standing(entry: Entry) -> Standing:
    """The player's key in the ranking (rules.md §7a); equal keys share a rank. A winner's
    progress and a non-winner's time and actions are left out (0)."""
    if entry.status == Status.WON:
        return (0, entry.time or 0.0, entry.moves, 0, 0, 0, 0.0)
    sets, turned_up, suited = entry.progress
    group = 2 if entry.status in FORFEIT else 1
    if entry.dodged:
        group = 3  # left before the start: below every player who raced
    return (group, 0.0, 0, -sets, -turned_up, -suited, entry.raised_at)


def shared_ranks(keys: Sequence[object]) -> list[int]:
    """The ranks of items already in ranking order, given their keys: an item whose key
    equals the one before it shares its rank, and the next key ranks by position
    (1, 2, 2, 4)."""
    ranks: list[int] = []
    for i, key in enumerate(keys):
        ranks.append(ranks[-1] if i and key == keys[i - 1] else i + 1)
    return ranks


def rank(entries: Iterable[Entry]) -> list[Result]:
    """The results of a race, best first, ranked by :func:`standing` (rules.md §7a). Equal
    keys share a rank (1, 2, 2, 4); among equals, join order. ``time`` is a winner's race
    time (None for the others)."""
    ordered = sorted(entries, key=lambda e: (standing(e), e.order))
    ranks = shared_ranks([standing(e) for e in ordered])
    return [
        Result(
            rank=rank_now,
            player=e.player,
            name=e.name,
            status=e.status,
            time=e.time if e.status == Status.WON else None,
            runs=e.runs,
            moves=e.moves,
            score=e.score,
            hints=e.hints,
            bot=e.bot,
            ghost=e.ghost,
            guest=e.guest,
        )
        for rank_now, e in zip(ranks, ordered, strict=True)
    ]
