"""The race's rules without I/O: lifecycle, named errors, actions, ranking, fairness."""

from __future__ import annotations

import hashlib
from dataclasses import replace

import pytest

from spider_client.protocol import CreateRace
from spider_engine import Board, Move
from spider_server import race as r
from spider_server.errors import (
    GameOver,
    IllegalMove,
    InvalidMessage,
    MalformedMove,
    NotAPlayer,
    RaceFull,
    UndoNotAllowed,
    WrongState,
)

LIMITS = r.Limits()


def _options(**changes) -> r.RaceOptions:
    return r.RaceOptions.from_request(
        CreateRace(req=1, variant="spider1", countdown=5, **changes), LIMITS
    )


def _open_race(players: int = 2, **changes) -> r.Race:
    change = r.create_race(
        code="ABCDE", options=_options(**changes), creator="p1", name="one", now=100.0, seed="7"
    )
    race = replace(change.race, version=1)
    for i in range(2, players + 1):
        c = r.join(race, f"p{i}", f"n{i}", 100.0)
        assert c is not None
        race = replace(c.race, version=race.version + 1)
    return race


def _running(players: int = 2, **changes) -> tuple[r.Race, dict[str, r.Game]]:
    race = _open_race(players, **changes)
    for pid in list(race.players):
        c = r.set_ready(race, pid, True, 100.0)
        assert c is not None
        race = c.race
    assert race.state is r.RaceState.COUNTDOWN and race.starts_at == 100.0 + race.options.countdown
    change = r.start(race, race.starts_at or 0)
    return change.race, {g.player: g for g in change.games}


def test_create_and_join() -> None:
    change = r.create_race(code="ABCDE", options=_options(), creator="p1", name="one", now=1.0)
    race = change.race
    assert race.state is r.RaceState.OPEN and list(race.players) == ["p1"]
    assert len(race.seed) == 32 and len(race.salt) == 64
    assert (
        race.commitment == hashlib.sha256(bytes.fromhex(race.salt) + race.seed.encode()).hexdigest()
    )
    assert [type(e).__name__ for _, e in change.events] == ["PlayerJoined"]
    assert r.join(race, "p1", "one", 2.0) is None  # a rejoin changes nothing
    full = _open_race(2, max_players=2)
    with pytest.raises(RaceFull):
        r.join(full, "p3", "three", 2.0)


def test_options_out_of_range() -> None:
    for bad in ({"variant": "spider9"}, {"variant": "spider4+zzz"}, {"max_players": 0}, {"max_players": 99},
                {"time_limit": 0}, {"countdown": 61}, {"seed": ""}, {"seed": "x" * 201}):  # fmt: skip
        msg = CreateRace(req=1, **bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidMessage):
            r.RaceOptions.from_request(msg, LIMITS)
    assert (
        r.RaceOptions.from_request(CreateRace(req=1, variant="spider4+relaxed"), LIMITS).variant
        == "spider4+relaxed"
    )


def test_ready_countdown_start() -> None:
    race = _open_race(2)
    c = r.set_ready(race, "p1", True, 100.0)
    assert c is not None and c.race.state is r.RaceState.OPEN
    race = c.race
    assert r.set_ready(race, "p1", True, 101.0) is None
    with pytest.raises(NotAPlayer):
        r.set_ready(race, "p9", True, 101.0)
    with pytest.raises(WrongState):
        r.start(race, 200.0)
    c = r.set_ready(race, "p2", True, 102.0)
    assert c is not None and c.race.state is r.RaceState.COUNTDOWN
    race = c.race
    assert [type(e).__name__ for _, e in c.events] == ["PlayerReady", "Countdown"]
    with pytest.raises(WrongState):
        r.set_ready(race, "p1", False, 103.0)
    assert r.due_transition(race, 106.9) is None
    assert r.due_transition(race, 107.0) == "start"
    with pytest.raises(WrongState):
        r.start(race, 106.0)
    start = r.start(race, 108.5)
    assert start.race.started_at == 107.0  # the scheduled time, whoever starts it late
    assert start.race.ends_at == 107.0 + race.options.time_limit
    deal = Board.deal("spider1", "7")
    assert {g.position for g in start.games} == {deal.text()}
    assert all(e.status == "playing" for e in start.race.players.values())


def test_leave() -> None:
    race = _open_race(2)
    c = r.leave(race, "p2", 101.0)
    assert list(c.race.players) == ["p1"] and not c.delete
    c = r.leave(c.race, "p1", 102.0)
    assert c.delete
    # the last one not ready leaves: the rest are ready, the countdown starts
    race = _open_race(2)
    c1 = r.set_ready(race, "p1", True, 101.0)
    assert c1 is not None
    c = r.leave(c1.race, "p2", 102.0)
    assert c.race.state is r.RaceState.COUNTDOWN
    running, _ = _running()
    with pytest.raises(WrongState):
        r.leave(running, "p1", 200.0)


