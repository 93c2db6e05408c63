"""The ranking of rules.md §7a ("Race results"), table-driven over made-up results, then
through real games: winners by time, then fewer actions; then everyone who played on, by
progress (sets completed, cards turned up, suited score), then by who reached it first;
forfeits (resigned, left, abandoned) last by the same keys; equal keys share a rank."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from spider_client.protocol import CreateRace
from spider_engine import Board
from spider_server import race as r


@dataclass(frozen=True)
class Line:
    """A made-up player's end of race: status, then what the ranking may read."""

    name: str
    status: str
    time: float | None = None
    moves: int = 0
    sets: int = 0
    turned_up: int = 0
    suited: int = 0
    raised_at: float = 0.0
    score: int = 500


def _entries(lines: list[Line]) -> list[r.Entry]:
    return [
        r.Entry(
            player=line.name,
            name=line.name,
            order=order,
            status=line.status,
            time=line.time,
            moves=line.moves,
            runs=line.sets,
            turned_up=line.turned_up,
            suited=line.suited,
            raised_at=line.raised_at,
            score=line.score,
        )
        for order, line in enumerate(lines)
    ]


# (what it shows, the players in join order, the expected ranking as (name, rank))
TABLE: list[tuple[str, list[Line], list[tuple[str, int]]]] = [
    (
        "an early resign with few moves never ranks above a player who played on",
        [
            Line("bob", "resigned", moves=10, turned_up=3, suited=5, raised_at=12.0, score=490),
            Line("alice", "timeout", moves=63, turned_up=15, suited=20, raised_at=700.0, score=437),
            Line("bot", "timeout", moves=18, turned_up=4, suited=6, raised_at=100.0, score=482),
            Line("idle", "timeout", moves=0, score=500),
        ],
        [("alice", 1), ("bot", 2), ("idle", 3), ("bob", 4)],
    ),
    (
        "a timeout ranks above a resign with more progress",
        [
            Line("quitter", "resigned", moves=300, sets=2, turned_up=40, suited=60, score=400),
            Line("timed", "timeout", moves=5, turned_up=1, suited=1, raised_at=3.0, score=495),
        ],
        [("timed", 1), ("quitter", 2)],
    ),
    (
        "a stuck player ranks above one who left or was abandoned with more progress",
        [
            Line("left", "left", sets=3, turned_up=44),
            Line("gone", "abandoned", sets=4, turned_up=44),
            Line("stuck", "stuck", turned_up=2),
        ],
        [("stuck", 1), ("gone", 2), ("left", 3)],
    ),
    (
        "two stuck players: sets completed first, then cards turned up, then suited score",
        [
            Line("s1", "stuck", sets=1, turned_up=20, suited=10),
            Line("s2", "stuck", sets=1, turned_up=25, suited=3),
            Line("s3", "stuck", sets=0, turned_up=44, suited=90),
            Line("s4", "stuck", sets=1, turned_up=20, suited=11),
        ],
        [("s2", 1), ("s4", 2), ("s1", 3), ("s3", 4)],
    ),
    (
        "equal progress: who reached it first ranks first",
        [
            Line("late", "timeout", sets=1, turned_up=9, suited=4, raised_at=50.0),
            Line("early", "timeout", sets=1, turned_up=9, suited=4, raised_at=30.0),
        ],
        [("early", 1), ("late", 2)],
    ),
    (
        "winners by race time, then fewer actions, all above the others",
        [
            Line("w1", "won", time=100.0, moves=300, sets=8, turned_up=44, suited=96),
            Line("w2", "won", time=100.0, moves=250, sets=8, turned_up=44, suited=96),
            Line("w3", "won", time=90.0, moves=500, sets=8, turned_up=44, suited=96),
            Line("near", "timeout", sets=7, turned_up=44, suited=95, raised_at=20.0),
        ],
        [("w3", 1), ("w2", 2), ("w1", 3), ("near", 4)],
    ),
    (
        "ties share a rank (1, 2, 2, 4), in join order",
        [
            Line("w", "won", time=10.0, moves=100),
            Line("y", "timeout", turned_up=5, suited=2, raised_at=8.0, score=420),
            Line("x", "stuck", turned_up=5, suited=2, raised_at=8.0, score=480),
            Line("z", "timeout", turned_up=4, suited=9, raised_at=1.0),
        ],
        [("w", 1), ("y", 2), ("x", 2), ("z", 4)],
    ),
    (
        "winners of equal time and actions share a rank",
        [
            Line("a", "won", time=61.5, moves=200),
            Line("b", "won", time=61.5, moves=200, suited=90),
            Line("c", "won", time=61.6, moves=150),
        ],
        [("a", 1), ("b", 1), ("c", 3)],
    ),
    (
        "forfeits rank among themselves by the same keys, and tie likewise",
        [
            Line("res", "resigned", turned_up=10, raised_at=40.0),
            Line("aband", "abandoned", turned_up=10, raised_at=20.0),
            Line("left", "left", sets=1),
            Line("res2", "resigned", turned_up=10, raised_at=40.0),
        ],
        [("left", 1), ("aband", 2), ("res", 3), ("res2", 3)],
    ),
    (
        "the classic score plays no part: fewer moves never help",
        [
            Line("thrifty", "timeout", moves=2, turned_up=1, score=498),
            Line("busy", "timeout", moves=400, turned_up=1, suited=1, raised_at=900.0, score=100),
        ],
        [("busy", 1), ("thrifty", 2)],
    ),
    (
        "a game still playing when the ranking is made counts as played on",
        [
            Line("quit", "resigned", turned_up=30),
            Line("on", "playing"),
        ],
        [("on", 1), ("quit", 2)],
    ),
]


