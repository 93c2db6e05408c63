"""Starfish (alt-decks.md §4): Spider with six suits and Jokers.

Twelve runs of thirteen in six suits (spades, hearts, diamonds, clubs, ``r`` Stars, ``q``
Squids) build and leave as in Spider. Six Jokers start in the Troupe (an extra position
field: how many are there); the move ``*<column><depth><to>`` puts one in place of a face-up
card that is not a column's end, which goes alone onto another column; a Joker at a column's
end goes back to the Troupe at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from types import MappingProxyType

from ..cards import STANDARD_RANKS, CardSet
from ..errors import PositionError
from ..moves import Move, column_letter
from ..position import Actions, Position
from ..variants import register_variant
from .base import AltDeckVariant

__all__ = ["Starfish", "JOKER", "JOKERS"]

SUITS = "shdcrq"
JOKER_TOKEN = "@"
JOKERS = 6
"""Jokers in the game, all in the Troupe at the deal."""
COPIES = 2
JOKER_BELOW = 6
"""The solver's cost of each card below a Joker in a column (they must all move away before
it goes back to the Troupe), in its evaluation's units."""
JOKER_PAIRS = 12
"""What the solver's column score holds against the two pairs a Joker makes (each counts as
blocked), given back: a Joker's cost is the cards below it. Given back whole even where the
column's score counts only one of them (a Joker that is the first face-up card): measured,
giving back only the pairs counted settled fewer deals (8 of 10 fresh deals within 167,000
positions, against 9)."""

_SUIT_CARDS = [(f"{r}{s}", value, s) for s in SUITS for value, r in enumerate(STANDARD_RANKS, 1)]
_CARDS = CardSet.build([*_SUIT_CARDS, (JOKER_TOKEN, 0, "")])
JOKER = _CARDS.card(JOKER_TOKEN)
"""The Joker's card id."""


