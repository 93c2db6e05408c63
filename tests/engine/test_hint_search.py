"""Hints with their verdicts (``suggest``), and the beam search's short way for column
moves, which must give every search the same result as pushing every move."""

from __future__ import annotations

import pytest

from spider_engine import Board
from spider_engine.search import BeamSearch, Weights
from spider_engine.solver import hint, rank_moves, solve, suggest
from spider_race.hint_corpus import default_corpus, read_corpus


def test_a_won_suggestion_is_the_first_move_of_the_solvers_line() -> None:
    board = Board.deal("spider1", "7")
    solution = solve(board, budget=50_000)
    assert solution.verdict == "won"
    suggestion = suggest(board.view(), full=board, budget=50_000)
    assert suggestion.won
    assert suggestion.verdict == "won"
    assert suggestion.move == solution.line[0] == hint(board.view(), full=board, budget=50_000)
    assert suggestion.positions == solution.positions


def test_a_lost_or_unsettled_position_suggests_the_players_first_move() -> None:
    lost = Board.from_text("spider4 |9h/|8h/|8s/|Kc/|Kc/|Kc/|Kc/|Kc/|Kc/|Kc - -")
    suggestion = suggest(lost, budget=1_000)
    assert suggestion.verdict == solve(lost, budget=1_000).verdict == "lost"
    assert not suggestion.won
    assert suggestion.move == rank_moves(lost)[0]
    deal = Board.deal("spider4", "1")
    unsettled = suggest(deal.view(), full=deal, budget=50)
    assert (unsettled.verdict, unsettled.positions) == ("unknown", 50)
    assert unsettled.move == rank_moves(deal)[0]


def test_a_view_alone_is_not_searched() -> None:
    view = Board.deal("spider4", "1").view()
    suggestion = suggest(view)
    assert (suggestion.verdict, suggestion.positions) == ("", 0)
    assert suggestion.move == rank_moves(view)[0]


def _positions() -> list[Board]:
    corpus = read_corpus(default_corpus().read_text(encoding="utf-8"))
    boards = [p.board for p in corpus[::60]]
    # a deal, a relaxed deal (no need to fill columns before dealing) and keep (complete
    # runs stay at the column ends, so the moves that lay one must be played)
    boards += [Board.deal(v, "short-way") for v in ("spider1", "spider2+relaxed", "spider1+keep")]
    return boards


@pytest.mark.parametrize("board", _positions(), ids=lambda b: b.variant.id)
def test_the_short_way_for_column_moves_changes_no_result(board: Board) -> None:
    weights = Weights(**board.variant.solver_weights)
    for width in (10, 150, None):
        results = []
        for short in (True, False):
            search = BeamSearch(board, weights, prune=width is not None)
            assert search.two_columns == board.variant.plain
            search.two_columns = short
            results.append(search.run(1_500, width))
        (fast, fast_complete), (slow, slow_complete) = results
        assert fast.verdict == slow.verdict
        assert (fast.positions, fast.line) == (slow.positions, slow.line)
        assert fast_complete == slow_complete
