"""Every line of the spec's vectors, reproduced by the engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from spider_engine import Board, Move

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec"
if not SPEC.is_dir():  # a checkout with the spec beside it, or the copy kept in docs/
    SPEC = Path(__file__).resolve().parents[2] / "docs" / "spec"


def _vectors(name: str) -> list[tuple[str, list[str]]]:
    rows = []
    for line in (SPEC / name).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, rest = line.split(" ", 1)
        rows.append((kind, rest.split(" => ")))
    return rows


VECTORS = _vectors("vectors.txt")


def test_vectors_are_there() -> None:
    kinds = {kind for kind, _ in VECTORS}
    assert kinds == {"deal", "moves", "apply", "view", "suited"}
    assert len(VECTORS) > 40


@pytest.mark.parametrize(
    ("kind", "parts"), VECTORS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(VECTORS)]
)
def test_vector(kind: str, parts: list[str]) -> None:
    if kind == "deal":
        head, expected = parts
        variant, seed = head.split(" ", 1)
        board = Board.deal(variant, seed)
        assert board.text() == expected
        assert Board.from_text(expected).text() == expected
    elif kind == "moves":
        position, expected = parts
        board = Board.from_text(position)
        assert board.text() == position
        assert " ".join(board.legal_moves.texts()) == expected
    elif kind == "apply":
        position, move, expected = parts
        board = Board.from_text(position)
        board.push(Move.from_text(move))
        assert board.text() == expected
        board.pop()
        assert board.text() == position
    elif kind == "view":
        position, expected = parts
        board = Board.from_text(position)
        assert board.view_text() == expected
        assert Board.from_text(expected).text() == expected
    elif kind == "suited":
        position, expected = parts
        assert str(Board.from_text(position).suited_score()) == expected
    else:  # pragma: no cover - a new kind of vector must get a test
        pytest.fail(f"unknown vector kind {kind}")
