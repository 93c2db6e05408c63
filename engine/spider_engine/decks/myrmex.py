"""Myrmex (alt-decks.md §1): Spider with two Decktets.

Six suits, ranks Ace (1), 2-9 and Crown (10); each numeral has two suits. A card goes on
any card one rank higher; a group at a column's end moves together when it descends by one
rank and all its cards share at least one suit; a ten-card group from Crown to Ace sharing a
suit leaves at once, written by that suit.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cards import CardSet
from ..variants import register_variant
from .base import AltDeckVariant

__all__ = ["Myrmex", "SUITS", "NUMERALS"]

SUITS = "mswlyk"
"""Moons, Suns, Waves, Leaves, Wyrms, Knots."""

NUMERALS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (2, ("mk", "sy", "wl")),
    (3, ("mw", "sk", "ly")),
    (4, ("ms", "wl", "yk")),
    (5, ("ml", "sw", "yk")),
    (6, ("mw", "sy", "lk")),
    (7, ("ml", "sk", "wy")),
    (8, ("ms", "wl", "yk")),
    (9, ("ms", "wy", "lk")),
)
"""Each numeral rank with the suit pairs of its three cards, in the spec's table order."""

CROWN = 10

_ACES = [(f"A{s}", 1, s) for s in SUITS]
_NUMERALS = [(f"{rank}{pair}", rank, pair) for rank, pairs in NUMERALS for pair in pairs]
_CROWNS = [(f"C{s}", CROWN, s) for s in SUITS]


@register_variant
class Myrmex(AltDeckVariant):
    """Myrmex: 60 cards, 8 columns of 4, a stock of 28 (deals of 8, 8, 8, then 4)."""

    base = "myrmex"
    cards = CardSet.build(_ACES + _NUMERALS + _CROWNS)
    deck_tokens = tuple(t for t, _, _ in _ACES + _NUMERALS + _CROWNS + _NUMERALS)
    columns = 8
    first_deal = (4,) * 8
    stock_deals = (tuple(range(8)),) * 3 + ((0, 1, 2, 3),)
    set_size = CROWN
    runs_by_next = False
    """A card may follow several others, and a group must share one suit throughout."""

    def __init__(self, options: frozenset[str] = frozenset()) -> None:
        # each card's suits as a bit mask: a group shares a suit when its masks' AND is not 0
        self.mask = tuple(sum(1 << SUITS.index(s) for s in suits) for suits in self.cards.suits)
        super().__init__(options)

    def follows(self, upper: int, lower: int) -> bool:
        """``lower`` is one rank below ``upper`` and shares a suit with it (a group of more
        cards needs one suit common to all: see :meth:`movable`)."""
        rank = self.cards.rank
        return rank[lower] == rank[upper] - 1 and bool(self.mask[upper] & self.mask[lower])

    def movable(self, column: Sequence[int], up: int) -> int:
        """The longest group at the column's end descending by one rank whose cards all
        share at least one suit."""
        if not up:
            return 0
        rank = self.cards.rank
        mask = self.mask
        n = len(column)
        lower = column[-1]
        common = mask[lower]
        k = 1
        while k < up:
            upper = column[n - k - 1]
            if rank[upper] != rank[lower] + 1:
                break
            common &= mask[upper]
            if not common:
                break
            lower = upper
            k += 1
        return k

    def completed(self, column: Sequence[int], up: int) -> tuple[int, str] | None:
        """Ten cards from Crown to Ace sharing a suit, written by the Crown's suit."""
        size = self.set_size
        if up < size or self.cards.rank[column[-1]] != 1 or self.movable(column, up) < size:
            return None
        return size, self.cards.suits[column[-size]]

    def foundation_tokens(self) -> frozenset[str]:
        return frozenset(SUITS)

    def set_count(self) -> int:
        return len(SUITS)
