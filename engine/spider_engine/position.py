"""Where the cards of one game lie, and the undoable edits a variant's hooks make.

A :class:`Position` is plain lists of ints: ``cols[i]`` is column i's cards from the deepest
to its end, ``down[i]`` how many of them (from the deepest) are face down, ``stock`` the
stock's cards in deal order with ``stock_pos`` the next to deal, ``foundation`` the tokens of
the sets that have left, ``extra`` the variant's extra state (ints, as
:attr:`~.variants.Variant.extra_fields` names them; empty for Spider). A card that the
position does not know is :data:`~.cards.UNKNOWN`.

It knows no rules: :class:`~.board.Board` adds the variant, legality, ``push`` and ``pop``.
Variant hooks see the board as a position: they read these lists and change them only
through the edit methods (:meth:`Position.take`, :meth:`Position.put`,
:meth:`Position.replace`, :meth:`Position.to_foundation`, :meth:`Position.add_foundation`,
:meth:`Position.set_extra`), each of which records how to undo itself into the move's
:data:`Actions`; :meth:`Position.undo_actions` replays such a record backwards.
"""

from __future__ import annotations

from typing import Any, TypeAlias

from .cards import UNKNOWN

__all__ = [
    "EXTRA",
    "FOUND",
    "LEFT",
    "PUT",
    "REPLACE",
    "TAKE",
    "TURN_UP",
    "VARIANT_MOVE",
    "Actions",
    "Position",
]

Actions: TypeAlias = list[tuple[int, int, Any]]
"""The undo record of one move: what happened, in order (replayed backwards by ``pop``)."""

# The kinds of undo actions, as (kind, column or index, data).
TURN_UP = 0  # (0, column, []): the column's deepest face-up card turned up
LEFT = 1  # (1, column, cards that left to the foundation, one token)
TAKE = 2  # (2, column, cards taken from its end)
PUT = 3  # (3, column, how many cards were put on its end)
REPLACE = 4  # (4, column, (index, card that was there))
EXTRA = 5  # (5, index in position.extra, value that was there)
FOUND = 6  # (6, -1, None): a foundation token added
VARIANT_MOVE = 7  # (7, -1, None): first action of a variant's extra move


class Position:
    """The cards of a game where they lie (see the module's docstring), without rules."""

    __slots__ = ("cols", "down", "stock", "stock_pos", "foundation", "extra")

    def __init__(
        self,
        cols: list[list[int]],
        down: list[int],
        stock: list[int],
        foundation: list[str] | None = None,
        *,
        stock_pos: int = 0,
        extra: list[int] | None = None,
    ) -> None:
        self.cols = cols
        self.down = down
        self.stock = stock
        self.stock_pos = stock_pos
        self.foundation: list[str] = list(foundation or [])
        self.extra: list[int] = list(extra or [])

    # -- questions --------------------------------------------------------------------------

    def stock_left(self) -> int:
        return len(self.stock) - self.stock_pos

    def face_up(self, column: int) -> list[int]:
        return self.cols[column][self.down[column] :]

    def is_view(self) -> bool:
        """Whether any card of the position is unknown."""
        if any(c == UNKNOWN for c in self.stock[self.stock_pos :]):
            return True
        return any(UNKNOWN in col[:down] for col, down in zip(self.cols, self.down, strict=True))

    # -- edits for variant hooks ---------------------------------------------------------------
    # Each records how to undo itself into ``actions`` (None: not recorded, while dealing).

    def take(self, column: int, count: int, actions: Actions | None) -> list[int]:
        """Remove the last ``count`` (face-up, at least one) cards of ``column`` and return
        them."""
        if count < 1:
            raise ValueError("take() takes at least one card")
        col = self.cols[column]
        cards = col[-count:]
        del col[-count:]
        if actions is not None:
            actions.append((TAKE, column, cards))
        return cards

    def put(self, column: int, cards: list[int], actions: Actions | None) -> None:
        """Put ``cards`` face up on the end of ``column``."""
        self.cols[column].extend(cards)
        if actions is not None and cards:
            actions.append((PUT, column, len(cards)))

    def replace(self, column: int, index: int, card: int, actions: Actions | None) -> int:
        """Put ``card`` in place of the card at ``index`` of ``column`` (from the deepest);
        returns the card it replaced."""
        col = self.cols[column]
        old = col[index]
        col[index] = card
        if actions is not None:
            actions.append((REPLACE, column, (index, old)))
        return old

    def to_foundation(
        self, column: int, count: int, token: str, actions: Actions | None
    ) -> list[int]:
        """Move the last ``count`` cards of ``column`` to the foundation as one set written
        ``token``; returns them."""
        if count < 1:
            raise ValueError("to_foundation() takes at least one card")
        col = self.cols[column]
        cards = col[-count:]
        del col[-count:]
        self.foundation.append(token)
        if actions is not None:
            actions.append((LEFT, column, cards))
        return cards

    def add_foundation(self, token: str, actions: Actions | None) -> None:
        """Add a set written ``token`` to the foundation (its cards taken off by
        :meth:`take`)."""
        self.foundation.append(token)
        if actions is not None:
            actions.append((FOUND, -1, None))

    def set_extra(self, index: int, value: int, actions: Actions | None) -> None:
        """Set ``extra[index]`` to ``value``."""
        if actions is not None:
            actions.append((EXTRA, index, self.extra[index]))
        self.extra[index] = value

    # -- undo -------------------------------------------------------------------------------

    def undo_actions(self, actions: Actions) -> bool:
        """Undo every action of ``actions``, the last first; returns whether the record is of
        a variant's extra move (which its actions undo whole: the caller then has no move
        of its own to take back)."""
        cols = self.cols
        variant_move = False
        for kind, i, data in reversed(actions):
            if kind == TURN_UP:
                self.down[i] += 1
            elif kind == LEFT:
                cols[i].extend(data)
                self.foundation.pop()
            elif kind == VARIANT_MOVE:
                variant_move = True
            elif kind == TAKE:
                cols[i].extend(data)
            elif kind == PUT:
                del cols[i][-data:]
            elif kind == REPLACE:
                index, card = data
                cols[i][index] = card
            elif kind == EXTRA:
                self.extra[i] = data
            elif kind == FOUND:
                self.foundation.pop()
        return variant_move
