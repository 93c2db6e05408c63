"""An honest player's hints beside the hint spam (``--hint-spam``): its pace, quiet and
loaded, in one run.

The honest player is alone in its own ``spider4`` race with hints. Each sample is a move
to a position it has not seen (:class:`FreshPositions`, as the spammers do before each of
their hints), then a hint asked at once, timed from the request to its answer; then it
rests :data:`REST` seconds, as a player who thinks between hints (a spammer asks again
the moment it is answered). Asked at once, the hint
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
from spider_engine import Board, HiddenCardError, Move

from .tools import connect_client

__all__ = ["REST", "SPAMMED", "FreshPositions", "HonestHints"]

VARIANT = "spider4"
REST = 3.0
"""Seconds the honest player rests between two hints."""
SPAMMED = 3
"""Hints each spammer has had answered before the loaded samples begin."""


@dataclass
class FreshPositions:
    """Moves of one player to positions it has not seen: the first legal move (moves of
    cards before the stock's deal) whose position, worked out on a copy of the player's
    view, is new; a move that turns a card or deals always is (the face-down cards and
    the stock only shrink). A hint asked there is searched, never one the node keeps."""

    client: Client
    _seen: set[str] = field(default_factory=set)

    def _fresh(self, view: Board, move: str) -> bool:
        board = Board.from_text(view.view_text())
        try:
            board.push(Move.from_text(move))
        except HiddenCardError:  # a card turned or the stock dealt: never seen before
            return True
        return board.view_text() not in self._seen

    async def next(self) -> bool:
        """Move to a position not seen before; False when no move leads to one."""
        view = self.client.view
        if view is None:
            return False
        self._seen.add(view.view_text())
        moves = sorted(self.client.legal_moves(), key=lambda m: m == "+")
        move = next((m for m in moves if self._fresh(view, m)), None)
        if move is None:
            return False
        await self.client.move(move)
        if self.client.view is not None:
            self._seen.add(self.client.view.view_text())
        return True


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
