"""The board: one game's position in a variant, with ``push``/``pop`` and legal moves.

A :class:`Board` is a :class:`~.position.Position` (where the cards lie, in plain lists of
ints) of a :class:`~.variants.Variant`, whose rules it plays, with an undo stack.

``push(move)`` checks legality, applies the move, settles the position (rules.md §3 rules
3, 4 and 7) and keeps a small undo record; ``pop()`` takes back the last push with all it
caused. Legality checking is separate from applying: :meth:`Board.is_legal` asks, and the
unchecked :meth:`Board.push_unchecked` is for searches that generated the move themselves.

Variants with hooks beyond building and runs (``Variant.plain`` false) take a second path
through the same methods: their extra moves, move filter and settle step are called there,
and the changes they make go through the position's edit methods, each recording how to
undo itself into the move's ``actions``.

Text: :meth:`Board.from_text`, :meth:`Board.text` and :meth:`Board.view_text` convert to and
from the position notation of rules.md §6, which :mod:`~.notation` reads and writes.
"""

from __future__ import annotations

from collections.abc import Iterator

from .cards import UNKNOWN
from .deal import lay_out, shuffle
from .errors import HiddenCardError, IllegalMoveError
from .legal import explain_illegal, generate_moves, is_legal
from .moves import Move, column_letter
from .notation import format_texts, read_position
from .position import LEFT, TURN_UP, VARIANT_MOVE, Actions, Position
from .variants import Variant, find_variant

__all__ = ["Actions", "Board", "LegalMoves", "format_position", "parse_position"]


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


class Board(Position):
    """A game in play: a position of a variant, with an undo stack.

    Create one with :meth:`Board.deal` (a seeded deal, rules.md §4) or
    :meth:`Board.from_text` (position notation, §6).
    """

    __slots__ = ("variant", "_stack")

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
        # Position's fields, set here rather than through its __init__: boards are copied
        # often (views, searches), and the call would add a sixth to the time of a copy.
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
        variant, p = read_position(text)
        return cls(variant, p.cols, p.down, p.stock, p.foundation, extra=p.extra)

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
        return format_texts(self.variant, self, view=False)[0]

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
        return format_texts(self.variant, self)

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

    def deals_left(self) -> int:
        """How many deals the stock still holds."""
        v = self.variant
        return len(v.stock_deals) - v.deal_at[self.stock_left()]

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
        higher, plus 12 for each set in the foundation (:meth:`Variant.suited`)."""
        return self.variant.suited(self)

    def classic_score(self, actions: int) -> int:
        """rules.md §7 ``classic``: 500, minus one per move, deal or undo made (``actions``),
        plus 100 per set in the foundation (with ``keep``, per complete run at an end)."""
        sets = len(self.foundation)
        complete = getattr(self.variant, "complete_runs_at_ends", None)
        if self.variant.keep and complete is not None:
            sets += complete(self)
        return 500 - actions + 100 * sets

    # -- legality (legal.py) -----------------------------------------------------------------

    def generate_moves(self) -> Iterator[Move]:
        """An iterator over every legal move (unordered; sort texts to print them)."""
        return generate_moves(self.variant, self)

    def is_legal(self, move: Move) -> bool:
        """Whether ``move`` is legal here (a move onto a view's unknown card included)."""
        return is_legal(self.variant, self, move)

    def explain_illegal(self, move: Move) -> str:
        """Why ``move`` is not legal here, in one line."""
        return explain_illegal(self.variant, self, move)

    # -- push and pop -----------------------------------------------------------------------

    def push(self, move: Move) -> None:
        """Apply a legal move and settle; raises :class:`IllegalMoveError` (and changes
        nothing) when it is not legal, :class:`HiddenCardError` (and changes nothing) when
        it would turn up or deal a card this view does not know."""
        if not is_legal(self.variant, self, move):
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
                actions.append((VARIANT_MOVE, -1, None))
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
        if actions and self.undo_actions(actions):
            return  # a variant's extra move: its actions took it back whole
        cols = self.cols
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
                    actions.append((TURN_UP, i, []))
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
                actions.append((LEFT, i, left))


def parse_position(text: str) -> Board:
    """:meth:`Board.from_text`: the board of a position's text (rules.md §6)."""
    return Board.from_text(text)


def format_position(board: Board) -> str:
    """:meth:`Board.text`: a board's position in the spec's notation."""
    return board.text()
