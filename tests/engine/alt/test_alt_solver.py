"""The solver on the alternative decks: winning lines replay to a win, made-up positions near
a win are won and small hopeless ones lost, and hints are legal moves (the positions counter
is checked on every deck in tests/engine/test_solver.py)."""

from __future__ import annotations

import pytest

from spider_engine import Board, Move
from spider_engine.solver import hint, rank_moves, solve
from tests.engine.alt.alt_helpers import board

# Deals the solver wins within a small budget (found by running it; the test checks that the
# verdict holds and that the line wins when replayed with the board's own rules).
QUICK_WINS = [
    ("myrmex", "solver-3", 5_000),
    ("myrmex", "solver-0", 10_000),
    ("wizard", "solver-0", 5_000),
    ("wizard", "solver-2", 5_000),
    ("wizard+weave", "solver-2", 5_000),
    ("wizard+weave", "solver-0", 5_000),
    # Sparrow's deck is plain Python, the slowest per position: a deal won in 12,283
    # positions here, and one that takes three times as long in `make acceptance`
    ("sparrow", "solver-18", 20_000),
    pytest.param("sparrow", "solver-1", 50_000, marks=pytest.mark.slow),
    ("starfish", "solver-5", 6_000),
    ("starfish", "solver-4", 8_000),
    # blind deals face down what the others deal face up; the solver sees every card
    ("myrmex+blind", "solver-3", 3_000),
    # under keep, completed runs stay on the table and the game is won with all of them there
    ("spider1+keep", "solver-0", 5_000),
]


def replays_to_a_win(start: Board, line: tuple[Move, ...]) -> bool:
    position = start.copy()
    for move in line:
        position.push(move)  # raises on an illegal move
    return position.is_won()


@pytest.mark.parametrize(("variant", "seed", "budget"), QUICK_WINS)
def test_won_lines_replay_to_a_win(variant: str, seed: str, budget: int) -> None:
    deal = Board.deal(variant, seed)
    solution = solve(deal, budget=budget)
    assert solution.verdict == "won", (variant, seed, solution.positions)
    assert 0 < solution.positions <= budget
    assert replays_to_a_win(deal, solution.line)


# -- made-up positions ------------------------------------------------------------------------

NEAR_WINS = {
    # the Moons' group in four pieces: Am onto 2mk, then the pieces onto each other
    "myrmex": board("myrmex", ["Cm9ms8ms7ml", "6mw5ml4ms", "3mw2mk", "Am"], "-", "swlyk"),
    # the Swords complete once As comes onto 2s; then 21t, the Tower's last trump, leaves
    "wizard": board(
        "wizard", ["KsQsNsPsTs9s8s7s", "21t6s5s4s3s2s", "As"], "-", "wcd" + "t" * 21
    ),
    # the reserve holds the Ace; the Fool leaves once 2t is off it, then 1t and 2t
    "wizard+weave": board(
        "wizard+weave",
        ["KwQwNwPwTw9w8w7w6w5w4w3w2w", "1t0t2t"],
        "-",
        "cds",
        "Aw",
    ),
    # the four Winds taken off uncover the 1 of Bamboo's place
    "sparrow": board(
        "sparrow", ["Db9b8b7b6b5b4b3b2bEw", "1bSw", "Ww", "Nw"], "-", "bbbcccmmmmwwwff"
    ),
    # As, which ends the Spades, lies under 2h Ah: a Joker (or an empty column) frees it
    "starfish": board(
        "starfish",
        ["KhQhJhTh9h8h7h6h5h4h3hAs2hAh", "KsQsJsTs9s8s7s6s5s4s3s2s"],
        "-",
        "-",
        "1",
    ),
}


@pytest.mark.parametrize("variant", sorted(NEAR_WINS))
def test_a_position_near_a_win_is_won(variant: str) -> None:
    position = NEAR_WINS[variant]
    assert not position.is_won()
    solution = solve(position, budget=2_000)
    assert solution.verdict == "won"
    assert replays_to_a_win(position, solution.line)


HOPELESS = {
    # nothing can make a ten-card group: the Ace goes onto the 2 and back
    "myrmex": board("myrmex", ["Am", "2sy", "3sk"]),
    # the Tower waits for the Fool, which is not here, and Kw has no run
    "wizard": board("wizard", ["Kw", "5t", "9t7t"]),
    # three Winds and no North Wind: no set can be taken off
    "sparrow": board("sparrow", ["Ew", "Sw", "Ww5b", "6c"]),
    # no thirteen-card run can be made, even with the Jokers
    "starfish": board("starfish", ["Ah3h", "2s", "Kc4d"], "-", "-", "6"),
}


@pytest.mark.parametrize("variant", sorted(HOPELESS))
def test_a_small_hopeless_position_is_lost(variant: str) -> None:
    solution = solve(HOPELESS[variant], budget=200_000)
    assert solution.verdict == "lost"
    assert solution.line == ()
    assert 0 < solution.positions < 200_000


# -- hints ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["myrmex", "wizard+weave", "sparrow", "starfish"])
def test_hint_is_a_legal_move(variant: str) -> None:
    deal = Board.deal(variant, "solver-hint")
    move = hint(deal, budget=500)
    assert move is not None and deal.is_legal(move)


@pytest.mark.parametrize("variant", sorted(NEAR_WINS))
def test_hint_near_a_win_starts_a_winning_line(variant: str) -> None:
    position = NEAR_WINS[variant]
    move = hint(position, budget=2_000)
    assert move is not None and position.is_legal(move)
    position = position.copy()
    position.push(move)
    assert solve(position, budget=2_000).verdict == "won"


def test_hint_on_a_blind_view_is_a_legal_move() -> None:
    deal = Board.deal("sparrow+blind", "solver-hint")
    view = deal.view()
    assert view.is_view()
    move = hint(view)
    assert move is not None and view.is_legal(move)
    # with the full position at hand, the hint is the first move of a line found there,
    # or else the players' first choice in that position
    full_hint = hint(view, budget=500, full=deal)
    assert full_hint is not None and deal.is_legal(full_hint)
    found = solve(deal, budget=500)
    expected = found.line[0] if found.verdict == "won" else rank_moves(deal)[0]
    assert full_hint == expected
