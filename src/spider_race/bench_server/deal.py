"""The deal the bench's bots play: a move that can go back and forth for ever."""

from __future__ import annotations

import random
from dataclasses import dataclass

from spider_engine import Board

__all__ = ["VARIANT", "PingPong", "find_ping_pong"]

VARIANT = "spider1"


@dataclass(frozen=True)
class PingPong:
    """A seeded deal, an opening, and a move whose way back (``back``) is legal after it
    and leads to the same position again."""

    variant: str
    seed: str
    opening: tuple[str, ...]
    there: str
    back: str


def find_ping_pong(variant: str = VARIANT, *, tries: int = 500) -> PingPong:
    """The first seeded deal (seeds ``bench-0``, ``bench-1``, …) where a move and its way
    back exist after a short random opening of plain moves (no deal from the stock)."""
    rng = random.Random(2026)
    for n in range(tries):
        seed = f"bench-{n}"
        board = Board.deal(variant, seed)
        opening: list[str] = []
        for _ in range(40):
            start = board.text()
            for there in board.legal_moves.texts():
                if there == "+":
                    continue
                after = Board.from_text(start)
                after.push_text(there)
                for back in after.legal_moves.texts():
                    if back == "+":
                        continue
                    again = after.copy()
                    again.push_text(back)
                    if again.text() == start:
                        return PingPong(variant, seed, tuple(opening), there, back)
            plain = [m for m in board.legal_moves.texts() if m != "+"]
            if not plain:
                break
            move = rng.choice(plain)
            board.push_text(move)
            opening.append(move)
    raise RuntimeError(f"no {variant} deal with a move and its way back")  # pragma: no cover
