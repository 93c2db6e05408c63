"""Races with the solver: winnable deals from the pool, hints, the daily deal."""

from __future__ import annotations

import asyncio
import hashlib
import time
from typing import Any

import pytest
import redis.asyncio as aioredis

from spider_client import protocol as p
from spider_engine import Board, Move
from spider_engine.solver import rank_moves, solve
from spider_server import race as rules
from spider_server.runners.seeds import leaderboard_score, utc_day
from spider_server.store import keys
from tests.server.server_helpers import Client

VARIANT = "spider1"


def _replay(seed: str, actions: list[str]) -> Board:
    board = Board.deal(VARIANT, seed)
    for a in actions:
        if a == "undo":
            board.pop()
        elif a != "resign":
            board.push(Move.from_text(a))
    return board


async def _start(client: Client, code: str) -> p.Ack:
    await client.ready(code)
    ack: p.Ack = await client.expect("ack", lambda m: m.seq == 0 and m.code == code)
    return ack


PROVEN_QUICKLY = ["prepared-seed-7", "prepared-seed-1"]
"""Fresh spider1 seeds the solver wins within 1,500 positions: the node draws these (in
turn) instead of random ones, so that how long the proof takes is not a random draw's."""


async def test_winnable_race_prepares_then_starts_on_a_proven_seed(
    redis_server: Any, server_node: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    drawn = iter(PROVEN_QUICKLY)
    monkeypatch.setattr(rules, "new_seed", lambda: next(drawn))
    node = await server_node(redis_server.url, pool_size=0)
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant=VARIANT, winnable=True, countdown=0, time_limit=120)
    race = joined.race
    # the reply came before any seed was proven: creating never waits on a search
    assert race.winnable and race.preparing and race.state == "open"
    assert race.commitment is None and race.seed is None
    await a.ready(race.code)
    prepared = await a.expect("prepared", timeout=60)  # a bound for a busy machine
    assert prepared.commitment
    await a.expect("ack", lambda m: m.seq == 0)
    await a.send(p.Resign(code=race.code, seq=1))
    finished = await a.expect("finished")
    assert finished.commitment == prepared.commitment
    digest = hashlib.sha256(bytes.fromhex(finished.salt) + finished.seed.encode()).hexdigest()
    assert digest == finished.commitment
    assert finished.seed == PROVEN_QUICKLY[0]  # the first seed drawn, proven won
    assert solve(Board.deal(VARIANT, finished.seed), budget=200_000).verdict == "won"
    # the seed was secret until the finish
    assert not any(finished.seed.encode() in f for f in a.frames[:-1])
    await a.close()


async def test_winnable_race_pops_a_pooled_seed_at_once(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, pool_size=0)
    r = aioredis.from_url(redis_server.url)
    await r.rpush(keys.pool(VARIANT), "pooled-seed-1")
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant=VARIANT, winnable=True, countdown=0, time_limit=120)
    assert not joined.race.preparing and joined.race.commitment
    assert await r.llen(keys.pool(VARIANT)) == 0
    await _start(a, joined.race.code)
    await a.send(p.Resign(code=joined.race.code, seq=1))
    finished = await a.expect("finished")
    assert finished.seed == "pooled-seed-1"
    await r.aclose()
    await a.close()


async def test_hints_are_first_moves_of_winning_lines_and_counted(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, pool_size=0, hint_deadline=300)  # the budget decides
    budget = node.node.settings.hint_budget
    a = await Client.connect(node.url, name="ann")
    seed = "b"
    joined = await a.create(variant=VARIANT, seed=seed, hints=True, countdown=0, time_limit=300)
    code = joined.race.code
    assert joined.race.hints
    await _start(a, code)
    actions: list[str] = []
    for seq in range(1, 4):
        reply = await a.request(p.Hint(req=0, code=code), ("hint_reply", "error"), timeout=120)
        assert reply.type == "hint_reply", reply
        full = _replay(seed, actions)
        solution = solve(full, budget=budget)
        assert solution.verdict == "won"
        assert reply.move == solution.line[0].text()
        # the line it starts wins when replayed
        check = full.copy()
        for move in solution.line:
            check.push(move)
        assert check.is_won()
        ack = await a.move(code, seq, reply.move)
        assert ack.type == "ack", ack
        actions.append(reply.move)
    progress = await a.expect("progress", lambda m: m.player.hints == 3)
    assert progress.player.player == a.player
    await a.send(p.Resign(code=code, seq=4))
    finished = await a.expect("finished")
    assert finished.results[0].hints == 3
    rejoined = await a.join(code)
    assert rejoined.race.results is not None and rejoined.race.results[0].hints == 3
    await a.close()


