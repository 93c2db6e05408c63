"""Wizard's Tower (alt-decks.md §2): the rules that differ from Spider, with positions."""

from __future__ import annotations

import pytest

from spider_engine import (
    Board,
    FitError,
    IllegalMoveError,
    Move,
    PositionError,
    UnsettledError,
    find_variant,
)
from tests.engine.alt.alt_helpers import after, board, moves, position

EMPTIES = "defghijklm"


def test_deck_and_layout() -> None:
    v = find_variant("wizard")
    deck = [v.cards.tokens[c] for c in v.canonical_deck()]
    assert len(deck) == 78 and len(set(deck)) == 78
    assert deck[:14] == ["Aw", "2w", "3w", "4w", "5w", "6w", "7w", "8w", "9w", "Tw", "Pw", "Nw", "Qw", "Kw"]
    assert deck[14] == "Ac" and deck[55] == "Ks"
    assert deck[56:] == [f"{n}t" for n in range(22)]
    b = Board.deal("wizard", "3")
    assert b.stock_left() == 0 and b.deals_left() == 0
    assert "+" not in b.legal_moves.texts()


def test_suit_cards_build_on_suit_cards_and_trumps_on_higher_trumps() -> None:
    b = board("wizard", ["Pw", "Nc", "5t", "12t", "Kd"])
    # a Page on any Knight; 5t on 12t, never 12t on 5t; no suit card on a trump or back
    assert moves(b) == ["a1b", "c1d"]
    assert after(b, "a1b", "c1d") == position("wizard", ["|", "NcPw", "|", "12t5t", "Kd"])


def test_a_run_of_one_suit_moves_as_a_unit_a_mixed_one_does_not() -> None:
    b = board("wizard", ["Kc9d8d7d", "Tw", "8s7d"])
    assert {"a3b", "a2e", "c1e"} <= set(moves(b))
    assert "c2b" not in b.legal_moves  # 8s 7d are not of one suit
    assert not b.is_legal(Move.from_text("c2b"))


def test_trumps_descending_by_one_move_as_a_unit() -> None:
    b = board("wizard", ["Qs9t8t7t6t", "15t", "20t18t", "Kw"])
    texts = moves(b)
    assert {"a1b", "a4b", "a4c", "a4e", "b1c", "c1e"} <= set(texts)
    assert "a5e" not in texts  # the Queen is not part of the trump run
    assert "c2e" not in texts  # 20t 18t do not descend by exactly one
    assert not any(t.startswith("d1") for t in texts)  # nothing takes a King; no empty-to-empty
    assert after(b, "a4c") == position("wizard", ["Qs", "15t", "20t18t9t8t7t6t", "Kw"])


def test_the_tower_takes_trumps_in_order_from_any_column() -> None:
    b = board("wizard", ["3t0t5w", "7c2t", "1t", "6c"])
    # 5w onto 6c uncovers the Fool, which leaves; then 1t (column c), 2t (b) and 3t (a)
    assert after(b, "a1d") == position("wizard", ["|", "7c", "|", "6c5w"], "-", "tttt")
    assert b.classic_score(1) == 500 - 1 + 400


def test_a_trump_leaves_only_when_it_is_the_next() -> None:
    text = position("wizard", ["2t", "1t", "0tKs"])  # 1t and 2t wait for the Fool
    assert Board.from_text(text).text() == text
    with pytest.raises(UnsettledError, match="Tower"):
        Board.from_text(position("wizard", ["2t", "1t"], "-", "t"))
    with pytest.raises(UnsettledError, match="Tower"):
        Board.from_text(position("wizard", ["Ks0t"]))


def test_a_fourteen_card_run_leaves() -> None:
    b = board("wizard", ["KwQwNwPwTw9w8w7w6w5w4w3w2w", "Aw", "9t"])
    assert after(b, "b1a") == position("wizard", ["|", "|", "9t"], "-", "w")


def test_won_when_every_card_has_left() -> None:
    gone = "cds" + "t" * 22
    b = board("wizard", ["KwQwNwPwTw9w8w7w6w5w4w3w2w", "Aw"], "-", gone)
    assert not b.is_won()
    after(b, "b1a")
    assert b.is_won() and not b.legal_moves
    assert b.classic_score(1) == 500 - 1 + 100 * 26


