"""Sparrow (alt-decks.md §3): Spider with a Mah Jong deck.

Three suits of 1-9 with a Dragon as rank 10 build as in Spider (a Dragon goes on nothing);
Winds, and Flowers and Seasons, move one at a time among themselves, never four together at
a column's end by a move; four different Winds, or any four Flowers and Seasons, at the ends
of four columns may be taken off by the move ``x`` and those columns' letters.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import combinations, product
from types import MappingProxyType

from ..cards import CardSet
from ..moves import Move, column_letter
from ..position import Actions, Position
from ..variants import register_variant
from .base import AltDeckVariant

__all__ = ["Sparrow", "WINDS", "FLOWERS"]

SUITS = "bcm"
"""Bamboo, Coins, Characters."""
DRAGON = 10
WINDS = ("Ew", "Sw", "Ww", "Nw")
FLOWERS = tuple(f"{n}f" for n in range(1, 9))
"""Flowers 1-4 and Seasons 5-8: alike in play."""
COPIES = 4
"""Copies of each suit tile and Wind in the deck (Flowers and Seasons: one each)."""
SET_SIZE = 4
"""Cards in a set of Winds or of Flowers and Seasons."""
MOST_TOGETHER = 3
"""A move may not leave more Winds (or Flowers) than this lying together at a column's end."""
AT_END_VALUE = 15
"""The solver's value of each different Wind, and each Flower or Season (up to four), at a
column's end, in its evaluation's units: sets leave from the ends of four columns."""
BURIED_COST = 5
"""What each Wind or Flower buried under other tiles costs the solver's evaluation: it must
come to a column's end to leave."""
WIND_SET = "w"
FLOWER_SET = "f"

_SUIT_CARDS = [
    (f"{n}{s}" if n < DRAGON else f"D{s}", n, s) for s in SUITS for n in range(1, DRAGON + 1)
]
_WIND_CARDS = [(w, 0, WIND_SET) for w in WINDS]
_FLOWER_CARDS = [(f, 0, FLOWER_SET) for f in FLOWERS]
_NAMES = {WIND_SET: "Winds", FLOWER_SET: "Flowers and Seasons"}