async def test_hint_when_hints_are_off(redis_server: Any, server_node: Any) -> None:
    node = await server_node(redis_server.url, pool_size=0)
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant=VARIANT, countdown=0, time_limit=300)
    assert not joined.race.hints
    await _start(a, joined.race.code)
    reply = await a.request(p.Hint(req=0, code=joined.race.code), ("hint_reply", "error"))
    assert reply.type == "error" and reply.error == "hints_not_allowed"


async def _play_daily(client: Client, r: Any, *, delay: float = 0.0) -> tuple[str, p.Finished]:
    """Race the day's deal to a win along the solver's line; (seed, finished)."""
    reply = await client.request(p.DailyRace(req=0, variant=VARIANT))
    assert reply.type == "joined", reply
    race = reply.race
    assert race.daily == utc_day(time.time()) and race.max_players == 1
    code = race.code
    if race.preparing:
        await client.expect("prepared", timeout=20)
    seed = (await r.get(keys.daily(VARIANT, race.daily))).decode()
    await _start(client, code)
    if delay:
        await asyncio.sleep(delay)
    line = solve(Board.deal(VARIANT, seed), budget=200_000).line
    assert line
    for seq, move in enumerate(line, start=1):
        ack = await client.move(code, seq, move.text())
        assert ack.type == "ack", ack
    finished: p.Finished = await client.expect("finished")
    return seed, finished


async def test_daily_deal_keeps_its_seed_until_the_day_ends(
    redis_server: Any, server_node: Any, daily_seeds: Any
) -> None:
    node = await server_node(redis_server.url, pool_size=0, rate=1000.0, burst=1000)
    r = aioredis.from_url(redis_server.url)
    a = await Client.connect(node.url, name="ann")
    b = await Client.connect(node.url, name="bob")
    seed, fa = await _play_daily(a, r)
    seed_b, fb = await _play_daily(b, r, delay=0.3)
    assert seed == seed_b  # the same deal for everyone
    for f in (fa, fb):
        assert f.results[0].status == "won"
        assert f.seed is None and f.salt is None and f.replays is None and f.boards is None
    # asking again rejoins the day's race, still without the seed
    again = await a.request(p.DailyRace(req=0, variant=VARIANT))
    assert again.type == "joined" and again.race.code == fa.race
    assert again.race.seed is None and again.race.replays is None and again.boards is None
    watcher = await Client.connect(node.url, name="eve")
    await watcher.join(fa.race, role="spectator")
    for c in (a, b, watcher):
        assert not any(seed.encode() in frame for frame in c.frames), c.label
    # after the day, the race shows its deal
    stored = await node.node.store.races.load_race(fa.race)
    assert stored is not None and stored.options.daily
    later = rules.race_info(stored, now=rules.day_end(stored.options.daily) + 1)
    assert later.seed == seed and later.replays is not None
    assert rules.race_info(stored, now=time.time()).seed is None
    # the leaderboard of the day: by time, then moves
    for _ in range(50):  # the finish is recorded right after it is committed
        board = await a.request(p.Leaderboard(req=0, variant=VARIANT), ("leaderboard_reply",))
        if len(board.entries) == 2:
            break
        await asyncio.sleep(0.1)
    # both, in order of time then moves (which of the two was faster depends on the machine)
    order = [e.player for e in board.entries]
    assert sorted(order) == sorted([a.player, b.player])
    keys_in_order = [(e.time, e.moves) for e in board.entries]
    assert keys_in_order == sorted(keys_in_order)
    mine = {e.player: e for e in board.entries}
    assert mine[a.player].moves == fa.results[0].moves
    assert mine[b.player].moves == fb.results[0].moves
    day = utc_day(time.time())
    t = board.entries[0].time
    await r.zadd(
        keys.leaderboard(VARIANT, day),
        {"pX": leaderboard_score(t, 1), "pY": leaderboard_score(t + 100, 1)},
    )
    board = await a.request(p.Leaderboard(req=0, variant=VARIANT, day=day), ("leaderboard_reply",))
    assert [e.player for e in board.entries] == ["pX", *order, "pY"]
    assert [e.rank for e in board.entries] == [1, 2, 3, 4]
    await r.aclose()
    for c in (a, b, watcher):
        await c.close()