def test_a_trump_and_a_suit_card_in_one_column_cannot_go_together() -> None:
    b = board("wizard", ["Kd", "3t2d", "Qc"])
    assert "b2a" not in moves(b) and "b1a" not in moves(b)
    assert "b1c" not in moves(b)  # a 2 goes on a 3
    assert "b1d" in moves(b)


# -- weave --------------------------------------------------------------------------------------


def test_weave_puts_an_end_card_in_the_reserve_and_plays_it_back() -> None:
    b = board("wizard+weave", ["Kw", "5t", "Qc"], "-", "-", "-")
    assert moves(b) == ["a1z", "b1z", "c1a", "c1z"]
    assert after(b, "c1z") == position("wizard+weave", ["Kw", "5t"], "-", "-", "Qc")
    # the reserve is full: no card goes there; the Queen goes back by the usual rules
    assert moves(b) == ["z1a"] + [f"z1{c}" for c in "c" + EMPTIES]
    assert after(b, "z1a") == position("wizard+weave", ["KwQc", "5t"], "-", "-", "-")


def test_nothing_leaves_from_the_reserve() -> None:
    b = board("wizard+weave", ["Kw", "5t"], "-", "-", "0t")
    assert not b.is_won()
    assert after(b, "z1b") == position("wizard+weave", ["Kw", "5t"], "-", "t", "-")


def test_a_card_from_the_reserve_can_complete_a_run_or_fill_an_empty_column() -> None:
    b = board("wizard+weave", ["KsQsNsPsTs9s8s7s6s5s4s3s2s"], "-", "-", "As")
    assert after(b, "z1a") == position("wizard+weave", [], "-", "s", "-")
    b = board("wizard+weave", [], "-", "wcds" + "t" * 21, "21t")
    assert not b.is_won()
    assert moves(b) == [f"z1{c}" for c in "abc" + EMPTIES]
    assert after(b, "z1c") == position("wizard+weave", [], "-", "wcds" + "t" * 22, "-")
    assert b.is_won()


def test_a_move_to_the_reserve_settles_its_column() -> None:
    b = board("wizard+blind+weave", ["Aw|1t", "7c|0t5w"], "-", "-", "-")
    # 5w to the reserve uncovers the Fool, which leaves; then 1t leaves column a, whose Ace
    # turns up
    assert after(b, "b1z") == position("wizard+blind+weave", ["|Aw", "|7c"], "-", "tt", "5w")


def test_the_reserve_needs_weave_and_one_card() -> None:
    plain = board("wizard", ["Kw", "5t"])
    with pytest.raises(IllegalMoveError, match="no column z"):
        plain.push(Move.from_text("a1z"))
    b = board("wizard+weave", ["Kw", "QwNw"], "-", "-", "-")
    with pytest.raises(IllegalMoveError, match="one card"):
        b.push(Move.from_text("b2z"))
    b.push(Move.from_text("b1z"))
    with pytest.raises(IllegalMoveError, match="already"):
        b.push(Move.from_text("a1z"))
    with pytest.raises(IllegalMoveError, match="does not go onto"):
        b.push(Move.from_text("z1a"))


def test_the_reserve_field() -> None:
    text = position("wizard+weave", ["Kw"], "-", "-", "Qc")
    assert Board.from_text(text).view_text() == text
    with pytest.raises(PositionError, match="5 fields"):
        Board.from_text(position("wizard+weave", ["Kw"]))
    with pytest.raises(PositionError, match="4 fields"):
        Board.from_text(position("wizard", ["Kw"], "-", "-", "-"))
    with pytest.raises(FitError, match="no card"):
        Board.from_text(position("wizard+weave", ["Kw"], "-", "-", "Jw"))
    with pytest.raises(PositionError, match="one known card"):
        Board.from_text(position("wizard+weave", ["Kw"], "-", "-", "??"))
    with pytest.raises(PositionError, match="one known card"):
        Board.from_text(position("wizard+weave", ["Kw"], "-", "-", "QcQd"))