@register_variant
class Sparrow(AltDeckVariant):
    """Sparrow: 144 tiles, 12 columns of 6, a stock of 72 (six deals of 12)."""

    base = "sparrow"
    cards = CardSet.build(_SUIT_CARDS + _WIND_CARDS + _FLOWER_CARDS)
    deck_tokens = tuple(t for t, _, _ in (_SUIT_CARDS + _WIND_CARDS) * COPIES + _FLOWER_CARDS)
    columns = 12
    first_deal = (6,) * 12
    stock_deals = (tuple(range(12)),) * 6
    has_extra_moves = True
    filters_moves = True
    run_length = DRAGON
    solver_deal_after = 12
    """A deal lays a tile on every column and buries the Winds at their ends: the positions
    after it rank far below those before, and a beam that has got every set it can before
    the next deal would move tiles about at the same best score without end. After 12
    layers without a better position the beam deals (10 fresh deals settled at 167,000
    positions: 3 without it, 8 with it, measured with Spider's weights)."""
    solver_weights = MappingProxyType({"suited": 13})
    """Tiles in suit weigh more than in Spider (13 against 10): a run moves as a unit only in
    suit. On 60 fresh deals (``solver-0`` to ``-59``) within 167,000 positions: 34 won with
    Spider's weights and a :data:`BURIED_COST` of 10, 46 with these weights, 45 with these
    and a :data:`BURIED_COST` of 5 (9 of the first ten, against 8)."""

    def __init__(self, options: frozenset[str] = frozenset()) -> None:
        suits = self.cards.suits
        self.blocker = tuple(s if s in (WIND_SET, FLOWER_SET) else "" for s in suits)
        """Each card's blocker class: ``w`` for a Wind, ``f`` for a Flower, else ``""``."""
        self.winds = tuple(self.cards.card(w) for w in WINDS)
        super().__init__(options)

    # -- building and moving ------------------------------------------------------------------

    def build_key(self, card: int) -> object:
        blocker = self.blocker[card]
        if blocker:
            return blocker
        rank = self.cards.rank[card]
        return rank if rank > 1 else None

    def wants(self, card: int) -> tuple[object, ...]:
        """A suit card wants any suit card one rank higher (a 9 any Dragon; a Dragon
        nothing); a Wind wants a Wind, a Flower a Flower."""
        blocker = self.blocker[card]
        if blocker:
            return (blocker,)
        rank = self.cards.rank[card]
        return (rank + 1,) if rank < DRAGON else ()

    def follows(self, upper: int, lower: int) -> bool:
        """A run is of one suit, a Dragon possibly at its head; Winds and Flowers make
        none."""
        if self.blocker[upper] or self.blocker[lower]:
            return False
        cards = self.cards
        return (
            cards.rank[lower] == cards.rank[upper] - 1 and cards.suits[lower] == cards.suits[upper]
        )

    def move_refused(self, board: Position, src: int, count: int, dst: int) -> str | None:
        """A Wind (or Flower) may not go onto a column whose end already has three of them
        lying together face up."""
        blocker = self.blocker[board.cols[src][-count]]
        if not blocker:
            return None
        target = board.cols[dst]
        classes = self.blocker
        together = 0
        for i in range(len(target) - 1, board.down[dst] - 1, -1):
            if classes[target[i]] != blocker:
                break
            together += 1
        if together >= MOST_TOGETHER:
            return (
                f"a move may not leave {MOST_TOGETHER + 1} {_NAMES[blocker]} together"
                f" at the end of column {column_letter(dst)}"
            )
        return None

    # -- what leaves: runs at once, sets by the move x ----------------------------------------

    def completed(self, column: Sequence[int], up: int) -> tuple[int, str] | None:
        """A ten-card run from a Dragon down to the 1 of its suit."""
        size = self.run_length
        end = column[-1]
        if up < size or self.cards.rank[end] != 1 or self.blocker[end]:
            return None
        if self.movable(column, up) < size:
            return None
        return size, self.cards.suits[end]

    def extra_moves(self, board: Position) -> Iterator[Move]:
        """``x`` with four columns (alphabetical) ending in the four different Winds, or in
        any four Flowers and Seasons."""
        wind_columns: dict[int, list[int]] = {w: [] for w in self.winds}
        flower_columns: list[int] = []
        for i, col in enumerate(board.cols):
            if not col:
                continue
            end = col[-1]
            blocker = self.blocker[end]
            if blocker == WIND_SET:
                wind_columns[end].append(i)
            elif blocker == FLOWER_SET:
                flower_columns.append(i)
        if all(wind_columns.values()):
            for chosen in product(*wind_columns.values()):
                yield Move("set", columns=tuple(sorted(chosen)))
        for chosen in combinations(flower_columns, SET_SIZE):
            yield Move("set", columns=chosen)

    def check_extra(self, board: Position, move: Move) -> str | None:
        ncols = len(board.cols)
        if move.kind != "set":
            if move.kind == "move":
                for c in (move.src, move.dst):
                    if not 0 <= c < ncols:
                        return (
                            f"there is no column {column_letter(c)}"
                            f" (columns a-{column_letter(ncols - 1)})"
                        )
            return f"{move.text()}: this variant has no such move"
        columns = move.columns
        if len(columns) != SET_SIZE:
            return f"a set is {SET_SIZE} cards from {SET_SIZE} columns"
        if list(columns) != sorted(set(columns)):
            return "a set's columns are written once each, in alphabetical order"
        for c in columns:
            if not 0 <= c < ncols:
                last = column_letter(ncols - 1)
                return f"there is no column {column_letter(c)} (columns a-{last})"
            if not board.cols[c]:
                return f"column {column_letter(c)} is empty"
        ends = [board.cols[c][-1] for c in columns]
        if sorted(ends) == sorted(self.winds):
            return None
        if all(self.blocker[e] == FLOWER_SET for e in ends):
            return None
        return (
            "a set is the four different Winds, or four Flowers and Seasons, at the ends of"
            " four columns"
        )

    def apply_extra(self, board: Position, move: Move, actions: Actions) -> Iterable[int]:
        token = self.blocker[board.cols[move.columns[0]][-1]]
        for c in move.columns:
            board.take(c, 1, actions)
        board.add_foundation(token, actions)
        return move.columns

    def solver_bonus(self, cols: Sequence[Sequence[int]], extra: Sequence[int]) -> int:
        """Sets of Winds and of Flowers and Seasons leave from the ends of four columns: each
        different Wind, and each Flower or Season (up to four), at a column's end counts."""
        blocker = self.blocker
        winds: set[int] = set()
        flowers = 0
        for col in cols:
            if col:
                end = col[-1]
                kind = blocker[end]
                if kind == WIND_SET:
                    winds.add(end)
                elif kind == FLOWER_SET:
                    flowers += 1
        return AT_END_VALUE * (len(winds) + min(flowers, SET_SIZE))

    def solver_column_bonus(self, col: Sequence[int], down: int) -> int:
        """Winds and Flowers buried under other cards cost: they must come to a column's
        end to leave."""
        blocker = self.blocker
        i = len(col) - 1
        while i >= 0 and blocker[col[i]]:
            i -= 1
        return -BURIED_COST * sum(1 for j in range(i) if blocker[col[j]])

    def foundation_tokens(self) -> frozenset[str]:
        return frozenset(SUITS + WIND_SET + FLOWER_SET)

    def set_count(self) -> int:
        return COPIES * len(SUITS) + COPIES + len(FLOWERS) // SET_SIZE