async def test_client_library_hint_daily_race_and_leaderboard(
    redis_server: Any, server_node: Any, daily_seeds: Any
) -> None:
    from spider_client import Client as Library
    from spider_client import HintsNotAllowed

    def running(c: Library) -> bool:
        return c.race is not None and c.race.state == "running" and c.view is not None

    node = await server_node(redis_server.url, pool_size=0)
    async with await Library.connect(node.url, name="ada") as client:
        await client.create_race(variant=VARIANT, seed="b", hints=True, countdown=0)
        await client.ready()
        await client.wait_until(running, timeout=10)
        move = await client.hint()
        full = Board.deal(VARIANT, "b")
        assert move == solve(full, budget=node.node.settings.hint_budget).line[0].text()
        await client.resign()
        await client.wait_until(lambda c: c.finished, timeout=10)
        await client.leave()
        await client.create_race(variant=VARIANT, countdown=0)
        await client.ready()
        await client.wait_until(running, timeout=10)
        try:
            await client.hint()
            raise AssertionError("a hint in a race without hints")
        except HintsNotAllowed:
            pass
        await client.resign()
        await client.wait_until(lambda c: c.finished, timeout=10)
        await client.leave()
        code = await client.daily_race(VARIANT)
        assert client.race is not None and client.race.daily and client.code == code
        assert await client.leaderboard(VARIANT) == []


@pytest.mark.parametrize(
    ("variant", "budget", "solved"),
    [
        # within these budgets the solver finds no line from the deal: the players' ranking
        # answers (with weave, among moves to and from the reserve)
        ("myrmex", 1_000, False),
        ("wizard+weave", 1_000, False),
        ("sparrow", 1_000, False),
        ("starfish", 1_000, False),
        # and here it finds one: its first move answers
        ("wizard+weave", 3_000, True),
    ],
)
async def test_hints_on_the_other_decks_are_moves_the_server_accepts(
    variant: str, budget: int, solved: bool, redis_server: Any, server_node: Any
) -> None:
    # the budget decides what the hint is, not the clock: the deadline and the wait are
    # far beyond what the search takes on a busy machine (over 10 s beside three programs)
    node = await server_node(redis_server.url, pool_size=0, hint_budget=budget, hint_deadline=300)
    a = await Client.connect(node.url, name="ann")
    seed = "hint-deck"
    joined = await a.create(variant=variant, seed=seed, hints=True, countdown=0, time_limit=300)
    code = joined.race.code
    await _start(a, code)
    full = Board.deal(variant, seed)
    for seq in range(1, 3):
        reply = await a.request(p.Hint(req=0, code=code), ("hint_reply", "error"), timeout=120)
        assert reply.type == "hint_reply", reply
        found = solve(full, budget=budget)
        if seq == 1:
            assert (found.verdict == "won") is solved
        expected = found.line[0] if found.verdict == "won" else rank_moves(full)[0]
        assert reply.move == expected.text()
        ack = await a.move(code, seq, reply.move)
        assert ack.type == "ack", ack
        full.push(Move.from_text(reply.move))
        assert ack.view == full.view().text()
    await a.close()
