"""Helpers for the alternative-deck tests: positions written compactly."""

from __future__ import annotations

from spider_engine import Board, Move, find_variant

__all__ = ["position", "board", "after", "moves"]


def position(variant: str, columns: list[str], stock: str = "-", foundation: str = "-",
             *extra: str) -> str:
    """Position text: ``columns`` from the left (a column without ``|`` is all face up),
    padded with empty columns to the variant's number."""
    n = find_variant(variant).columns
    assert len(columns) <= n
    cols = [c if "|" in c else "|" + c for c in columns] + ["|"] * (n - len(columns))
    return " ".join([variant, "/".join(cols), stock, foundation, *extra])


def board(variant: str, columns: list[str], stock: str = "-", foundation: str = "-",
          *extra: str) -> Board:
    """The board of :func:`position`, checked to format back to the same text."""
    text = position(variant, columns, stock, foundation, *extra)
    b = Board.from_text(text)
    assert b.text() == text
    return b


def after(b: Board, *texts: str) -> str:
    """Push the moves (checking that each undoes exactly) and return the position text."""
    for text in texts:
        before = b.text()
        b.push(Move.from_text(text))
        result = b.text()
        b.pop()
        assert b.text() == before, f"undo of {text}"
        b.push(Move.from_text(text))
        assert b.text() == result
    return b.text()


def moves(b: Board) -> list[str]:
    """The legal moves' texts, sorted; checked against ``is_legal`` and the view's."""
    texts = b.legal_moves.texts()
    assert all(b.is_legal(Move.from_text(t)) for t in texts)
    assert b.view().legal_moves.texts() == texts
    return texts
