"""Wizard's Tower (alt-decks.md §2): Spider with a Tarot deck.

Four suits of fourteen ranks build as in Spider; the 22 trumps build only on higher trumps,
move as a unit when they descend by exactly one, and leave for the Tower one at a time in
order, the Fool first, whenever the next one lies at a column's end (in any column). With
the option ``weave`` a reserve place, written ``z`` in moves, holds one card.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from ..cards import CardSet
from ..errors import FitError, NotationError, PositionError
from ..moves import Move, column_index, column_letter
from ..position import Actions, Position
from ..variants import register_variant
from .base import AltDeckVariant

__all__ = ["WizardsTower", "RESERVE", "TRUMPS"]

SUITS = "wcds"
"""Wands, Cups, Discs, Swords."""
RANKS = "A23456789TPNQK"
"""Ace to King, with Page (P) and Knight (N): 14 ranks."""
TRUMPS = 22
"""Trumps 0 (the Fool) to 21 (the World), written ``0t`` … ``21t``."""
TRUMP = "t"
RESERVE = column_index("z")
"""The reserve's place in moves: ``a1z`` puts a card there, ``z1c`` plays it back."""
EMPTY = -1
"""``board.extra[0]`` when the reserve is empty."""

_SUIT_CARDS = [(f"{r}{s}", value, s) for s in SUITS for value, r in enumerate(RANKS, start=1)]
_TRUMP_CARDS = [(f"{n}{TRUMP}", n, TRUMP) for n in range(TRUMPS)]


