"""Bots: programs that see what a player sees and choose the next move.

A bot is any callable that takes the player's view (an engine :class:`~spider_engine.Board`
whose face-down and stock cards are unknown) and returns a move in the spec's notation
(``"d1j"``, ``"+"`` to deal), or ``None`` when it has nothing left to try (its game is then
resigned). Two ship here:

- :class:`RandomBot` plays a uniformly random legal move.
- :class:`GreedyBot` ranks moves the way players do: a move that finishes a run first, then
  one that turns up a face-down card or empties a column, then one that puts a card onto its
  own suit; it deals when nothing useful is left, and remembers the positions it has seen so
  that it does not shuffle cards back and forth.

:func:`play_race` runs a bot in a race through a :class:`~spider_client.Client`;
:func:`play_game` runs one on a full engine position without a server (for testing bots).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from spider_engine import Board, Move

from .errors import WrongState

if TYPE_CHECKING:
    from .client import Client
    from .protocol import RaceInfo

__all__ = ["Bot", "RandomBot", "GreedyBot", "make_bot", "play_race", "play_game"]

Bot = Callable[[Board], "str | None"]
"""A bot: the player's view in, a move's text out (``None``: give up)."""


class RandomBot:
    """Plays a uniformly random legal move (``seed`` makes it repeatable)."""

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)

    def __call__(self, view: Board) -> str | None:
        moves = view.legal_moves.texts()
        return self.rng.choice(moves) if moves else None


# move classes, best first
_FINISHES_RUN = 3
_TURNS_UP_OR_EMPTIES = 2
_ONTO_OWN_SUIT = 1
_OTHER = 0


class GreedyBot:
    """Ranks the legal moves the way players do and plays the best one.

    1. a move that finishes a run (thirteen cards of one suit, King to Ace, leave);
    2. a move that turns up a face-down card or empties a column (preferring, among them,
       one onto its own suit and the column with fewest face-down cards);
    3. a move that puts a card onto its own suit where it did not lie on its suit before;
    4. otherwise a deal, when the stock may deal;
    5. otherwise (a column is empty and the stock may not deal, or the stock is out) any
       other move that leads to a position not seen before, longest runs first.

    It never plays a move back into a position it has seen (it keeps the keys of every view
    it was given), and returns ``None`` when only such moves are left. Ties go to the move
    text that sorts last, or with ``seed`` to a repeatable random choice (bots with
    different seeds then play different games). One instance plays one game.
    """

    def __init__(self, seed: int | str | None = None) -> None:
        self.seen: set[tuple[object, ...]] = set()
        self.rng = random.Random(seed) if seed is not None else None

    def __call__(self, view: Board) -> str | None:
        self.seen.add(view.key())
        best: tuple[tuple[int, ...], object, str] | None = None
        deal = False
        for move in view.legal_moves:
            if move.kind == "deal":
                deal = True
                continue
            rank = self.rank(view, move)
            tie: object = self.rng.random() if self.rng is not None else move.text()
            if best is not None and (rank, tie) <= best[:2]:
                continue
            if self._seen_after(view, move):
                continue
            best = (rank, tie, move.text())
        if best is not None and best[0][0] > _OTHER:
            return best[2]
        if deal:
            return "+"
        return best[2] if best is not None else None

    def rank(self, view: Board, move: Move) -> tuple[int, ...]:
        """How good ``move`` looks: a tuple, greater is better; its first item is the
        move's class (3 finishes a run … 0 nothing useful)."""
        v = view.variant
        nxt = v.next
        src, count, dst = move.src, move.count, move.dst
        col = view.cols[src]
        n = len(col)
        up = n - view.down[src]
        card = col[n - count]
        target = view.cols[dst]
        onto_suit = bool(target) and nxt[target[-1]] == card
        lay_on_suit = count < up and nxt[col[n - count - 1]] == card
        run_after = count
        if onto_suit:
            run_after += v.movable(target, len(target) - view.down[dst])
        finishes = (
            onto_suit and run_after >= getattr(v, "run_length", 13) and v.cards.rank[col[-1]] == 1
        )
        if finishes:
            return (_FINISHES_RUN, run_after, -view.down[src])
        turns_up = count == up and view.down[src] > 0
        empties = count == n and bool(target)
        if turns_up or empties:
            return (_TURNS_UP_OR_EMPTIES, onto_suit, -view.down[src], count)
        if onto_suit and not lay_on_suit:
            return (_ONTO_OWN_SUIT, run_after, count)
        # nothing gained: a run moved between columns, or into an empty column
        return (_OTHER, not lay_on_suit, bool(target), run_after, count)

    def _seen_after(self, view: Board, move: Move) -> bool:
        try:
            view.push(move)
        except Exception:  # turns up an unknown card: a new position
            return False
        try:
            return view.key() in self.seen
        finally:
            view.pop()


def make_bot(strategy: str, *, seed: int | str | None = None) -> Bot:
    """A new bot by name: ``greedy`` or ``random``."""
    if strategy == "greedy":
        return GreedyBot(seed)
    if strategy == "random":
        return RandomBot(seed)
    raise ValueError(f"unknown bot strategy {strategy!r} (greedy, random)")


def play_game(board: Board, bot: Bot, *, max_actions: int = 1000) -> Board:
    """Play ``board`` (a full position, changed in place and returned) with ``bot``, showing
    the bot only the player's view each time, until it is won, the bot gives up (returns
    ``None``) or ``max_actions`` moves and deals were made."""
    for _ in range(max_actions):
        if board.is_won():
            break
        text = bot(board.view())
        if text is None:
            break
        board.push(Move.from_text(text))
    return board


async def play_race(
    client: Client,
    bot: Bot,
    *,
    ready: bool = True,
    max_actions: int = 5000,
    delay: float = 0.0,
) -> RaceInfo:
    """Play the race ``client`` has joined as a player with ``bot``; return the race as it
    stands when the player's game is over.

    Marks the player ready (unless ``ready`` is false), waits for the deal, then asks the
    bot for a move on each new view and sends it, waiting for its ack, until the player's
    game is over (won, stuck, resigned, out of time, or the race finished). A bot that
    returns ``None``, or that has made ``max_actions`` actions, resigns (so does a player
    with no legal move left in a race that allows undo). ``delay`` seconds pass between
    actions (for races people watch). Reconnects happen underneath (the client resends the
    action in flight); server errors other than "the game or race is over" propagate.
    """
    if ready:
        await client.ready()
    await client.wait_until(lambda c: c.view is not None or c.finished)
    actions = 0
    while not client.finished and client.status in (None, "waiting", "playing", "stuck"):
        view = client.view
        assert view is not None
        text = bot(view) if actions < max_actions else None
        try:
            if text is None:
                await client.resign()
                break
            await client.move(text)
        except WrongState:  # GameOver included: the game or the race ended meanwhile
            break
        actions += 1
        if delay:
            await asyncio.sleep(delay)
    assert client.race is not None
    return client.race
