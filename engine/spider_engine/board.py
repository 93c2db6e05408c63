"""The board: one game's state, with ``push``/``pop`` and legal-move generation.

State is kept in plain lists of ints: ``cols[i]`` is column i's cards from the deepest to
its end, ``down[i]`` how many of them (from the deepest) are face down, ``stock`` the stock's
cards in deal order with ``stock_pos`` the next to deal, ``foundation`` the tokens of the
sets that have left. A card that the board does not know is :data:`~.cards.UNKNOWN`.

``extra`` holds the variant's extra state (ints, as :attr:`Variant.extra_fields` names them;
empty for Spider).

``push(move)`` checks legality, applies the move, settles the position (rules.md §3 rules
3, 4 and 7) and keeps a small undo record; ``pop()`` takes back the last push with all it
caused. Legality checking is separate from applying: :meth:`Board.is_legal` asks, and the
unchecked :meth:`Board.push_unchecked` is for searches that generated the move themselves.

Variants with hooks beyond building and runs (``Variant.plain`` false) take a second path
through the same methods: their extra moves, move filter and settle step are called there,
and the changes they make go through the edit methods (:meth:`Board.take`, :meth:`Board.put`,
:meth:`Board.replace`, :meth:`Board.to_foundation`, :meth:`Board.add_foundation`,
:meth:`Board.set_extra`), each recording how to undo itself into the move's ``actions``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, TypeAlias

from .cards import UNKNOWN
from .deal import lay_out, shuffle
from .errors import HiddenCardError, IllegalMoveError
from .moves import Move, column_letter
from .variants import Variant, find_variant

__all__ = ["Actions", "Board", "LegalMoves"]

_DEAL = Move.deal()

Actions: TypeAlias = list[tuple[int, int, Any]]
"""The undo record of one move: what happened, in order (replayed backwards by ``pop``)."""

# Undo actions, recorded in the order they happened.
_TURN_UP = 0  # (0, column, [])
_LEFT = 1  # (1, column, cards that left to the foundation, one token)
_TAKE = 2  # (2, column, cards taken from its end)
_PUT = 3  # (3, column, how many cards were put on its end)
_REPLACE = 4  # (4, column, (index, card that was there))
_EXTRA = 5  # (5, index in board.extra, value that was there)
_FOUND = 6  # (6, -1, None): a foundation token added
_VARIANT_MOVE = 7  # (7, -1, None): first action of a variant's extra move


class LegalMoves:
    """The legal moves of a board: iterate, test membership, count, or test for any."""

    __slots__ = ("_board",)

    def __init__(self, board: Board) -> None:
        self._board = board

    def __iter__(self) -> Iterator[Move]:
        return self._board.generate_moves()

    def __contains__(self, move: object) -> bool:
        return isinstance(move, Move) and self._board.is_legal(move)

    def __bool__(self) -> bool:
        return any(True for _ in self._board.generate_moves())

    def __len__(self) -> int:
        return self.count()

    def count(self) -> int:
        return sum(1 for _ in self._board.generate_moves())

    def texts(self) -> list[str]:
        """The moves' texts, sorted by code point as the spec prints them."""
        return sorted(m.text() for m in self._board.generate_moves())

    def __repr__(self) -> str:
        return f"<LegalMoves ({' '.join(self.texts())})>"


