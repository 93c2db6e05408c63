"""A rated race's rating changes for the race screen's results: asked for once the race
has finished, shown once the server has written them."""

from __future__ import annotations

import contextlib
from typing import Any

from spider_client import Client, SpiderClientError
from spider_client.protocol import RaceInfo, RatingChange

__all__ = ["RaceRatings"]


class RaceRatings:
    """The rating changes of the races a screen showed, by race code."""

    def __init__(self) -> None:
        self.asked: set[str] = set()
        self.changes: dict[str, list[RatingChange]] = {}

    def of(self, screen: Any, client: Client, race: RaceInfo) -> list[RatingChange] | None:
        """The race's changes once known; the first call for a finished rated race asks
        for them in a worker of ``screen``, which is redrawn when they come."""
        if race.rated and race.results and race.code not in self.asked:
            self.asked.add(race.code)
            screen.run_worker(self._fetch(screen, client, race.code), group="ratings")
        return self.changes.get(race.code)

    async def _fetch(self, screen: Any, client: Client, code: str) -> None:
        with contextlib.suppress(SpiderClientError, TimeoutError):
            reply = await client.rating_changes(code)
            if reply.applied:
                self.changes[code] = reply.changes
                screen.redraw()