def test_actions_and_undo_semantics() -> None:
    race, games = _running(1, undo=True)
    game = games["p1"]
    now = (race.started_at or 0) + 1
    with pytest.raises(MalformedMove):
        r.apply_action(race, game, "move", move="zz", now=now)
    board = Board.from_text(game.position)
    legal = board.legal_moves.texts()
    illegal = next(
        f"{a}1{b}" for a in "abcdefghij" for b in "abcdefghij" if a != b and f"{a}1{b}" not in legal
    )
    with pytest.raises(IllegalMove):
        r.apply_action(race, game, "move", move=illegal, now=now)
    with pytest.raises(UndoNotAllowed):
        r.apply_action(race, game, "undo", actions=[], now=now)
    # play until a move turns a card up, then undo it: the card is face down (unknown) again
    actions: list[str] = []
    while True:
        before = Board.from_text(game.position)
        move = next(
            (
                m
                for m in before.legal_moves
                if m.kind == "move" and m.count == len(before.cols[m.src]) - before.down[m.src]
            ),
            Move.deal(),
        )
        out = r.apply_action(race, game, "move", move=move.text(), actions=actions, now=now)
        actions.append(out.action)
        assert out.game.seq == game.seq + 1 and out.ack.seq == out.game.seq
        assert out.ack.view == Board.from_text(out.game.position).view_text()
        game = out.game
        if game.turned_up > 0:
            break
    out = r.apply_action(race, game, "undo", actions=actions, now=now)
    assert out.action == "undo" and out.game.turned_up == 0
    assert out.ack.view == before.view_text()
    expected = r.replay("spider1", "7", actions)
    expected.pop()
    assert out.game.position == expected.text()
    assert out.game.moves == game.moves + 1 and out.game.score == expected.classic_score(
        game.moves + 1
    )
    assert r.effective_moves([*actions, "undo"]) == actions[:-1]
    done = r.apply_action(race, out.game, "resign", now=now)
    assert done.game.status == "resigned" and done.game.moves == out.game.moves
    with pytest.raises(GameOver):
        r.apply_action(race, done.game, "move", move="+", now=now)
    with pytest.raises(GameOver):
        r.apply_action(race, game, "move", move="+", now=race.ends_at or 0)


def test_no_card_in_events() -> None:
    race, games = _running(1)
    out = r.apply_action(race, games["p1"], "move", move="+", now=(race.started_at or 0) + 1)
    assert [type(e).__name__ for _, e in out.events] == ["Progress"]
    live, live_games = _running(1, live_boards=True)
    out = r.apply_action(live, live_games["p1"], "move", move="+", now=(live.started_at or 0) + 1)
    assert [(a, type(e).__name__) for a, e in out.events] == [
        ("all", "Progress"),
        ("spectators", "BoardShown"),
    ]


def test_won_and_stuck() -> None:
    race, games = _running(1, undo=False)
    near = "spider1 |KsQsJsTs9s8s7s6s5s4s3s2s/|As/|/|/|/|/|/|/|/| - sssssss"
    game = replace(games["p1"], position=near)
    out = r.apply_action(race, game, "move", move="b1a", now=(race.started_at or 0) + 12.5)
    assert out.game.status == "won" and out.game.time == 12.5 and out.ack.status == "won"
    stuck = "spider1 |Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|3s/|Ks2s - -"
    out = r.apply_action(
        race,
        replace(games["p1"], position=stuck),
        "move",
        move="j1i",
        now=(race.started_at or 0) + 3,
    )
    assert out.game.status == "stuck"
    # with undo, a stuck player plays on
    race_u, games_u = _running(1, undo=True)
    out = r.apply_action(
        race_u,
        replace(games_u["p1"], position=stuck),
        "move",
        move="j1i",
        now=(race_u.started_at or 0) + 3,
    )
    assert out.game.status == "playing"


def test_finish_due_and_results() -> None:
    race, games = _running(3)
    assert r.due_transition(race, (race.started_at or 0) + 1) is None
    with pytest.raises(WrongState):
        r.finish(race, games, {}, (race.started_at or 0) + 1)
    end = race.ends_at or 0
    change = r.finish(race, games, {p: [] for p in games}, end)
    assert change.finished and change.race.state is r.RaceState.FINISHED
    assert {res.status for res in change.race.final.results} == {"timeout"}  # type: ignore[union-attr]
    assert [res.rank for res in change.race.final.results] == [1, 1, 1]  # type: ignore[union-attr]
    info = r.race_info(change.race)
    assert info.seed == "7" and info.results is not None
    assert r.race_info(race).seed is None and r.race_info(race).salt is None


def test_ranking() -> None:
    def e(
        pid: str, order: int, status: str, runs: int, score: int, time: float | None = None
    ) -> r.Entry:
        return r.Entry(
            player=pid, name=pid, order=order, status=status, runs=runs, score=score, time=time
        )

    results = r.rank([
        e("slow", 0, "won", 8, 900, 300.0),
        e("resigned", 1, "resigned", 3, 700),
        e("fast", 2, "won", 8, 850, 100.0),
        e("timeout", 3, "timeout", 3, 650),
        e("tie", 4, "left", 3, 700),
        e("stuck", 5, "stuck", 4, 400),
    ])  # fmt: skip
    # rules.md §7a: winners, then those who played on by progress, then forfeits
    assert [x.player for x in results] == ["fast", "slow", "stuck", "timeout", "resigned", "tie"]
    assert [x.rank for x in results] == [1, 2, 3, 4, 5, 5]
    assert results[0].time == 100.0 and results[2].time is None


def test_codes() -> None:
    code = r.new_code()
    assert len(code) == 5 and r.normalize_code(f"  {code.lower()} ") == code
    assert r.normalize_code("O0I1L") is None and r.normalize_code("ABCDEF") is None
