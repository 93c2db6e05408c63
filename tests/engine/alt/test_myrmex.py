"""Myrmex (alt-decks.md §1): the rules that differ from Spider, with positions."""

from __future__ import annotations

import pytest

from spider_engine import Board, IllegalMoveError, Move, UnsettledError, find_variant
from tests.engine.alt.alt_helpers import after, board, moves, position


def test_deck_and_layout() -> None:
    v = find_variant("myrmex")
    deck = [v.cards.tokens[c] for c in v.canonical_deck()]
    assert len(deck) == 60
    assert deck[:6] == ["Am", "As", "Aw", "Al", "Ay", "Ak"]
    assert deck[6:9] == ["2mk", "2sy", "2wl"] and deck[27:30] == ["9ms", "9wy", "9lk"]
    assert deck[30:36] == ["Cm", "Cs", "Cw", "Cl", "Cy", "Ck"]
    assert deck[36:] == deck[6:30]
    # every suit is on exactly one card of each rank
    for suit in "mswlyk":
        assert sorted(v.cards.rank[c] for c in set(v.canonical_deck()) if suit in v.cards.suits[c]) == list(range(1, 11))
    b = Board.deal("myrmex", "5")
    assert [len(c) for c in b.cols] == [4] * 8 and b.stock_left() == 28
    assert b.down == [0] * 8  # dealt face up
    for _ in range(3):
        b.push(Move.deal())
    assert b.deals_left() == 1 and b.stock_left() == 4
    b.push(Move.deal())
    assert [len(c) for c in b.cols] == [8, 8, 8, 8, 7, 7, 7, 7]


def test_groups_share_a_suit() -> None:
    # 7ml 6mw 5ml share Moons: all three move; 6mw 5sw 4ms share none, but 5sw 4ms share Suns
    b = board("myrmex", ["7ml6mw5ml", "6mw5sw4ms", "8wl", "7sk", "5yk"])
    assert moves(b) == [
        "a1f", "a1g", "a1h", "a2d", "a2f", "a2g", "a2h", "a3c",
        "b1a", "b1e", "b1f", "b1g", "b1h", "b2f", "b2g", "b2h",
        "d1c",
    ]  # fmt: skip
    assert "b3f" not in b.legal_moves.texts()
    with pytest.raises(IllegalMoveError, match="movable run of 2"):
        b.push(Move.from_text("b3f"))
    # any card one rank higher, whatever its suits: 7ml 6mw 5ml onto 8wl, 4ms onto 5yk
    assert after(b, "a3c", "b1e") == position("myrmex", ["|", "6mw5sw", "8wl7ml6mw5ml", "7sk", "5yk4ms"])


def test_a_group_descending_through_shared_neighbours_is_not_movable_whole() -> None:
    b = board("myrmex", ["Ck7sk6mw5sw4ms3ly", "8yk"])
    v = b.variant
    assert v.movable(b.cols[0], 6) == 1  # 4ms 3ly share nothing
    b = board("myrmex", ["Ck7sk6sy5sw4ms", "8yk"])
    assert v.movable(b.cols[0], 5) == 4  # 7sk 6sy 5sw 4ms share Suns; Ck not
    assert "a4b" in moves(b)


def test_crown_to_ace_sharing_a_suit_leaves_written_by_the_crowns_suit() -> None:
    b = board("myrmex", ["Cm9ms8ms7ml6mw5ml4ms3mw2mk", "Am"], "-", "swlyk")
    assert "b1a" in moves(b) and "a8c" in moves(b) and "a9c" not in moves(b)
    assert after(b, "b1a") == position("myrmex", [], "-", "swlykm")
    assert b.is_won() and not b.is_stuck()
    assert b.classic_score(1) == 500 - 1 + 600


def test_crown_to_ace_not_sharing_one_suit_stays() -> None:
    # each card shares Suns with the Crown except the Ace of Moons
    b = board("myrmex", ["Cs9ms8ms7sk6sy5sw4ms3sk2sy", "Am"])
    assert after(b, "b1a") == position("myrmex", ["Cs9ms8ms7sk6sy5sw4ms3sk2syAm"])
    assert not b.is_won()


def test_a_complete_group_may_not_stay_in_a_position() -> None:
    with pytest.raises(UnsettledError, match="complete"):
        Board.from_text(position("myrmex", ["Ck9lk8yk7sk6lk5yk4yk3sk2mkAk"]))


def test_nothing_on_an_ace_and_no_empty_to_empty() -> None:
    b = board("myrmex", ["Am", "2wl", "5ml"])
    assert moves(b) == ["a1b"]  # an Ace goes on a 2; no 2 on an Ace; no column to an empty one
    assert after(b, "a1b") == position("myrmex", ["|", "2wlAm", "5ml"])
    assert moves(b) == ["b1a", "b1d", "b1e", "b1f", "b1g", "b1h"]  # only the Ace moves
    full = board("myrmex", ["Am", "3mw", "Cm", "Cs", "Cw", "Cl", "Cy", "Ck"])
    assert moves(full) == [] and full.is_stuck()


def test_the_stock_deals_onto_empty_columns_and_its_last_deal_onto_four() -> None:
    b = board("myrmex", ["9ms"], "AmAsAwAlAyAkCmCsCwClCyCk")
    assert "+" in moves(b)
    assert after(b, "+") == position(
        "myrmex", ["9msAm", "As", "Aw", "Al", "Ay", "Ak", "Cm", "Cs"], "CwClCyCk"
    )
    assert b.deals_left() == 1
    assert after(b, "+") == position(
        "myrmex", ["9msAmCw", "AsCl", "AwCy", "AlCk", "Ay", "Ak", "Cm", "Cs"]
    )