class Board:
    """A game in play: a position of a variant, with an undo stack.

    Create one with :meth:`Board.deal` (a seeded deal, rules.md §4) or
    :meth:`Board.from_text` (position notation, §6).
    """

    __slots__ = ("variant", "cols", "down", "stock", "stock_pos", "foundation", "extra", "_stack")

    def __init__(
        self,
        variant: Variant,
        cols: list[list[int]],
        down: list[int],
        stock: list[int],
        foundation: list[str] | None = None,
        *,
        stock_pos: int = 0,
        extra: list[int] | None = None,
    ) -> None:
        self.variant = variant
        self.cols = cols
        self.down = down
        self.stock = stock
        self.stock_pos = stock_pos
        self.foundation: list[str] = list(foundation or [])
        self.extra: list[int] = variant.initial_extra() if extra is None else list(extra)
        self._stack: list[tuple[Move, Actions | None]] = []

    # -- making boards ----------------------------------------------------------------------

    @classmethod
    def deal(cls, variant: str | Variant, seed: str | int) -> Board:
        """The seeded deal of ``seed`` (text; an integer is written in decimal), settled."""
        v = find_variant(variant) if isinstance(variant, str) else variant
        cards = shuffle(v.canonical_deck(), str(seed))
        cols, stock = lay_out(cards, v.first_deal)
        if v.open:
            down = [0] * len(cols)
        else:
            down = [max(len(c) - 1, 0) for c in cols]
        board = cls(v, cols, down, stock)
        for i in range(len(cols)):
            board._settle(i, None)
        if v.has_settle_step:
            board._settle_more(None)
        return board

    @classmethod
    def from_text(cls, text: str) -> Board:
        """Parse position notation (a full position or a view); raises a
        :class:`~.errors.NotationError` subclass for text that is malformed, does not fit its
        variant or is not settled."""
        from .notation import parse_position

        return parse_position(text)

    def copy(self, *, stack: bool = False) -> Board:
        """An independent copy of the position (with the undo stack when ``stack``)."""
        board = Board(
            self.variant,
            [list(c) for c in self.cols],
            list(self.down),
            self.stock,
            self.foundation,
            stock_pos=self.stock_pos,
            extra=self.extra,
        )
        if stack:
            board._stack = [(m, None if a is None else list(a)) for m, a in self._stack]
        return board

    # -- text -------------------------------------------------------------------------------

    def text(self) -> str:
        """The position in the spec's notation."""
        from .notation import format_position

        return format_position(self)

    def view(self) -> Board:
        """The player's view: every face-down and stock card unknown (no undo stack)."""
        board = self.copy()
        for col, down in zip(board.cols, board.down, strict=True):
            col[:down] = [UNKNOWN] * down
        board.stock = [UNKNOWN] * self.stock_left()
        board.stock_pos = 0
        return board

    def view_text(self) -> str:
        """The text of :meth:`view`."""
        return self.texts()[1]

    def texts(self) -> tuple[str, str]:
        """:meth:`text` and :meth:`view_text` at once (the face-up cards formatted once)."""
        from .notation import format_texts

        return format_texts(self)

    def is_view(self) -> bool:
        """Whether any card of the position is unknown."""
        if any(c == UNKNOWN for c in self.stock[self.stock_pos :]):
            return True
        return any(UNKNOWN in col[:down] for col, down in zip(self.cols, self.down, strict=True))

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return f"Board.from_text({self.text()!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Board) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def key(self) -> tuple[object, ...]:
        """A hashable key of the position (not of its history)."""
        key = (
            self.variant.id,
            tuple(tuple(c) for c in self.cols),
            tuple(self.down),
            tuple(self.stock[self.stock_pos :]),
            tuple(self.foundation),
        )
        if self.extra:
            return (*key, tuple(self.extra))
        return key

    # -- questions --------------------------------------------------------------------------

    def stock_left(self) -> int:
        return len(self.stock) - self.stock_pos

    def deals_left(self) -> int:
        """How many deals the stock still holds."""
        v = self.variant
        return len(v.stock_deals) - v.deal_at[self.stock_left()]

    def face_up(self, column: int) -> list[int]:
        return self.cols[column][self.down[column] :]

    @property
    def legal_moves(self) -> LegalMoves:
        return LegalMoves(self)

    def is_won(self) -> bool:
        return self.variant.is_won(self)

    def is_stuck(self) -> bool:
        """No legal move left and not won."""
        if self.stock_pos < len(self.stock) and self.variant.may_deal(self):
            return False  # the deal is legal (no variant filters it): not stuck, quickly
        return not self.is_won() and not self.legal_moves

    def history(self) -> list[Move]:
        """The moves pushed so far, oldest first."""
        return [m for m, _ in self._stack]

    def suited_score(self) -> int:
        """rules.md §7 ``suited``: each face-up card on a face-up card of its suit one rank
        higher, plus 12 for each set in the foundation."""
        nxt = self.variant.next
        score = 12 * len(self.foundation)
        for col, down in zip(self.cols, self.down, strict=True):
            for i in range(down + 1, len(col)):
                if nxt[col[i - 1]] == col[i]:
                    score += 1
        return score

    def classic_score(self, actions: int) -> int:
        """rules.md §7 ``classic``: 500, minus one per move, deal or undo made (``actions``),
        plus 100 per set in the foundation (with ``keep``, per complete run at an end)."""
        sets = len(self.foundation)
        complete = getattr(self.variant, "complete_runs_at_ends", None)
        if self.variant.keep and complete is not None:
            sets += complete(self)
        return 500 - actions + 100 * sets

    # -- move generation --------------------------------------------------------------------

    def generate_moves(self) -> Iterator[Move]:
        """An iterator over every legal move (unordered; sort texts to print them)."""
        if self.variant.plain:
            return self._column_moves()
        return self._hooked_moves()

    def _hooked_moves(self) -> Iterator[Move]:
        v = self.variant
        if v.filters_moves:
            refused = v.move_refused
            for move in self._column_moves():
                if move.kind == "deal" or refused(self, move.src, move.count, move.dst) is None:
                    yield move
        else:
            yield from self._column_moves()
        if v.has_extra_moves:
            yield from v.extra_moves(self)

    def _column_moves(self) -> Iterator[Move]:
        """Column moves by building and run rules, and the deal."""
        v = self.variant
        cols = self.cols
        down = self.down
        key = v.key
        want = v.want
        movable = v.movable
        by_key: dict[object, list[int]] = {}
        empties: list[int] = []
        for i, col in enumerate(cols):
            if col:
                k = key[col[-1]]
                if k is not None:
                    lst = by_key.get(k)
                    if lst is None:
                        by_key[k] = [i]
                    else:
                        lst.append(i)
            else:
                empties.append(i)
        new = Move.column_move
        for i, col in enumerate(cols):
            n = len(col)
            if not n:
                continue
            run = movable(col, n - down[i])
            for k in range(1, run + 1):
                card = col[n - k]
                for w in want[card]:
                    dests = by_key.get(w)
                    if dests:
                        for j in dests:
                            if j != i:
                                yield new(i, k, j)
                if empties and k < n:
                    for j in empties:
                        yield new(i, k, j)
        if self.stock_pos < len(self.stock) and v.may_deal(self):
            yield _DEAL

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` is legal here (a move onto a view's unknown card included)."""
        if move.kind == "deal":
            return self.stock_pos < len(self.stock) and self.variant.may_deal(self)
        v = self.variant
        if move.kind != "move":
            return v.has_extra_moves and v.check_extra(self, move) is None
        cols = self.cols
        src, count, dst = move.src, move.count, move.dst
        ncols = len(cols)
        if not (0 <= src < ncols and 0 <= dst < ncols):
            return v.has_extra_moves and v.check_extra(self, move) is None
        if src == dst:
            return False
        col = cols[src]
        n = len(col)
        if count < 1 or count > v.movable(col, n - self.down[src]):
            return False
        target = cols[dst]
        if not target:
            legal = count < n
        else:
            legal = v.key[target[-1]] in v.want[col[n - count]]
        if legal and v.filters_moves:
            return v.move_refused(self, src, count, dst) is None
        return legal

    def explain_illegal(self, move: Move) -> str:
        """Why ``move`` is not legal here, in one line."""
        v = self.variant
        if move.kind == "deal":
            if not self.stock_left():
                return "the stock is empty"
            return "the stock may not deal while a column is empty"
        cols = self.cols
        src, count, dst = move.src, move.count, move.dst
        if v.has_extra_moves and (
            move.kind != "move" or not (0 <= src < len(cols) and 0 <= dst < len(cols))
        ):
            return v.check_extra(self, move) or f"{move.text()} is legal"
        if move.kind != "move":
            return f"{move.text()}: this variant has no such move"
        for c in (src, dst):
            if not 0 <= c < len(cols):
                return f"there is no column {column_letter(c)} (columns a-{column_letter(len(cols) - 1)})"
        if src == dst:
            return "a move goes to another column"
        col = cols[src]
        run = v.movable(col, len(col) - self.down[src])
        if not col:
            return f"column {column_letter(src)} is empty"
        if count > run:
            return f"column {column_letter(src)} has a movable run of {run}, not {count}"
        if count < 1:
            return "a move takes at least one card"
        target = cols[dst]
        if not target:
            if count >= len(col):
                return (
                    f"{move.text()} would move all of column {column_letter(src)}"
                    " into an empty column"
                )
        elif v.key[target[-1]] not in v.want[col[-count]]:
            return (
                f"{v.cards.tokens[col[-count]]} does not go onto {v.cards.tokens[target[-1]]}"
                f" in column {column_letter(dst)}"
            )
        if v.filters_moves:
            reason = v.move_refused(self, src, count, dst)
            if reason is not None:
                return reason
        return f"{move.text()} is legal"

    # -- push and pop -----------------------------------------------------------------------

    def push(self, move: Move) -> None:
        """Apply a legal move and settle; raises :class:`IllegalMoveError` (and changes
        nothing) when it is not legal, :class:`HiddenCardError` (and changes nothing) when
        it would turn up or deal a card this view does not know."""
        if not self.is_legal(move):
            raise IllegalMoveError(f"illegal move {move.text()}: {self.explain_illegal(move)}")
        self.push_unchecked(move)

    def push_text(self, text: str) -> Move:
        """Parse and push a move; returns it."""
        move = Move.from_text(text)
        self.push(move)
        return move

    def push_unchecked(self, move: Move) -> None:
        """Apply a move known to be legal (generated here), and settle; raises
        :class:`HiddenCardError` (and changes nothing) when it would turn up or deal a card
        this view does not know."""
        if not self.variant.plain:
            self._push_hooked(move)
            return
        actions: Actions = []
        if move.kind == "deal":
            v = self.variant
            size = len(v.stock_deals[v.deal_at[self.stock_left()]])
            if UNKNOWN in self.stock[self.stock_pos : self.stock_pos + size]:
                raise HiddenCardError(
                    "the view does not know the stock's cards: only the full position can deal"
                )
        try:
            if move.kind == "deal":
                self._deal(actions)
            else:
                src, count, dst = move.src, move.count, move.dst
                source = self.cols[src]
                moved = source[-count:]
                del source[-count:]
                self.cols[dst].extend(moved)
                self._settle(src, actions)
                self._settle(dst, actions)
        except HiddenCardError:
            self._undo(move, actions)
            raise
        self._stack.append((move, actions or None))

    def _push_hooked(self, move: Move) -> None:
        """``push_unchecked`` for variants with extra moves, a move filter or a settle step."""
        v = self.variant
        actions: Actions = []
        kind = move.kind
        ncols = len(self.cols)
        if kind == "deal":
            size = len(v.stock_deals[v.deal_at[self.stock_left()]])
            if UNKNOWN in self.stock[self.stock_pos : self.stock_pos + size]:
                raise HiddenCardError(
                    "the view does not know the stock's cards: only the full position can deal"
                )
        try:
            if kind == "deal":
                self._deal(actions)
            elif kind == "move" and 0 <= move.src < ncols and 0 <= move.dst < ncols:
                src, count, dst = move.src, move.count, move.dst
                source = self.cols[src]
                moved = source[-count:]
                del source[-count:]
                self.cols[dst].extend(moved)
                self._settle(src, actions)
                self._settle(dst, actions)
            else:
                actions.append((_VARIANT_MOVE, -1, None))
                for i in v.apply_extra(self, move, actions):
                    self._settle(i, actions)
            if v.has_settle_step:
                self._settle_more(actions)
        except HiddenCardError:
            self._undo(move, actions)
            raise
        self._stack.append((move, actions or None))

    def pop(self) -> Move:
        """Take back the last move with all it caused; returns it. IndexError when there is
        nothing to take back."""
        move, actions = self._stack.pop()
        self._undo(move, actions or [])
        return move

    def _undo(self, move: Move, actions: Actions) -> None:
        cols = self.cols
        variant_move = False
        for kind, i, data in reversed(actions):
            if kind == _TURN_UP:
                self.down[i] += 1
            elif kind == _LEFT:
                cols[i].extend(data)
                self.foundation.pop()
            elif kind == _VARIANT_MOVE:
                variant_move = True
            else:
                self._undo_edit(kind, i, data)
        if variant_move:
            return
        if move.kind == "deal":
            v = self.variant
            # the stock size after the deal says which deal it was
            targets = v.stock_deals[v.deal_at[self.stock_left()] - 1]
            for j in targets:
                cols[j].pop()
            self.stock_pos -= len(targets)
        else:
            dest = cols[move.dst]
            moved = dest[-move.count :]
            del dest[-move.count :]
            cols[move.src].extend(moved)

    def _undo_edit(self, kind: int, i: int, data: Any) -> None:
        if kind == _TAKE:
            self.cols[i].extend(data)
        elif kind == _PUT:
            del self.cols[i][-data:]
        elif kind == _REPLACE:
            index, card = data
            self.cols[i][index] = card
        elif kind == _EXTRA:
            self.extra[i] = data
        elif kind == _FOUND:
            self.foundation.pop()

    def _deal(self, actions: Actions) -> None:
        v = self.variant
        targets = v.stock_deals[v.deal_at[self.stock_left()]]
        pos = self.stock_pos
        cards = self.stock[pos : pos + len(targets)]
        cols = self.cols
        for j, card in zip(targets, cards, strict=True):
            cols[j].append(card)
        self.stock_pos = pos + len(targets)
        for j in targets:
            self._settle(j, actions)

    def _settle_more(self, actions: Actions | None) -> None:
        """Run the variant's settle step until it no longer acts, settling by rules 3 and 4
        each column it changes."""
        step = self.variant.settle_step
        while True:
            i = step(self, actions)
            if i is None:
                return
            self._settle(i, actions)

    def _settle(self, i: int, actions: Actions | None) -> None:
        """Apply rules 3 and 4 to column ``i`` until neither acts."""
        v = self.variant
        col = self.cols[i]
        while col:
            down = self.down[i]
            n = len(col)
            if down == n:
                if col[-1] == UNKNOWN:
                    raise HiddenCardError(
                        f"the view does not know the card that turns up in column {column_letter(i)}"
                    )
                self.down[i] = down - 1
                if actions is not None:
                    actions.append((_TURN_UP, i, []))
                continue
            if v.keep:
                return
            done = v.completed(col, n - down)
            if done is None:
                return
            size, token = done
            left = col[-size:]
            del col[-size:]
            self.foundation.append(token)
            if actions is not None:
                actions.append((_LEFT, i, left))

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
            actions.append((_TAKE, column, cards))
        return cards

    def put(self, column: int, cards: list[int], actions: Actions | None) -> None:
        """Put ``cards`` face up on the end of ``column``."""
        self.cols[column].extend(cards)
        if actions is not None and cards:
            actions.append((_PUT, column, len(cards)))

    def replace(self, column: int, index: int, card: int, actions: Actions | None) -> int:
        """Put ``card`` in place of the card at ``index`` of ``column`` (from the deepest);
        returns the card it replaced."""
        col = self.cols[column]
        old = col[index]
        col[index] = card
        if actions is not None:
            actions.append((_REPLACE, column, (index, old)))
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
            actions.append((_LEFT, column, cards))
        return cards

    def add_foundation(self, token: str, actions: Actions | None) -> None:
        """Add a set written ``token`` to the foundation (its cards taken off by
        :meth:`take`)."""
        self.foundation.append(token)
        if actions is not None:
            actions.append((_FOUND, -1, None))

    def set_extra(self, index: int, value: int, actions: Actions | None) -> None:
        """Set ``extra[index]`` to ``value``."""
        if actions is not None:
            actions.append((_EXTRA, index, self.extra[index]))
        self.extra[index] = value
