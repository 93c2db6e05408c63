"""The solver: verdicts agree with a complete unpruned search, lines win when replayed,
the positions counter is exact and within budget, hints follow winning lines."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from spider_engine import Board, Move, PositionError, SpiderFamily, register_variant, standard_cards
from spider_engine.cards import UNKNOWN
from spider_engine.solver import hint, rank_moves, solve


def complete_search(board: Board, limit: int = 4_000) -> bool | None:
    """A plain, unpruned depth-first search over every reachable position: True when a
    win is reachable, False when none is, None when more than ``limit`` positions."""
    root = board.copy()
    seen = {root.key()[1:4]}
    stack = [root]
    while stack:
        b = stack.pop()
        if b.is_won():
            return True
        for m in list(b.legal_moves):
            b.push(m)
            k = b.key()[1:4]
            if k not in seen:
                seen.add(k)
                if len(seen) > limit:
                    return None
                child = b.copy()
                stack.append(child)
            b.pop()
    return False


@register_variant
class Mini(SpiderFamily):
    """A made-up Spider small enough for a complete search: two suits of five ranks, two
    copies, four columns of three cards and two deals of four."""

    base = "mini"
    cards = standard_cards("sh", ranks="A2345")
    suit_order = "sh"
    copies = 2
    columns = 4
    first_deal = (3, 3, 3, 3)
    stock_deals = (tuple(range(4)),) * 2
    run_length = 5
    listed = False


def made_up_positions(count: int) -> list[Board]:
    """Positions of the made-up variant: deals and positions a few random moves into them."""
    rng = random.Random(2026)
    boards = []
    seed = 0
    while len(boards) < count:
        variant = "mini+relaxed" if seed % 3 == 0 else "mini"
        board = Board.deal(variant, seed)
        seed += 1
        for _ in range(rng.randrange(0, 4)):
            moves = sorted(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        boards.append(Board.from_text(board.text()))
    return boards


def test_verdicts_agree_with_a_complete_search() -> None:
    checked = won = lost = 0
    for board in made_up_positions(400):
        truth = complete_search(board)
        if truth is None:
            continue
        checked += 1
        solution = solve(board, budget=200_000)
        assert solution.verdict in ("won", "lost"), board.text()
        assert (solution.verdict == "won") == truth, board.text()
        if solution.verdict == "won":
            won += 1
            replay = board.copy()
            for move in solution.line:
                replay.push(move)
            assert replay.is_won()
        else:
            lost += 1
        if checked == 200:
            break
    assert checked == 200
    assert won > 20 and lost > 20, (won, lost)


@pytest.mark.parametrize(
    ("variant", "seed", "budget"),
    [
        ("spider2", "3", 5000),
        ("spider4", "5", 3000),
        ("spider4", "2", 60_000),
        # the other decks, with their own moves (sets, Jokers, the reserve)
        ("myrmex", "solver-budget", 3_000),
        ("wizard+weave", "solver-budget", 3_000),
        ("sparrow", "solver-budget", 2_000),
        ("starfish", "solver-budget", 1_500),
    ],
)
def test_positions_count_move_generations_within_budget(
    variant: str, seed: str, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    board = Board.deal(variant, seed)
    calls = 0
    generate = Board.generate_moves

    def counting(self: Board) -> Iterator[Move]:
        nonlocal calls
        calls += 1
        return generate(self)

    monkeypatch.setattr(Board, "generate_moves", counting)
    solution = solve(board, budget=budget)
    assert solution.positions == calls <= budget
    if solution.verdict == "unknown":
        assert solution.positions == budget


def test_positions_count_when_won() -> None:
    board = Board.deal("spider1", "3")
    solution = solve(board, budget=100_000)
    assert solution.verdict == "won" and 0 < solution.positions < 100_000


def test_one_suit_deals_are_won_and_lines_replay() -> None:
    for seed in range(5):
        board = Board.deal("spider1", seed)
        solution = solve(board, budget=50_000)
        assert solution.verdict == "won"
        for move in solution.line:
            board.push(move)
        assert board.is_won()


def test_the_solver_refuses_views() -> None:
    with pytest.raises(PositionError, match="full position"):
        solve(Board.deal("spider4", "1").view())


def test_hint_is_the_first_move_of_a_winning_line() -> None:
    board = Board.deal("spider1", "7")
    solution = solve(board, budget=50_000)
    assert solution.verdict == "won"
    for step in range(0, 60, 20):
        position = board.copy()
        for move in solution.line[:step]:
            position.push(move)
        expected = solve(position, budget=50_000)
        assert expected.verdict == "won"
        assert hint(position, budget=50_000) == expected.line[0]


def test_hint_on_a_view_falls_back_to_the_players_ranking() -> None:
    board = Board.deal("spider4", "1")
    view = board.view()
    assert UNKNOWN in view.cols[0]
    move = hint(view)
    assert move == rank_moves(view)[0]


def test_players_ranking() -> None:
    board = Board.from_text(
        "spider1 |KsQsJsTs9s8s7s6s5s4s3s2s/|As/Ks|9s/|Ts/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks - -"
    )
    ranked = [m.text() for m in rank_moves(board)]
    assert ranked[0] == "b1a"  # finishes a run
    assert ranked[1] == "c1d"  # turns up a card
    assert ranked[2].startswith("a11")  # onto its own suit
    assert sorted(ranked) == board.legal_moves.texts()
    mixed = Board.from_text("spider4 |9h/|8h/|8s/|Kc/|Kc/|Kc/|Kc/|Kc/|Kc/|Kc - -")
    assert [m.text() for m in rank_moves(mixed)] == ["b1a", "c1a"]