@register_variant
class Starfish(AltDeckVariant):
    """Starfish: 156 cards (Jokers apart), 12 columns of 6, a stock of 84 (seven deals of
    12); the Troupe's count is the position field after the foundation."""

    base = "starfish"
    cards = _CARDS
    deck_tokens = tuple(t for t, _, _ in _SUIT_CARDS) * COPIES
    columns = 12
    first_deal = (6,) * 12
    stock_deals = (tuple(range(12)),) * 7
    has_extra_moves = True
    has_settle_step = True
    extra_fields = ("troupe",)
    run_length = len(STANDARD_RANKS)

    # -- building and moving ------------------------------------------------------------------

    def build_key(self, card: int) -> object:
        rank = self.cards.rank[card]
        return rank if rank > 1 else None

    def wants(self, card: int) -> tuple[object, ...]:
        """A card wants any card one rank higher; a Joker nothing."""
        return () if card == JOKER else (self.cards.rank[card] + 1,)

    def follows(self, upper: int, lower: int) -> bool:
        """Same suit, one rank lower; a Joker breaks any run through it."""
        if upper == JOKER or lower == JOKER:
            return False
        cards = self.cards
        return (
            cards.rank[lower] == cards.rank[upper] - 1 and cards.suits[lower] == cards.suits[upper]
        )

    def completed(self, column: Sequence[int], up: int) -> tuple[int, str] | None:
        """Thirteen cards of one suit from King to Ace."""
        size = self.run_length
        if up < size or self.cards.rank[column[-1]] != 1 or self.movable(column, up) < size:
            return None
        return size, self.cards.suits[column[-1]]

    def foundation_tokens(self) -> frozenset[str]:
        return frozenset(SUITS)

    def set_count(self) -> int:
        return COPIES * len(SUITS)

    # -- the Troupe ----------------------------------------------------------------------------

    def initial_extra(self) -> list[int]:
        return [JOKERS]

    def format_extra(self, extra: Sequence[int]) -> list[str]:
        return [str(extra[0])]

    def parse_extra(self, fields: Sequence[str]) -> list[int]:
        """The Troupe field: a number of Jokers in decimal. Like the count of each card
        (rules.md §6), it is not checked against the deck's six: positions may be made up."""
        (text,) = fields
        if not (text.isascii() and text.isdigit()) or (len(text) > 1 and text[0] == "0"):
            raise PositionError(f"the Troupe field is a number of Jokers, not {text!r}")
        return [int(text)]

    def settle_step(self, board: Position, actions: Actions | None) -> int | None:
        """A Joker at a column's end goes back to the Troupe."""
        for i, col in enumerate(board.cols):
            if col and col[-1] == JOKER:
                board.take(i, 1, actions)
                board.set_extra(0, board.extra[0] + 1, actions)
                return i
        return None

    def unsettled(self, board: Position) -> str | None:
        for i, col in enumerate(board.cols):
            if col and col[-1] == JOKER:
                return (
                    f"column {column_letter(i)} ends in a Joker"
                    " (it goes back to the Troupe at once)"
                )
        return None

    # -- Joker moves -----------------------------------------------------------------------------

    def extra_moves(self, board: Position) -> Iterator[Move]:
        """``*<column><depth><to>`` for every face-up card above a column's end (not a
        Joker) and every other column it may go onto, while the Troupe has a Joker."""
        if board.extra[0] <= 0:
            return
        key = self.key
        want = self.want
        by_key: dict[object, list[int]] = {}
        empties: list[int] = []
        for j, col in enumerate(board.cols):
            if col:
                k = key[col[-1]]
                if k is not None:
                    by_key.setdefault(k, []).append(j)
            else:
                empties.append(j)
        for i, col in enumerate(board.cols):
            n = len(col)
            for depth in range(2, n - board.down[i] + 1):
                card = col[n - depth]
                if card == JOKER:
                    continue
                for w in want[card]:
                    for j in by_key.get(w, ()):
                        if j != i:
                            yield Move("joker", i, depth, j)
                for j in empties:
                    yield Move("joker", i, depth, j)

    def check_extra(self, board: Position, move: Move) -> str | None:
        ncols = len(board.cols)
        for c in (move.src, move.dst):
            if move.kind in ("move", "joker") and not 0 <= c < ncols:
                last = column_letter(ncols - 1)
                return f"there is no column {column_letter(c)} (columns a-{last})"
        if move.kind != "joker":
            return f"{move.text()}: this variant has no such move"
        src, depth, dst = move.src, move.count, move.dst
        if board.extra[0] <= 0:
            return "the Troupe has no Joker left"
        if src == dst:
            return "the replaced card goes to another column"
        col = board.cols[src]
        up = len(col) - board.down[src]
        if depth < 2:
            return "a Joker replaces a card above a column's end (depth 2 or more)"
        if depth > up:
            return f"column {column_letter(src)} has {up} face-up cards, not {depth}"
        card = col[-depth]
        if card == JOKER:
            return "a Joker does not replace a Joker"
        target = board.cols[dst]
        if target and self.key[target[-1]] not in self.want[card]:
            tokens = self.cards.tokens
            return (
                f"{tokens[card]} does not go onto {tokens[target[-1]]}"
                f" in column {column_letter(dst)}"
            )
        return None

    # -- the solver --------------------------------------------------------------------------

    solver_weights = MappingProxyType({"dealt": 40})
    """A deal is worth 40 to the solver: twelve cards dealt face up onto the column ends
    mostly lie blocked at first, and without this a beam would try every other move in a
    wide plateau of positions first."""

    def solver_column_bonus(self, col: Sequence[int], down: int) -> int:
        """A Joker in a column costs the cards that lie below it (they must all move away
        before it goes back to the Troupe), and nothing more."""
        if JOKER not in col:
            return 0
        n = len(col)
        cost = 0
        for i, card in enumerate(col):
            if card == JOKER:
                cost += JOKER_BELOW * (n - 1 - i) - JOKER_PAIRS
        return -cost

    def solver_skips(self, board: Position, move: Move) -> bool:
        """A Joker move whose card does not go onto the card it follows in suit (a Joker is
        spent to build a run, not only to move a card), or that takes the card off the card it
        follows in a run."""
        col = board.cols[move.src]
        i = len(col) - move.count
        card = col[i]
        nxt = self.next
        target = board.cols[move.dst]
        if not target or nxt[target[-1]] != card:
            return True
        return i > board.down[move.src] and nxt[col[i - 1]] == card

    def apply_extra(self, board: Position, move: Move, actions: Actions) -> Iterable[int]:
        col = board.cols[move.src]
        card = board.replace(move.src, len(col) - move.count, JOKER, actions)
        board.put(move.dst, [card], actions)
        board.set_extra(0, board.extra[0] - 1, actions)
        return (move.src, move.dst)
