"""Moves and their notation (rules.md §5, alt-decks.md).

A :class:`Move` is a small immutable value; ``Move.from_text("d1j").text() == "d1j"`` and
``repr`` evaluates back to the move. Moves are interned: equal moves are the same object, so
generating them allocates nothing.
"""

from __future__ import annotations

import re
from typing import ClassVar

from .errors import InvalidMoveError

__all__ = ["Move", "column_letter", "column_index"]

_MOVE = re.compile(r"([a-z])([1-9][0-9]*)([a-z])")
_SET = re.compile(r"x([a-z]{2,})")
_JOKER = re.compile(r"\*([a-z])([1-9][0-9]*)([a-z])")


def column_letter(index: int) -> str:
    return chr(97 + index)


def column_index(letter: str) -> int:
    return ord(letter) - 97


class Move:
    """One move: ``kind`` is ``"move"`` (``<from><count><to>``), ``"deal"`` (``+``),
    ``"set"`` (``x`` and column letters: a set taken off) or ``"joker"``
    (``*<column><depth><to>``).

    ``src``, ``count`` and ``dst`` are column indices (0 for ``a``) and a card count (the
    depth for a joker move); ``columns`` holds the columns of a set move.
    """

    __slots__ = ("kind", "src", "count", "dst", "columns", "_text")

    kind: str
    src: int
    count: int
    dst: int
    columns: tuple[int, ...]
    _text: str

    _interned: ClassVar[dict[tuple[object, ...], Move]] = {}

    def __new__(
        cls,
        kind: str,
        src: int = -1,
        count: int = 0,
        dst: int = -1,
        columns: tuple[int, ...] = (),
    ) -> Move:
        key = (kind, src, count, dst, columns)
        move = cls._interned.get(key)
        if move is not None:
            return move
        move = object.__new__(cls)
        object.__setattr__(move, "kind", kind)
        object.__setattr__(move, "src", src)
        object.__setattr__(move, "count", count)
        object.__setattr__(move, "dst", dst)
        object.__setattr__(move, "columns", columns)
        object.__setattr__(move, "_text", _format(kind, src, count, dst, columns))
        if len(cls._interned) < 200_000:
            cls._interned[key] = move
        return move

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Move is immutable")

    def __reduce__(self) -> tuple[object, ...]:
        return (Move.from_text, (self._text,))

    @classmethod
    def column_move(cls, src: int, count: int, dst: int) -> Move:
        """``Move("move", src, count, dst)``, the same object, found by a number rather
        than a tuple of five (the move generator makes one per legal column move)."""
        if 0 <= src < 256 and 0 <= count < 256 and 0 <= dst < 256:
            number = src << 16 | count << 8 | dst
            move = _COLUMN_MOVES.get(number)
            if move is None:
                move = _COLUMN_MOVES[number] = cls("move", src, count, dst)
            return move
        return cls("move", src, count, dst)

    @classmethod
    def deal(cls) -> Move:
        return cls("deal")

    @classmethod
    def from_text(cls, text: str) -> Move:
        """Parse canonical move text; :class:`InvalidMoveError` for anything else."""
        if not isinstance(text, str):
            raise InvalidMoveError(f"a move is text, not {type(text).__name__}")
        if text == "+":
            return cls("deal")
        m = _MOVE.fullmatch(text)
        if m:
            return cls("move", column_index(m[1]), int(m[2]), column_index(m[3]))
        m = _SET.fullmatch(text)
        if m:
            return cls("set", columns=tuple(column_index(ch) for ch in m[1]))
        m = _JOKER.fullmatch(text)
        if m:
            return cls("joker", column_index(m[1]), int(m[2]), column_index(m[3]))
        shown = text if len(text) <= 20 else text[:20] + "…"
        raise InvalidMoveError(
            f"malformed move {shown!r}: expected '+' or <from><count><to> such as 'd1j'"
        )

    def text(self) -> str:
        return self._text

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Move.from_text({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Move) and self._text == other._text)

    def __hash__(self) -> int:
        return hash(self._text)

    def __lt__(self, other: Move) -> bool:
        return self._text < other._text


_COLUMN_MOVES: dict[int, Move] = {}
"""The column moves made so far, by ``src << 16 | count << 8 | dst``."""


def _format(kind: str, src: int, count: int, dst: int, columns: tuple[int, ...]) -> str:
    if kind == "deal":
        return "+"
    if kind == "move":
        return f"{column_letter(src)}{count}{column_letter(dst)}"
    if kind == "set":
        return "x" + "".join(column_letter(c) for c in columns)
    if kind == "joker":
        return f"*{column_letter(src)}{count}{column_letter(dst)}"
    raise InvalidMoveError(f"unknown move kind {kind!r}")
