"""Formatting remembers the texts of columns and stocks: the texts are the same as when
formatted afresh, for positions and views of every deck, and the memory is bounded."""

from __future__ import annotations

import random

import pytest

from spider_engine import Board, find_variant, notation


def _fresh(board: Board) -> tuple[str, str]:
    board.variant.cards.memo.clear()
    return board.texts()


@pytest.mark.parametrize(
    "variant", ["spider4", "spider2+keep", "myrmex+blind", "wizard+weave", "sparrow", "starfish"]
)
def test_remembered_texts_are_the_texts(variant: str) -> None:
    rng = random.Random(variant)
    board = Board.deal(variant, "3")
    for _ in range(120):
        moves = sorted(board.legal_moves, key=lambda m: m.text())
        if not moves:
            break
        board.push(rng.choice(moves))
        remembered = board.texts()  # mostly from the memo
        assert remembered == board.texts()
        assert remembered == _fresh(board)
        assert Board.from_text(remembered[0]).texts() == remembered
        view = board.view()
        assert view.texts() == _fresh(view)
        assert view.texts()[0] == remembered[1]
    while board.history():  # undo back to the deal: every text again as formatted afresh
        board.pop()
        remembered = board.texts()
        assert remembered == _fresh(board)


def test_the_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notation, "_MEMO_MAX", 50)
    cards = find_variant("spider4").cards
    cards.memo.clear()
    board = Board.deal("spider4", "1")
    rng = random.Random(1)
    for _ in range(300):
        moves = sorted(board.legal_moves, key=lambda m: m.text())
        if not moves:
            break
        board.push(rng.choice(moves))
        text = board.texts()
        assert len(cards.memo) <= 50
        assert text == _fresh(board)
