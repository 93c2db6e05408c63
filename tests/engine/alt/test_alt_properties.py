"""Properties of the engine over every alternative-deck variant and option (and ``keep``),
on games played from seeded deals with moves chosen by hypothesis:

- push then pop restores the exact position (text and key), and the move pushes again the same;
- parse/format round trips: ``Board.from_text(b.text())`` is the same position, and a view
  parses back to itself with the same legal moves;
- cards are conserved: the layout, stock and reserve, plus the cards each foundation token
  stands for, are the deck; the Jokers in the layout and the Troupe are six;
- every generated move is legal (``in``, ``is_legal``), each illegal candidate is refused
  with an :class:`IllegalMoveError` that changes nothing, and a copy is independent.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spider_engine import Board, IllegalMoveError, Move, find_variant

VARIANTS = [
    "myrmex",
    "myrmex+blind",
    "wizard",
    "wizard+blind",
    "wizard+weave",
    "wizard+blind+weave",
    "sparrow",
    "sparrow+blind",
    "starfish",
    "starfish+blind",
    "spider1+keep",
    "spider4+keep+open",
]

# cards each foundation token stands for (alt-decks.md §0-§4)
SET_SIZE = {
    "myrmex": dict.fromkeys("mswlyk", 10),
    "wizard": {**dict.fromkeys("wcds", 14), "t": 1},
    "sparrow": {**dict.fromkeys("bcm", 10), "w": 4, "f": 4},
    "starfish": dict.fromkeys("shdcrq", 13),
    "spider1": {"s": 13},
    "spider4": dict.fromkeys("shdc", 13),
}


def conserved(board: Board) -> None:
    v = board.variant
    base = v.id.split("+")[0]
    cards = Counter(c for col in board.cols for c in col)
    cards.update(board.stock[board.stock_pos :])
    if "weave" in v.options and board.extra[0] >= 0:
        cards[board.extra[0]] += 1
    jokers = cards.pop(v.cards.index.get("@", -1), 0)
    if base == "starfish":
        assert jokers + board.extra[0] == 6
    left = sum(SET_SIZE[base][t] for t in board.foundation)
    deck = Counter(v.canonical_deck())
    assert sum(cards.values()) + left == sum(deck.values())
    assert all(cards[c] <= deck[c] for c in cards)


def candidates(board: Board) -> list[Move]:
    """Moves that may or may not be legal, near the legal ones."""
    n = len(board.cols)
    out = [Move.deal(), Move.from_text("a1z"), Move.from_text("z1a")]
    for src in range(n):
        for count in (1, 2, 3, 5):
            out.append(Move.column_move(src, count, (src + count) % n))
            out.append(Move("joker", src, count, (src + 1) % n))
    out.append(Move("set", columns=(0, 1, 2, 3)))
    out.append(Move("set", columns=(1, 0, 2, 3)))
    return out


@pytest.mark.parametrize("variant", VARIANTS)
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), choices=st.lists(st.integers(0, 10_000), min_size=30, max_size=150))
def test_play_properties(variant: str, seed: int, choices: list[int]) -> None:
    board = Board.deal(variant, seed)
    assert find_variant(variant) is board.variant
    start = board.text()
    texts = [start]
    for i, choice in enumerate(choices):
        moves = list(board.legal_moves)
        assert bool(board.legal_moves) == bool(moves) and board.legal_moves.count() == len(moves)
        legal = set(moves)
        if i % 10 == 0:
            text = board.text()
            parsed = Board.from_text(text)
            assert parsed.text() == text and parsed.key() == board.key() and parsed == board
            view = board.view()
            assert Board.from_text(view.text()).text() == view.text()
            assert board.texts() == (text, view.text())
            assert sorted(view.legal_moves) == sorted(moves)
            for move in candidates(board):
                if move in legal:
                    continue
                assert move not in board.legal_moves
                with pytest.raises(IllegalMoveError):
                    board.push(move)
                assert board.text() == text
            twin = board.copy()
            if moves:
                twin.push(moves[0])
            assert board.text() == text
        conserved(board)
        if not moves:
            break
        move = sorted(moves)[choice % len(moves)]
        assert move in board.legal_moves and board.is_legal(move)
        before, key = board.text(), board.key()
        board.push(move)
        after = board.text()
        assert board.pop() is move
        assert board.text() == before and board.key() == key
        board.push(move)
        assert board.text() == after
        texts.append(after)
    assert len(board.history()) == len(texts) - 1
    while texts[1:]:
        board.pop()
        texts.pop()
        assert board.text() == texts[-1]
    assert board.text() == start
