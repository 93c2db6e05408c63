"""Malformed and illegal input gives a clear error of the right type and changes nothing."""

from __future__ import annotations

import pytest

from spider_engine import (
    Board,
    FitError,
    HiddenCardError,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    PositionError,
    UnsettledError,
    VariantError,
    find_variant,
)

DEAL1 = Board.deal("spider4", "1").text()
EMPTY_COLUMNS = "spider1 |/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks AsQsQsQsQsQsQsQsQsQs -"


@pytest.mark.parametrize(
    ("variant_id", "needle"),
    [
        ("spider5", "unknown variant"),
        ("spider4+fast", "not an option"),
        ("spider4+relaxed+open", "alphabetical"),
        ("spider4+open+open", "alphabetical"),
        ("", "non-empty"),
        ("Spider4", "unknown variant"),
    ],
)
def test_bad_variant_ids(variant_id: str, needle: str) -> None:
    with pytest.raises(VariantError, match=needle):
        find_variant(variant_id)


def test_good_variant_ids() -> None:
    assert find_variant("spider4+open+relaxed").id == "spider4+open+relaxed"
    assert find_variant("spiderette+keep").keep


@pytest.mark.parametrize(
    "text", ["", "d1", "D1j", "d01j", "d0j", "1dj", "d1jj", "++", " d1j", "d-1j", "undo"]
)
def test_malformed_moves(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        Move.from_text(text)


def test_move_round_trip_and_repr() -> None:
    for text in ["+", "d1j", "c12f", "a10b"]:
        move = Move.from_text(text)
        assert move.text() == text
        assert eval(repr(move)) == move  # noqa: S307 - repr evaluates back to the move
    assert sorted(["a1c", "+", "a10b"]) == ["+", "a10b", "a1c"]


def _replace_column(text: str, index: int, column: str) -> str:
    variant, tableau, stock, foundation = text.split(" ")
    cols = tableau.split("/")
    cols[index] = column
    return " ".join([variant, "/".join(cols), stock, foundation])


@pytest.mark.parametrize(
    ("text", "error", "needle"),
    [
        (DEAL1.replace(" -", ""), PositionError, "4 fields"),
        (DEAL1 + " ", PositionError, "4 fields"),
        (DEAL1.replace("/", "//", 1), FitError, "10 columns"),
        (_replace_column(DEAL1, 0, "Th3d7cAsAdQh"), PositionError, "exactly one '|'"),
        (_replace_column(DEAL1, 0, "Th3d|7c|Qh"), PositionError, "exactly one '|'"),
        (_replace_column(DEAL1, 0, "Th3d7cAsAd|Zz"), FitError, "no card"),
        (_replace_column(DEAL1, 0, "Th3d7cAsAd|Q"), PositionError, "malformed"),
        (_replace_column(DEAL1, 0, "Th3d7cAsAd|"), UnsettledError, "face-down"),
        (_replace_column(DEAL1, 0, "Th3d7cAsAd|??"), PositionError, "face-up card must be known"),
        (DEAL1.replace("spider4", "spider1", 1), FitError, "no card"),
        (DEAL1[:-60] + " -", FitError, "stock"),
        (DEAL1[:-1] + "x", FitError, "foundation"),
        (
            "spider1 |KsQsJsTs9s8s7s6s5s4s3s2sAs/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks - -",
            UnsettledError,
            "complete run",
        ),
        ("spider4+open " + DEAL1.split(" ", 1)[1], FitError, "face up"),
    ],
)
def test_bad_positions(text: str, error: type[Exception], needle: str) -> None:
    with pytest.raises(error, match=needle):
        Board.from_text(text)


def test_keep_allows_complete_run_at_an_end() -> None:
    text = "spider1+keep |KsQsJsTs9s8s7s6s5s4s3s2sAs/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks - -"
    board = Board.from_text(text)
    assert board.text() == text
    assert board.classic_score(0) == 600
    assert not board.is_won()


@pytest.mark.parametrize("move", ["a1b", "k1a", "a1a", "j3a", "a2b"])
def test_illegal_moves_change_nothing(move: str) -> None:
    board = Board.deal("spider4", "1")
    with pytest.raises(IllegalMoveError, match="illegal move"):
        board.push(Move.from_text(move))
    assert board.text() == DEAL1
    assert board.history() == []


def test_no_deal_while_a_column_is_empty() -> None:
    board = Board.from_text(EMPTY_COLUMNS)
    with pytest.raises(IllegalMoveError, match="empty"):
        board.push(Move.deal())
    assert board.text() == EMPTY_COLUMNS
    relaxed = Board.from_text(EMPTY_COLUMNS.replace("spider1", "spider1+relaxed", 1))
    relaxed.push(Move.deal())
    assert relaxed.stock_left() == 0


def test_view_cannot_turn_up_or_deal_unknown_cards() -> None:
    board = Board.deal("spider4", "1")
    view = board.view()
    before = view.text()
    with pytest.raises(HiddenCardError):
        view.push(Move.from_text("d1j"))  # turns up a face-down card
    assert view.text() == before
    with pytest.raises(HiddenCardError):
        view.push(Move.deal())
    assert view.text() == before
    assert sorted(view.legal_moves) == sorted(board.legal_moves)
    assert view.is_view() and not board.is_view()


def test_move_on_a_view_that_turns_up_nothing() -> None:
    board = Board.deal("spider4", "1")
    board.push(Move.from_text("d1j"))
    board.push(Move.deal())
    view = board.view()
    view.push(Move.from_text("b1d"))  # 6h onto 7d; column b keeps a face-up Tc
    board.push(Move.from_text("b1d"))
    assert view.text() == board.view_text()


def test_pop_on_a_fresh_board() -> None:
    with pytest.raises(IndexError):
        Board.deal("spider1", "0").pop()
