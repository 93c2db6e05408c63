"""The seeded deal of rules.md §4 (algorithm v1).

The order of the cards depends only on the canonical deck and the seed; the layout (how the
shuffled deck is laid into columns and stock) is the variant's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import TypeVar

__all__ = ["DEAL_PREFIX", "random_words", "shuffle", "lay_out"]

T = TypeVar("T")

DEAL_PREFIX = b"spider-race/deal/v1\x00"
_TWO64 = 1 << 64


def random_words(seed: str | int) -> Iterator[int]:
    """``w_k`` for k = 0, 1, 2, …: the first 8 bytes of SHA-256(prefix, seed, 0, k)."""
    head = DEAL_PREFIX + str(seed).encode("utf-8") + b"\x00"
    k = 0
    while True:
        digest = hashlib.sha256(head + k.to_bytes(8, "big")).digest()
        yield int.from_bytes(digest[:8], "big")
        k += 1


def shuffle(deck: Sequence[T], seed: str | int) -> list[T]:
    """Fisher–Yates with ``uniform(n)`` by rejection, exactly as §4 says."""
    cards = list(deck)
    words = random_words(seed)
    for i in range(len(cards) - 1, 0, -1):
        n = i + 1
        limit = _TWO64 - (_TWO64 % n)
        while True:
            w = next(words)
            if w < limit:
                break
        j = w % n
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def lay_out(cards: Sequence[T], first_deal: Sequence[int]) -> tuple[list[list[T]], list[T]]:
    """Deal from index 0 row by row, left to right; the rest, in order, is the stock."""
    columns: list[list[T]] = [[] for _ in first_deal]
    pos = 0
    for row in range(max(first_deal, default=0)):
        for col, wanted in enumerate(first_deal):
            if row < wanted:
                columns[col].append(cards[pos])
                pos += 1
    return columns, list(cards[pos:])