@pytest.mark.parametrize(("lines", "expected"), [t[1:] for t in TABLE], ids=[t[0] for t in TABLE])
def test_ranking_table(lines: list[Line], expected: list[tuple[str, int]]) -> None:
    results = r.rank(_entries(lines))
    assert [(x.player, x.rank) for x in results] == expected
    # nor on the order the entries come in (among equals, each keeps its join order)
    assert [(x.player, x.rank) for x in r.rank(reversed(_entries(lines)))] == expected
    by_name = {line.name: line for line in lines}
    for x in results:  # the scores are shown as they are; time only for winners
        line = by_name[x.player]
        assert (x.status, x.moves, x.runs, x.score) == (
            line.status,
            line.moves,
            line.sets,
            line.score,
        )
        assert x.time == (line.time if line.status == "won" else None)


def test_shared_ranks() -> None:
    assert r.shared_ranks([]) == []
    assert r.shared_ranks(["a", "b", "b", "c"]) == [1, 2, 2, 4]
    assert r.shared_ranks([(1, 2), (1, 2), (1, 2)]) == [1, 1, 1]
    assert r.shared_ranks([1, 2, 3]) == [1, 2, 3]


def test_forfeit_and_terminal_statuses() -> None:
    assert {"resigned", "left", "abandoned", "idle"} == r.FORFEIT
    assert r.Status.ABANDONED == "abandoned" and r.FORFEIT <= r.TERMINAL
    assert r.Status.IDLE == "idle"
    assert {"won", "stuck", "timeout"} <= r.TERMINAL
    assert not {"playing", "waiting"} & r.TERMINAL


# -- through real games ---------------------------------------------------------------------


def _running(players: int, **changes: object) -> tuple[r.Race, dict[str, r.Game]]:
    options = r.RaceOptions.from_request(
        CreateRace(req=1, variant="spider1", countdown=0, **changes),  # type: ignore[arg-type]
        r.Limits(),
    )
    race = r.create_race(
        code="ABCDE", options=options, creator="p1", name="p1", now=100.0, seed="7"
    ).race
    for i in range(2, players + 1):
        change = r.join(race, f"p{i}", f"p{i}", 100.0)
        assert change is not None
        race = change.race
    for pid in list(race.players):
        change = r.set_ready(race, pid, True, 100.0)
        assert change is not None
        race = change.race
    start = r.start(race, 100.0)
    return start.race, {g.player: g for g in start.games}


def _turning_move(game: r.Game) -> str:
    """A column move that turns a card up, from the game's position."""
    board = Board.from_text(game.position)
    return next(
        m.text()
        for m in board.legal_moves
        if m.kind == "move" and m.count == len(board.cols[m.src]) - board.down[m.src]
    )


def test_progress_and_the_time_it_was_last_raised() -> None:
    race, games = _running(1, undo=True)
    game = games["p1"]
    deal = Board.from_text(game.position)
    assert game.progress == (0, 0, deal.suited_score()) and game.raised_at == 0.0
    t0 = race.started_at or 0.0
    move = _turning_move(game)
    up = r.apply_action(race, game, "move", move=move, now=t0 + 5.0).game
    assert up.turned_up == 1 and up.progress > game.progress and up.raised_at == 5.0
    assert up.suited == Board.from_text(up.position).suited_score()
    # an undo takes the card back down and its count with it; the time stays
    down = r.apply_action(race, up, "undo", actions=[move], now=t0 + 8.0).game
    assert down.progress == game.progress and down.raised_at == 5.0
    # the same move again raises it again, later
    again = r.apply_action(race, down, "move", move=move, now=t0 + 10.0).game
    assert again.progress == up.progress and again.raised_at == 10.0
    # a resign keeps the progress and its time
    out = r.apply_action(race, again, "resign", now=t0 + 11.0)
    assert out.game.progress == again.progress and out.game.raised_at == 10.0
    assert (out.entry.suited, out.entry.raised_at) == (again.suited, 10.0)


def test_finish_ranks_an_early_resign_below_a_timeout() -> None:
    race, games = _running(3, undo=True)
    t0 = race.started_at or 0.0
    # p1 turns a card up, then resigns early; p2 never moves; p3 turns a card up later
    p1 = r.apply_action(race, games["p1"], "move", move=_turning_move(games["p1"]), now=t0 + 1)
    race = replace(race, players={**race.players, "p1": p1.entry})
    quit_ = r.apply_action(race, p1.game, "resign", now=t0 + 2)
    race = replace(race, players={**race.players, "p1": quit_.entry})
    p3 = r.apply_action(race, games["p3"], "move", move=_turning_move(games["p3"]), now=t0 + 30)
    race = replace(race, players={**race.players, "p3": p3.entry})
    final = {"p1": quit_.game, "p2": games["p2"], "p3": p3.game}
    change = r.finish(race, final, {}, race.ends_at or 0.0)
    results = change.race.final.results  # type: ignore[union-attr]
    assert [(x.player, x.status, x.rank) for x in results] == [
        ("p3", "timeout", 1),
        ("p2", "timeout", 2),
        ("p1", "resigned", 3),
    ]
