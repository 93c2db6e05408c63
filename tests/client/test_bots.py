"""Bots on engine positions, without a server."""

from __future__ import annotations

import statistics

from spider_client.bots import GreedyBot, RandomBot, make_bot, play_game
from spider_client.errors import ERROR_CLASSES, ServerError, error_from_message
from spider_client.protocol import ERROR_CODES, Error
from spider_engine import Board, Move


def view(*columns: str, stock: str = "*10") -> Board:
    return Board.from_text(f"spider1 {'/'.join(columns)} {stock} -")


FILLER = ["*1|9s"] * 6


def test_greedy_finishes_a_run_first() -> None:
    board = view("*3|KsQsJsTs9s8s7s6s5s4s3s2s", "*2|As", "*4|5s", "|6s", *FILLER)
    assert {"b1a", "c1d", "+"} <= set(board.legal_moves.texts())
    assert GreedyBot()(board) == "b1a"


def test_greedy_turns_up_before_building_on_suit() -> None:
    # c1d turns up a card; e1d only lays a 5 onto a 6 (it lay on a King)
    board = view("*3|Ks", "*2|Js", "*4|5s", "*1|6s", "*1|Ks5s", "*1|Js", *["*1|2s"] * 4)
    assert {"c1d", "e1d", "+"} <= set(board.legal_moves.texts())
    assert GreedyBot()(board) == "c1d"


NO_MOVES = ["*1|Qs2s"] * 4


def test_greedy_builds_onto_its_suit_before_dealing() -> None:
    board = view(*NO_MOVES, "*1|Ks5s", "*1|Qs6s", *NO_MOVES)
    assert board.legal_moves.texts() == ["+", "e1f"]
    assert GreedyBot()(board) == "e1f"


def test_greedy_deals_when_nothing_useful_is_left() -> None:
    # moving the 8 onto the other 9 gains nothing: it lies on a 9 already
    board = view(*NO_MOVES, "*1|Ks9s8s", "*1|Qs9s", *NO_MOVES)
    assert board.legal_moves.texts() == ["+", "e1f"]
    assert GreedyBot()(board) == "+"


def test_greedy_does_not_go_back_and_forth() -> None:
    # the stock is out: the only moves shuttle the 8 between the two nines
    board = view(*NO_MOVES, "*1|Ks9s8s", "*1|Qs9s", *NO_MOVES, stock="-")
    bot = GreedyBot()
    assert bot(board) == "e1f"
    board.push(Move.from_text("e1f"))
    assert board.legal_moves.texts() == ["f1e"]
    assert bot(board) is None  # f1e only goes back to a position it has seen


def test_random_bot_plays_legal_moves_and_gives_up_when_stuck() -> None:
    bot = RandomBot(7)
    board = Board.deal("spider1", "3")
    for _ in range(50):
        text = bot(board.view())
        assert text is not None
        assert text in board.legal_moves.texts()
        board.push(Move.from_text(text))
    stuck = view("*3|As", "*2|As", "*4|As", "|As", *["*1|As"] * 6, stock="-")
    assert RandomBot()(stuck) is None
    assert GreedyBot()(stuck) is None


def test_make_bot() -> None:
    assert isinstance(make_bot("greedy"), GreedyBot)
    assert isinstance(make_bot("random", seed=1), RandomBot)


def test_greedy_beats_random_over_fifty_spider1_seeds() -> None:
    greedy, random_ = [], []
    for seed in range(50):
        board = play_game(Board.deal("spider1", str(seed)), GreedyBot(), max_actions=1000)
        greedy.append(len(board.foundation))
        board = play_game(Board.deal("spider1", str(seed)), RandomBot(seed), max_actions=1000)
        random_.append(len(board.foundation))
    assert statistics.median(greedy) > statistics.median(random_)


def test_every_error_code_has_its_exception() -> None:
    assert set(ERROR_CLASSES) == set(ERROR_CODES)
    for code in ERROR_CODES:
        error = error_from_message(Error(error=code, message="m"))
        assert isinstance(error, ServerError)
        assert error.code == code
    assert type(error_from_message(Error(error="new_code", message="m"))) is ServerError
