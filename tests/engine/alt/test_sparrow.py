"""Sparrow (alt-decks.md §3): the rules that differ from Spider, with positions."""

from __future__ import annotations

import pytest

from spider_engine import Board, IllegalMoveError, Move, find_variant
from tests.engine.alt.alt_helpers import after, board, moves, position


def test_deck_and_layout() -> None:
    v = find_variant("sparrow")
    deck = [v.cards.tokens[c] for c in v.canonical_deck()]
    block = [f"{n}{s}" for s in "bcm" for n in "123456789D"]
    block = [t if t[0] != "D" else "D" + t[1] for t in block] + ["Ew", "Sw", "Ww", "Nw"]
    assert deck[:10] == ["1b", "2b", "3b", "4b", "5b", "6b", "7b", "8b", "9b", "Db"]
    assert deck == block * 4 + [f"{n}f" for n in range(1, 9)]
    b = Board.deal("sparrow", "9")
    assert [len(c) for c in b.cols] == [6] * 12 and b.stock_left() == 72 and b.deals_left() == 6


def test_suit_cards_build_on_any_suit_a_dragon_on_nothing() -> None:
    b = board("sparrow", ["6b", "5c", "Db", "9m", "Dc", "Ew", "Sw"])
    assert moves(b) == ["b1a", "d1c", "d1e", "f1g", "g1f"]


def test_a_run_with_a_dragon_at_its_head_moves_as_a_unit() -> None:
    b = board("sparrow", ["5mDb9b8b", "Dc9b", "4c"])
    texts = moves(b)
    assert {"a3d", "a2d", "a1d", "b1d"} <= set(texts)
    assert "b2d" not in texts  # Dc 9b are not of one suit
    assert "a4d" not in texts
    assert after(b, "a3d") == position("sparrow", ["5m", "Dc9b", "4c", "Db9b8b"])


def test_winds_move_one_at_a_time_onto_winds() -> None:
    b = board("sparrow", ["5bSwWw", "6cNw", "7c"])
    texts = moves(b)
    assert "a1b" in texts and "b1a" in texts and "a1d" in texts
    assert "a2d" not in texts  # Winds never move together
    assert "b1c" not in texts and "c1a" not in texts  # nor onto or under suit cards


def test_a_move_may_not_leave_four_winds_together() -> None:
    b = board("sparrow", ["EwSwWw", "5bNw", "5cEw"])
    texts = moves(b)
    assert "b1a" not in texts and "c1a" not in texts  # a would end in four Winds
    assert {"a1b", "a1c", "b1c", "c1b", "a1d", "b1d", "c1d"} <= set(texts)
    with pytest.raises(IllegalMoveError, match="4 Winds together"):
        b.push(Move.from_text("b1a"))
    b = board("sparrow", ["5bSwWw", "5bNw"])  # two together: a third may come
    assert "b1a" in moves(b)
    assert after(b, "b1a") == position("sparrow", ["5bSwWwNw", "5b"])


def test_only_face_up_winds_count_as_lying_together() -> None:
    b = board("sparrow+blind", ["Ew|SwWw", "5b|Nw"])
    assert "b1a" in moves(b)


def test_flowers_and_seasons_likewise_among_themselves() -> None:
    b = board("sparrow", ["1f5f8f", "3b2f", "4b6f", "Ew"])
    texts = moves(b)
    assert "b1a" not in texts and "c1a" not in texts
    assert {"b1c", "c1b", "a1b", "a1c"} <= set(texts)
    assert "a1d" not in texts and "d1a" not in texts  # a Flower and a Wind do not mix


def test_a_deal_may_leave_four_winds_together() -> None:
    stock = "Nw" + "1b" * 11
    b = board("sparrow", ["EwSwWw"], stock)
    assert after(b, "+") == position("sparrow", ["EwSwWwNw"] + ["1b"] * 11)


def test_four_different_winds_at_column_ends_are_taken_off_by_x() -> None:
    b = board("sparrow", ["Ew", "Sw", "1b", "Ww", "Nw", "3cEw"])
    texts = moves(b)
    assert [t for t in texts if t[0] == "x"] == ["xabde", "xbdef"]
    assert after(b, "xbdef") == position("sparrow", ["Ew", "|", "1b", "|", "|", "3c"], "-", "w")
    b.pop()
    for bad, reason in [
        ("xabcd", "four different Winds"),  # 1b is not a Wind
        ("xaefb", "alphabetical"),
        ("xabd", "4 cards"),
        ("xabdm", "no column m"),
        ("xabdg", "empty"),
    ]:
        with pytest.raises(IllegalMoveError, match=reason):
            b.push(Move.from_text(bad))
    assert not b.is_legal(Move.from_text("xadef"))  # two East Winds


def test_any_four_flowers_and_seasons_are_taken_off_by_x() -> None:
    b = board("sparrow", ["1f", "5f", "8f", "3f", "7f", "2b"])
    assert [t for t in moves(b) if t[0] == "x"] == ["xabcd", "xabce", "xabde", "xacde", "xbcde"]
    assert after(b, "xacde") == position("sparrow", ["|", "5f", "|", "|", "|", "2b"], "-", "f")


def test_sets_never_leave_by_themselves() -> None:
    text = position("sparrow", ["Ew", "Sw", "Ww", "Nw", "1f", "2f", "3f", "4f"])
    b = Board.from_text(text)
    assert b.text() == text and len([t for t in moves(b) if t[0] == "x"]) == 2


def test_x_turns_up_what_it_uncovers() -> None:
    b = board("sparrow+blind", ["4b|Ew", "Db|Sw", "Ww", "Nw"])
    assert after(b, "xabcd") == position("sparrow+blind", ["|4b", "|Db"], "-", "w")
    view = Board.from_text(position("sparrow+blind", ["4b|Ew", "Db|Sw", "Ww", "Nw"])).view()
    with pytest.raises(IllegalMoveError):
        view.push(Move.from_text("xabcd"))  # it would turn up cards the view does not know


def test_a_run_from_a_dragon_to_its_one_leaves() -> None:
    b = board("sparrow", ["Dc9c8c7c6c5c4c3c2c", "1c"])
    assert after(b, "b1a") == position("sparrow", [], "-", "c")


def test_won_when_all_eighteen_sets_have_left() -> None:
    gone = "bbbbccccmmmm" + "www" + "ff"
    b = board("sparrow", ["Ew", "Sw", "Ww", "Nw"], "-", gone)
    assert not b.is_won()
    after(b, "xabcd")
    assert b.is_won() and b.classic_score(1) == 500 - 1 + 1800
