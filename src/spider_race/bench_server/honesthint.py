"""An honest player's hints beside the hint spam (``--hint-spam``): its pace, quiet and
loaded, in one run.

The honest player is alone in its own ``spider4`` race with hints. Each sample is a move
to a position it has not seen (:class:`FreshPositions`, as the spammers do before each of
their hints), then a hint asked at once, timed from the request to its answer; then it rests :data:`REST` seconds, as a player who thinks
between hints (a spammer asks again the moment it is answered). Asked at once, the hint
is searched, never a kept one: the node starts searching the new position's hint after
the move's ack (a *prefetch*), and the hint waits for that search or runs its own. The
quiet samples are taken from the start of the measured time to its middle; the loaded
ones from the moment every spammer has had :data:`SPAMMED` hints answered (the spammers
have then used the solver's workers more than the honest player has: before that, a
spammer that has only just begun is as entitled to the workers as it) to the end."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field

from spider_client import Client, SpiderClientError

from .tools import connect_client

__all__ = ["REST", "SPAMMED", "FreshPositions", "HonestHints"]

VARIANT = "spider4"
REST = 3.0
"""Seconds the honest player rests between two hints."""
SPAMMED = 3
"""Hints each spammer has had answered before the loaded samples begin."""


@dataclass
class FreshPositions:
    """Moves of one player to positions it has not seen (the first legal move, in turn,
    that does not bring back an earlier one; the stock's deal when no move of cards
    does): a hint asked there is searched, never one the node keeps."""

    client: Client
    _seen: set[str] = field(default_factory=set)
    _turn: int = 0

    def _view(self) -> str:
        view = self.client.view
        return view.view_text() if view is not None else ""

    async def next(self) -> bool:
        """Move to a position not seen before; False when the game has no move left."""
        c = self.client
        self._seen.add(self._view())
        for _ in range(50):
            moves = c.legal_moves()
            if not moves:
                return False
            cards = [m for m in moves if m != "+"]
            self._turn += 1
            await c.move(cards[self._turn % len(cards)] if cards else "+")
            view = self._view()
            if view not in self._seen:
                self._seen.add(view)
                return True
        return False


@dataclass
class HonestHints:
    """The honest player (see the module)."""

    url: str
    quiet: list[float] = field(default_factory=list)
    """Seconds from each hint asked to its answer, in the quiet half."""
    loaded: list[float] = field(default_factory=list)
    """The same, in the loaded half."""
    errors: dict[str, int] = field(default_factory=dict)
    stuck: bool = False
    """Its game has no move left (no more samples)."""
    client: Client | None = None
    _positions: FreshPositions | None = None

    async def setup(self) -> None:
        """Connect and start its race (before the timed phase)."""
        self.client = c = await connect_client(self.url, "honest", resend_after=120.0)
        await c.create_race(
            variant=VARIANT, seed="honest", hints=True, countdown=0, time_limit=3600
        )
        await c.ready()
        await c.wait_until(lambda x: x.view is not None, timeout=120)
        self._positions = FreshPositions(c)

    async def sample(self) -> float | None:
        """One move and one hint: the hint's seconds, None when there was none."""
        c, positions = self.client, self._positions
        assert c is not None and positions is not None
        loop = asyncio.get_running_loop()
        try:
            if not await positions.next():
                self.stuck = True
                return None
            started = loop.time()
            await c.hint()
            return loop.time() - started
        except SpiderClientError as e:
            name = type(e).__name__
            self.errors[name] = self.errors.get(name, 0) + 1
            return None

    async def run(self, until: float, into: list[float]) -> None:
        """Take samples into ``into`` until loop time ``until``, resting between them."""
        loop = asyncio.get_running_loop()
        while loop.time() < until and not self.stuck:
            took = await self.sample()
            if took is not None:
                into.append(took)
            await asyncio.sleep(max(0.0, min(REST, until - loop.time())))

    async def run_loaded(self, until: float, answered: Callable[[], list[int]]) -> None:
        """The loaded samples, once every spammer has had :data:`SPAMMED` hints answered
        (``answered`` gives the counts)."""
        loop = asyncio.get_running_loop()
        while loop.time() < until and not all(n >= SPAMMED for n in answered()):
            await asyncio.sleep(0.05)
        await self.run(until, self.loaded)

    async def close(self) -> None:
        if self.client is not None:
            await self.client.close()