@register_variant
class WizardsTower(AltDeckVariant):
    """Wizard's Tower: 78 cards, 13 columns of 6, no stock; option ``weave`` adds the
    reserve (an extra position field: its card, or ``-``)."""

    base = "wizard"
    options_allowed = frozenset({"blind", "weave"})
    cards = CardSet.build(_SUIT_CARDS + _TRUMP_CARDS)
    deck_tokens = tuple(t for t, _, _ in _SUIT_CARDS + _TRUMP_CARDS)
    columns = 13
    first_deal = (6,) * 13
    stock_deals = ()
    has_settle_step = True
    run_length = len(RANKS)

    def __init__(self, options: frozenset[str] = frozenset()) -> None:
        self.weave = "weave" in options
        self.has_extra_moves = self.weave
        self.extra_fields = ("reserve",) if self.weave else ()
        self.trump = tuple(self.cards.card(f"{n}{TRUMP}") for n in range(TRUMPS))
        """The card of each trump number."""
        self.is_trump = tuple(s == TRUMP for s in self.cards.suits)
        super().__init__(options)

    # -- building and moving ------------------------------------------------------------------

    def build_key(self, card: int) -> object:
        rank = self.cards.rank[card]
        if self.is_trump[card]:
            return (TRUMP, rank)
        return rank if rank > 1 else None

    def wants(self, card: int) -> tuple[object, ...]:
        """A suit card wants a suit card one rank higher; a trump, any higher trump."""
        rank = self.cards.rank[card]
        if self.is_trump[card]:
            return tuple((TRUMP, higher) for higher in range(rank + 1, TRUMPS))
        return (rank + 1,)

    def follows(self, upper: int, lower: int) -> bool:
        """Suit cards: one rank lower, same suit. Trumps: one number lower."""
        cards = self.cards
        if cards.rank[lower] != cards.rank[upper] - 1:
            return False
        if self.is_trump[upper] or self.is_trump[lower]:
            return self.is_trump[upper] and self.is_trump[lower]
        return cards.suits[lower] == cards.suits[upper]

    # -- what leaves ---------------------------------------------------------------------------

    def completed(self, column: Sequence[int], up: int) -> tuple[int, str] | None:
        """A fourteen-card run of one suit from King to Ace."""
        size = self.run_length
        end = column[-1]
        if up < size or self.cards.rank[end] != 1 or self.is_trump[end]:
            return None
        if self.movable(column, up) < size:
            return None
        return size, self.cards.suits[end]

    def _next_trump_column(self, board: Position) -> int | None:
        number = board.foundation.count(TRUMP)
        if number >= TRUMPS:
            return None
        trump = self.trump[number]
        for i, col in enumerate(board.cols):
            if col and col[-1] == trump and board.down[i] < len(col):
                return i
        return None

    def settle_step(self, board: Position, actions: Actions | None) -> int | None:
        """The Tower: the next trump (as many ``t`` as the foundation holds), when it lies at
        a column's end, leaves at once as one ``t``."""
        i = self._next_trump_column(board)
        if i is not None:
            board.to_foundation(i, 1, TRUMP, actions)
        return i

    def unsettled(self, board: Position) -> str | None:
        i = self._next_trump_column(board)
        if i is None:
            return None
        token = self.cards.tokens[board.cols[i][-1]]
        return (
            f"column {column_letter(i)} ends in {token},"
            " the next trump of the Tower (it leaves at once)"
        )

    def foundation_tokens(self) -> frozenset[str]:
        return frozenset(SUITS + TRUMP)

    def set_count(self) -> int:
        return len(SUITS) + TRUMPS

    def is_won(self, board: Position) -> bool:
        """Every card has left: the tableau (and the reserve) are empty."""
        return not any(board.cols) and not (self.weave and board.extra[0] != EMPTY)

    # -- weave: the reserve ----------------------------------------------------------------------

    def initial_extra(self) -> list[int]:
        return [EMPTY] if self.weave else []

    def format_extra(self, extra: Sequence[int]) -> list[str]:
        return ["-" if extra[0] == EMPTY else self.cards.tokens[extra[0]]]

    def parse_extra(self, fields: Sequence[str]) -> list[int]:
        (text,) = fields
        if text == "-":
            return [EMPTY]
        try:
            cards = self.cards.parse(text, what="the reserve")
        except NotationError as exc:
            if "no card" in str(exc):
                raise FitError(f"the reserve: {exc}") from None
            raise PositionError(str(exc)) from None
        if len(cards) != 1 or cards[0] == 0:
            raise PositionError(f"the reserve holds one known card or '-', not {text!r}")
        return cards

    def extra_moves(self, board: Position) -> Iterator[Move]:
        """``<column>1z`` for each non-empty column while the reserve is empty; otherwise
        ``z1<column>`` for each column the reserve's card may go to."""
        card = board.extra[0]
        if card == EMPTY:
            for i, col in enumerate(board.cols):
                if col:
                    yield Move.column_move(i, 1, RESERVE)
            return
        key = self.key
        want = self.want[card]
        for j, col in enumerate(board.cols):
            if not col or key[col[-1]] in want:
                yield Move.column_move(RESERVE, 1, j)

    def check_extra(self, board: Position, move: Move) -> str | None:
        ncols = len(board.cols)
        if move.kind != "move":
            return f"{move.text()}: this variant has no such move"
        src, count, dst = move.src, move.count, move.dst
        if dst == RESERVE and 0 <= src < ncols:
            if count != 1:
                return "the reserve holds one card"
            if board.extra[0] != EMPTY:
                return "the reserve already holds a card"
            if not board.cols[src]:
                return f"column {column_letter(src)} is empty"
            return None
        if src == RESERVE and 0 <= dst < ncols:
            card = board.extra[0]
            if card == EMPTY:
                return "the reserve is empty"
            if count != 1:
                return "the reserve holds one card"
            target = board.cols[dst]
            if target and self.key[target[-1]] not in self.want[card]:
                tokens = self.cards.tokens
                return (
                    f"{tokens[card]} does not go onto {tokens[target[-1]]}"
                    f" in column {column_letter(dst)}"
                )
            return None
        for c in (src, dst):
            if not 0 <= c < ncols:
                return (
                    f"there is no column {column_letter(c)}"
                    f" (columns a-{column_letter(ncols - 1)}, and z for the reserve)"
                )
        return "a move goes to another column"

    def apply_extra(self, board: Position, move: Move, actions: Actions) -> Iterable[int]:
        if move.dst == RESERVE:
            (card,) = board.take(move.src, 1, actions)
            board.set_extra(0, card, actions)
            return (move.src,)
        card = board.extra[0]
        board.set_extra(0, EMPTY, actions)
        board.put(move.dst, [card], actions)
        return (move.dst,)
