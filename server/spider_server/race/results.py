"""The ranking of a finished race."""

from __future__ import annotations

from collections.abc import Iterable

from spider_client.protocol import Result

from .model import Entry, Status

__all__ = ["rank"]


def rank(entries: Iterable[Entry]) -> list[Result]:
    """The ranking: players who won first, by time; then by runs completed (more first),
    then by score (higher first). Equal keys share a rank (1, 2, 2, 4); among equals, join
    order."""

    def key(e: Entry) -> tuple[int, float, int, int]:
        won = e.status == Status.WON
        return (0 if won else 1, (e.time or 0.0) if won else 0.0, -e.runs, -e.score)

    ordered = sorted(entries, key=lambda e: (key(e), e.order))
    results: list[Result] = []
    previous: tuple[int, float, int, int] | None = None
    rank_now = 0
    for i, e in enumerate(ordered, start=1):
        k = key(e)
        if k != previous:
            rank_now = i
            previous = k
        results.append(
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
            )
        )
    return results
