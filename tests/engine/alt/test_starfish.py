"""Starfish (alt-decks.md §4): the rules that differ from Spider, with positions."""

from __future__ import annotations

import pytest

from spider_engine import (
    Board,
    IllegalMoveError,
    Move,
    PositionError,
    UnsettledError,
    find_variant,
)
from tests.engine.alt.alt_helpers import after, board, moves, position


def test_deck_and_layout() -> None:
    v = find_variant("starfish")
    deck = [v.cards.tokens[c] for c in v.canonical_deck()]
    one = [r + s for s in "shdcrq" for r in "A23456789TJQK"]
    assert deck == one * 2  # the Jokers are not shuffled
    b = Board.deal("starfish", "4")
    assert [len(c) for c in b.cols] == [6] * 12 and b.stock_left() == 84 and b.deals_left() == 7
    assert b.extra == [6] and b.text().endswith(" - 6")


def test_a_joker_replaces_a_card_that_goes_onto_another_column() -> None:
    b = board("starfish", ["Ah", "2h", "Kc9d5s4s", "3h", "4h", "Ts"], "-", "-", "6")
    texts = moves(b)
    assert "*c3f" in texts and "*c4g" in texts  # the King into an empty column
    assert "*c2f" not in texts  # 5s does not go on Ts
    assert "*c1f" not in texts  # never the end card
    assert after(b, "*c3f") == position(
        "starfish", ["Ah", "2h", "Kc@5s4s", "3h", "4h", "Ts9d"], "-", "-", "5"
    )


def test_a_joker_breaks_the_run_through_it_and_goes_back_at_a_column_end() -> None:
    b = board("starfish", ["Kc", "2d", "KhQhJhTh"], "-", "-", "6")
    after(b, "*c3a")
    assert b.text() == position("starfish", ["KcQh", "2d", "Kh@JhTh"], "-", "-", "5")
    texts = moves(b)
    assert "c2a" in texts and "c3d" not in texts  # Jh Th move; not with the Joker
    # Jh Th go onto the Queen: the Joker lies at c's end and goes back to the Troupe
    assert after(b, "c2a") == position("starfish", ["KcQhJhTh", "2d", "Kh"], "-", "-", "6")


def test_a_replaced_card_can_complete_a_run() -> None:
    b = board("starfish", ["KqQqJqTq9q8q7q6q5q4q3q2q", "9cAq3d"], "-", "-", "1")
    assert after(b, "*b2a") == position("starfish", ["|", "9c@3d"], "-", "q", "0")
    assert [t for t in moves(b) if t[0] == "*"] == []  # the Troupe is empty


def test_joker_moves_need_a_joker_in_the_troupe_and_a_face_up_card() -> None:
    b = board("starfish", ["Kc", "2d", "KhQhJhTh"], "-", "-", "0")
    with pytest.raises(IllegalMoveError, match="no Joker"):
        b.push(Move.from_text("*c3a"))
    b = board("starfish+blind", ["Kc", "Qd|JhTh"], "-", "-", "6")
    assert "*b2a" not in moves(b)
    with pytest.raises(IllegalMoveError, match="face-up"):
        b.push(Move.from_text("*b3a"))
    with pytest.raises(IllegalMoveError, match="depth 2"):
        b.push(Move.from_text("*b1a"))
    b = board("starfish", ["Kc", "Qh@JhTh", "Qd"], "-", "-", "5")
    with pytest.raises(IllegalMoveError, match="Joker"):
        b.push(Move.from_text("*b3c"))  # a Joker is not replaced


def test_a_joker_at_a_column_end_is_not_settled() -> None:
    with pytest.raises(UnsettledError, match="Joker"):
        Board.from_text(position("starfish", ["Kh@"], "-", "-", "5"))


def test_the_troupe_field() -> None:
    with pytest.raises(PositionError, match="5 fields"):
        Board.from_text(position("starfish", ["Kh"]))
    # like the count of each card, the Troupe's is not checked: positions may be made up
    b = board("starfish", ["KhQh@Jh"], "-", "-", "6")
    assert after(b, "a1b") == position("starfish", ["KhQh", "Jh"], "-", "-", "7")
    assert Board.from_text(b.text()).text() == b.text()
    for bad in ["x", "05", "-1", ""]:
        with pytest.raises(PositionError):
            Board.from_text(position("starfish", ["Kh"], "-", "-", bad))


def test_a_thirteen_card_run_leaves_and_the_game_is_won_with_twelve() -> None:
    b = board("starfish", ["KrQrJrTr9r8r7r6r5r4r3r2r", "Ar"], "-", "shdcqshdcqr", "6")
    after(b, "b1a")
    assert b.text() == position("starfish", [], "-", "shdcqshdcqrr", "6")
    assert b.is_won() and b.classic_score(1) == 500 - 1 + 1200


def test_a_deal_puts_no_joker_and_settles() -> None:
    stock = "Ah" * 12
    b = board("starfish", ["KhQhJhTh9h8h7h6h5h4h3h2h"], stock, "-", "6")
    assert after(b, "+") == position("starfish", ["|"] + ["Ah"] * 11, "-", "h", "6")
