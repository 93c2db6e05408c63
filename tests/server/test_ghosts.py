"""Timed replays and ghosts: every action's race time kept; a finished run raced again."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from spider_client import protocol as p
from spider_engine import Board, Move
from spider_server.store import keys
from tests.leakscan import LeakScanner
from tests.server.server_helpers import Client, Player

VARIANT = "spider2"
OPTIONS: dict[str, Any] = {"variant": VARIANT, "countdown": 0, "time_limit": 600}
VERIFY = Path(__file__).resolve().parents[2] / "scripts" / "verify_race.py"


async def record_run(url: str, moves: int = 12, pause: float = 0.03) -> tuple[str, str, Any]:
    """A finished race on ``url`` in which one player made ``moves`` random moves, a pause
    apart, and resigned: (code, player, finished event)."""
    a = await Client.connect(url, name="alice")
    code = (await a.create(**OPTIONS)).race.code
    await a.ready(code)
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=5)
    for _ in range(moves):
        await pa.step()
        await asyncio.sleep(pause)
    await pa.resign()
    finished = await a.expect("finished")
    await a.close()
    return code, a.player, finished


def verify(finished: Any) -> subprocess.CompletedProcess[str]:
    data = json.dumps(p.fields_of(finished), default=p.fields_of)
    return subprocess.run(
        [sys.executable, str(VERIFY), "-", "--variant", VARIANT],
        input=data,
        capture_output=True,
        text=True,
        check=False,
    )


async def test_a_finished_race_keeps_each_actions_time(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    started = time.time()
    code, player, finished = await record_run(node.url, moves=6, pause=0.05)
    times = finished.replay_times[player]
    assert len(times) == len(finished.replays[player]) == 7
    assert times == sorted(times) and times[-1] - times[0] >= 250  # the pauses, in ms
    assert 0 <= times[-1] <= (time.time() - started) * 1000
    result = verify(finished)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "times" in result.stdout
    finished.replay_times = {player: times[::-1]}  # out of order: the check fails
    result = verify(finished)
    assert result.returncode == 1 and "FAIL" in result.stdout and "times" in result.stdout
    finished.replay_times = {player: times}
    # a spectator joining afterwards sees them too
    s = await Client.connect(node.url, name="late")
    joined = await s.join(code, role="spectator")
    assert joined.race.replay_times == finished.replay_times


async def test_a_race_without_times_still_finishes_and_loads(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    a = await Client.connect(node.url, name="alice")
    code = (await a.create(**OPTIONS)).race.code
    await a.ready(code)
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=3)
    await pa.step()
    await node.node.redis.delete(keys.times(code, a.player))  # as a race from before times
    await pa.step()
    await pa.resign()
    finished = await a.expect("finished")
    assert finished.replay_times == {} and len(finished.replays[a.player]) == 3
    assert verify(finished).returncode == 0
    with pytest.raises(AssertionError, match="kept no times"):
        await a.create(**OPTIONS, ghosts=[{"race": code, "player": a.player}])


async def test_ghost_creation_is_checked(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, player, _ = await record_run(node.url, moves=2, pause=0)
    b = await Client.connect(node.url, name="bob")
    running = (await b.create(**OPTIONS)).race.code
    bad = [
        ({**OPTIONS, "variant": "spider1"}, [{"race": code, "player": player}], "same"),
        ({**OPTIONS, "undo": False}, [{"race": code, "player": player}], "same"),
        (OPTIONS, [{"race": code, "player": "pnobody"}], "no player"),
        (OPTIONS, [{"race": "ZZZZZ", "player": player}], "no race"),
        (OPTIONS, [{"race": running, "player": b.player}], "not finished"),
        (OPTIONS, [{"race": code, "player": player}] * 6, "at most 5"),
        ({**OPTIONS, "seed": "x"}, [{"race": code, "player": player}], "no seed"),
    ]
    for options, ghosts, words in bad:
        reply = await b.request(p.CreateRace(req=0, **options, ghosts=ghosts))
        assert reply.type == "error" and words in reply.message, (words, reply)


async def test_a_ghost_replays_its_run_on_the_race_clock(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, player, recorded = await record_run(node.url, moves=12, pause=0.04)
    actions, times = recorded.replays[player], recorded.replay_times[player]
    b = await Client.connect(node.url, name="bob")
    joined = await b.create(**OPTIONS, ghosts=[{"race": code, "player": player}])
    ghosts = [i for i in joined.race.players if i.ghost]
    assert [(g.player, g.name, g.ready) for g in ghosts] == [("ghost1", "alice", True)]
    ghost_code = joined.race.code
    w = await Client.connect(node.url, name="watcher")
    await w.join(ghost_code, role="spectator")
    await b.ready(ghost_code)
    started = await b.expect("started")
    pb = Player(b, ghost_code, (await b.expect("ack", lambda m: m.seq == 0)).view, seed=9)
    await pb.step()
    arrivals: list[tuple[int, str, float]] = []
    while len(arrivals) < len(actions):  # a spectator gets every event at once
        event = await w.expect("progress", lambda m: m.player.player == "ghost1")
        # on the node's clock, the deployment's (this machine's corrected to Redis's, as
        # the race's start is): this machine's own may stand tens of ms apart on a busy day
        arrivals.append((event.player.moves, event.player.status, node.node.now()))
    # every recorded action once, in order: moves count up by one, the resign last
    assert [m for m, _, _ in arrivals] == [*range(1, len(actions)), len(actions) - 1]
    assert [s for _, s, _ in arrivals][-1] == "resigned"
    late = [
        at - (started.started_at + t / 1000) for (_, _, at), t in zip(arrivals, times, strict=True)
    ]
    print(f"ghost lateness: max {max(late) * 1000:.1f} ms over {len(late)} actions")
    assert min(late) > -0.05 and max(late) < 2.0  # on the race's clock (generous bound)
    await pb.resign()
    finished = await b.expect("finished")
    ranked = {r.player: r for r in finished.results}
    assert ranked["ghost1"].ghost and not ranked[b.player].ghost
    assert finished.replays["ghost1"] == actions and finished.replay_times["ghost1"] == times
    assert finished.boards["ghost1"] == recorded.boards[player]
    assert verify(finished).returncode == 0
    scanner = LeakScanner(VARIANT)
    for client, role in ((b, "player"), (w, "spectator")):
        for frame in client.frames:
            scanner.feed(role + client.label, role, frame)
    assert scanner.leaks == []


async def test_a_ghost_never_holds_the_race(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, player, recorded = await record_run(node.url, moves=8, pause=0.1)
    b = await Client.connect(node.url, name="bob")
    ghost_code = (await b.create(**OPTIONS, ghosts=[{"race": code, "player": player}])).race.code
    await b.ready(ghost_code)
    pb = Player(b, ghost_code, (await b.expect("ack", lambda m: m.seq == 0)).view, seed=9)
    await pb.resign()  # at once: the ghost has most of its run to go
    finished = await b.expect("finished")
    ghost = next(r for r in finished.results if r.player == "ghost1")
    # ranked by its recorded result, its whole run in the replay
    assert (ghost.status, ghost.moves) == ("resigned", 8)
    assert finished.replays["ghost1"] == recorded.replays[player]
    assert finished.boards["ghost1"] == recorded.boards[player]


async def test_two_nodes_emit_each_ghost_action_once(redis_server, server_node) -> None:
    node1 = await server_node(redis_server.url)
    node2 = await server_node(redis_server.url)
    code, player, recorded = await record_run(node1.url, moves=10, pause=0.03)
    b = await Client.connect(node1.url, name="bob")
    ghost_code = (await b.create(**OPTIONS, ghosts=[{"race": code, "player": player}])).race.code
    w = await Client.connect(node2.url, name="watcher")
    await w.join(ghost_code, role="spectator")
    await b.ready(ghost_code)
    await b.expect("ack", lambda m: m.seq == 0)
    for _ in recorded.replays[player]:
        await w.expect("progress", lambda m: m.player.player == "ghost1")
    seen = [e.player.moves for e in w.events("progress") if e.player.player == "ghost1"]
    assert seen == [*range(1, 11), 10]
    tries = [n.node.ghosts for n in (node1, node2)]
    assert sum(t.emitted for t in tries) == 11
    game = await node1.node.store.races.load_game(ghost_code, "ghost1")
    assert game is not None and game.seq == 11


def test_a_ghost_race_replays_board_by_board() -> None:
    """The pure rules: the ghost's outcome at each step is the recorded action's."""
    from spider_server import race as rules

    seed = "ghost-seed"
    board = Board.deal(VARIANT, seed)
    line = []
    for _ in range(5):
        move = next(m for m in board.legal_moves.texts() if m != "+")
        board.push(Move.from_text(move))
        line.append(move)
    run = rules.GhostRun(race="AAAAA", player="p1", name="a", actions=line, times=[0, 5, 5, 9, 30])
    change = rules.create_race(
        code="BBBBB",
        options=rules.RaceOptions(
            variant=VARIANT, max_players=1, time_limit=60, undo=True, live_boards=False, countdown=0
        ),
        creator="p2",
        name="b",
        now=100.0,
        seed=seed,
    )
    rules.add_ghosts(change, [run])
    assert change.race.players["ghost1"].ready and change.race.players["ghost1"].ghost
    ready = rules.set_ready(change.race, "p2", True, 100.0)
    assert ready is not None and ready.race.state is rules.RaceState.COUNTDOWN
    started = rules.start(ready.race, 100.0)
    games = {g.player: g for g in started.games}
    game = games["ghost1"]
    assert rules.next_due(started.race, game, run) == 100.0
    for i in range(5):
        outcome = rules.ghost_outcome(started.race, game, run)
        assert outcome.time_ms == run.times[i] and outcome.action == line[i]
        game = outcome.game
    assert rules.next_due(started.race, game, run) is None
    assert game.position == board.text()


async def test_the_days_leader_raced_as_a_ghost_during_the_day(
    redis_server, server_node, daily_seeds
) -> None:
    """Progress only: the ghost's counts and times, never a card of the day's deal."""
    from spider_engine.solver import solve

    node = await server_node(redis_server.url, pool_size=0, rate=1000.0, burst=1000)
    a = await Client.connect(node.url, name="ann")
    reply = await a.request(p.DailyRace(req=0, variant="spider1"))
    code = reply.race.code
    if reply.race.preparing:
        await a.expect("prepared", timeout=30)
    seed = (await node.node.redis.get(keys.daily("spider1", reply.race.daily))).decode()
    await a.ready(code)
    await a.expect("ack", lambda m: m.seq == 0)
    line = solve(Board.deal("spider1", seed), budget=200_000).line
    assert line
    for seq, move in enumerate(line, start=1):
        assert (await a.move(code, seq, move.text())).type == "ack"
    await a.expect("finished")
    b = await Client.connect(node.url, name="bob")
    entries = (
        await b.request(p.Leaderboard(req=0, variant="spider1"), ("leaderboard_reply",))
    ).entries
    assert [(e.player, e.race) for e in entries] == [(a.player, code)]
    run = [{"race": entries[0].race, "player": entries[0].player}]
    # not a race of its own before the day is over: that would show the deal
    refused = await b.request(p.CreateRace(req=0, variant="spider1", undo=True, ghosts=run))
    assert refused.type == "error" and "day is over" in refused.message
    joined = await b.request(p.DailyRace(req=0, variant="spider1", ghosts=run))
    assert joined.type == "joined" and joined.race.daily
    assert [(i.player, i.ghost) for i in joined.race.players] == [
        (b.player, False),
        ("ghost1", True),
    ]
    await b.ready(joined.race.code)
    await b.expect("ack", lambda m: m.seq == 0)
    # the ghost's whole line shows as progress: its counts go up to the win
    await b.expect("progress", lambda m: m.player.player == "ghost1" and m.player.status == "won")
    seen = [e.player.moves for e in b.events("progress") if e.player.player == "ghost1"]
    assert seen == sorted(seen) and seen[-1] == len(line)
    await b.send(p.Resign(code=joined.race.code, seq=1))
    assert (await b.expect("ack", lambda m: m.seq == 1)).status == "resigned"
    result = await b.expect("finished")
    assert result.seed is None and result.replays is None and result.replay_times is None
    ghost = next(r for r in result.results if r.player == "ghost1")
    assert ghost.ghost and ghost.status == "won" and ghost.rank == 1
    scanner = LeakScanner("spider1", secrets=(seed,))
    scanner.feed_all("bob", "player", b.frames)
    assert scanner.leaks == []
    # the leaderboard still has the one human who won
    again = await b.request(p.Leaderboard(req=0, variant="spider1"), ("leaderboard_reply",))
    assert [e.player for e in again.entries] == [a.player]
    # after its day, the run is raced in a race of its own (the deal is public then)
    await node.node.redis.hset(keys.meta(code), "daily", "2000-01-01")
    again_joined = await a.create(variant="spider1", undo=True, time_limit=3600, ghosts=[
        {"race": code, "player": a.player}
    ])  # fmt: skip
    assert [i.ghost for i in again_joined.race.players] == [False, True]
    assert again_joined.race.daily is None


async def test_a_ghost_in_a_live_board_race_shows_its_view_only(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, player, recorded = await record_run(node.url, moves=6, pause=0.02)
    b = await Client.connect(node.url, name="bob")
    ghost_code = (
        await b.create(**OPTIONS, live_boards=True, ghosts=[{"race": code, "player": player}])
    ).race.code
    w = await Client.connect(node.url, name="watcher")
    await w.join(ghost_code, role="spectator")
    await b.ready(ghost_code)
    await b.expect("ack", lambda m: m.seq == 0)
    for _ in recorded.replays[player]:
        await w.expect("board", lambda m: m.player == "ghost1")
    await b.send(p.Resign(code=ghost_code, seq=1))
    await b.expect("finished")
    scanner = LeakScanner(VARIANT)
    scanner.feed_all("watcher", "spectator", w.frames)
    scanner.feed_all("bob", "player", b.frames)
    assert scanner.leaks == []
