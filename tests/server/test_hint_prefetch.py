"""Hints searched before they are asked for (spider_server.runners.hints), on a real node with real
solver workers and real clients: a move starts a prefetch, whose hint then answers at once
from the cache (the solver's at the prefetch's budget); a newer move cancels the older
prefetch without killing its worker; a race's prefetches stop at ``prefetch_per_race``;
races without hints never prefetch; the node's own process runs no search."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from spider_client import protocol as p
from spider_engine import Board, Move
from spider_engine.search import BeamSearch
from spider_engine.solver import WON, rank_moves, solve
from tests.server.server_helpers import Client

BOUND = 60.0
SEED = "prefetch-1"


def expected_moves(full: Board, budget: int) -> tuple[list[str], str]:
    """The suggestions the solver gives at ``budget``: its line's first move, then the
    players' ranking's others (at most 3), and its verdict."""
    solution = solve(full, budget=budget)
    ranked = [m.text() for m in rank_moves(full)]
    if solution.verdict == WON and solution.line:
        first = solution.line[0].text()
        ranked = [first, *(m for m in ranked if m != first)]
    return ranked[:3], solution.verdict


async def until(test: Any, what: str) -> None:
    deadline = time.monotonic() + BOUND
    while not test():
        assert time.monotonic() < deadline, what
        await asyncio.sleep(0.02)


async def start(node: Any, client: Client, *, hints: bool = True, seed: str = SEED) -> str:
    joined = await client.create(variant="spider4", seed=seed, hints=hints, countdown=0)
    code = joined.race.code
    await client.ready(code)
    await client.expect("ack", lambda m: m.seq == 0 and m.code == code)
    return code


async def ask(client: Client, code: str) -> Any:
    message = p.Hint(req=client.next_req(), code=code)
    await client.send(message)
    return await client.expect(
        ("hint_reply", "error"), lambda m: m.req == message.req, timeout=BOUND
    )


async def position(node: Any, code: str, player: str) -> str:
    game = await node.node.store.races.load_game(code, player)
    assert game is not None
    return str(game.position)


async def test_a_move_prefetches_and_its_hint_comes_from_the_cache(
    redis_server: Any, server_node: Any
) -> None:
    budget = 3000
    node = await server_node(
        redis_server.url, pool_size=0, solver_warm=1, hint_budget=budget, hint_quick_budget=200
    )
    hints = node.node.hints
    started: list[tuple[str, str]] = []
    hints.on_prefetch = lambda code, pos: started.append((code, pos))
    a = await Client.connect(node.url, name="ann")
    code = await start(node, a)
    full = Board.deal("spider4", SEED)
    first = rank_moves(full)[0]
    ack = await a.move(code, 1, first.text())
    assert ack.type == "ack", ack
    full.push(first)
    after = await position(node, code, a.player)
    await until(lambda: (code, after) in started, "a prefetch of the new position")
    await until(lambda: hints.cache.get(after, budget) is not None, "the prefetch's hint kept")
    reply = await ask(a, code)
    assert reply.type == "hint_reply", reply
    moves, verdict = expected_moves(Board.from_text(after), budget)
    assert reply.moves == moves and reply.move == moves[0] and reply.verdict == verdict
    assert node.node.metrics.hints_total["cache"] == 1
    assert node.node.metrics.hints_total["quick"] == 0
    # the hint counts like any other
    progress = await a.expect("progress", lambda m: m.player.hints == 1)
    assert progress.player.player == a.player
    await a.close()


async def test_a_newer_move_cancels_the_older_prefetch(redis_server: Any, server_node: Any) -> None:
    # a budget no spider4 search finishes within the test
    node = await server_node(
        redis_server.url, pool_size=0, solver_warm=1, hint_budget=10**8, hint_deadline=300
    )
    hints, workers = node.node.hints, node.node.workers
    a = await Client.connect(node.url, name="ann")
    code = await start(node, a)
    full = Board.deal("spider4", SEED)
    for seq in (1, 2):
        move = rank_moves(full)[0]
        assert (await a.move(code, seq, move.text())).type == "ack"
        full.push(move)
        now = await position(node, code, a.player)
        await until(lambda pos=now: hints.searching(pos), "the prefetch of the new position")
        await until(lambda: workers.running == 1, "the prefetch running")
        if seq == 1:
            older, pids = now, workers.pids()
    assert not hints.searching(older)
    assert hints.spent(code) == 3, hints.spent(code)
    assert workers.cancelled >= 2  # the deal's prefetch, and the first move's
    assert workers.pids() == pids  # stopped in the worker, which was not killed
    assert hints.spent(code) == 3
    await a.close()
    await until(lambda: workers.running == 0 and workers.queued == 0, "cancelled on leaving")


async def test_a_races_prefetches_stop_at_its_budget(redis_server: Any, server_node: Any) -> None:
    node = await server_node(
        redis_server.url, pool_size=0, solver_warm=1, hint_budget=500, prefetch_per_race=2
    )
    hints, metrics = node.node.hints, node.node.metrics
    a = await Client.connect(node.url, name="ann")
    code = await start(node, a)
    full = Board.deal("spider4", SEED)
    for seq in range(1, 4):
        move = rank_moves(full)[0]
        assert (await a.move(code, seq, move.text())).type == "ack"
        full.push(move)
    await until(lambda: metrics.hints_total["prefetch_capped"] == 2, "the later prefetches capped")
    assert hints.spent(code) == 2 and metrics.hints_total["prefetched"] == 2
    # a hint is still answered: searched when asked
    reply = await ask(a, code)
    assert reply.type == "hint_reply", reply
    assert (
        reply.moves == expected_moves(Board.from_text(await position(node, code, a.player)), 500)[0]
    )
    assert metrics.hints_total["quick"] == 1
    await a.close()


async def test_races_without_hints_never_prefetch(redis_server: Any, server_node: Any) -> None:
    node = await server_node(redis_server.url, pool_size=0, solver_warm=1)
    hints, metrics = node.node.hints, node.node.metrics
    started: list[str] = []
    hints.on_prefetch = lambda code, pos: started.append(code)
    a = await Client.connect(node.url, name="ann")
    code = await start(node, a, hints=False)
    full = Board.deal("spider4", SEED)
    for seq in range(1, 4):
        move = rank_moves(full)[0]
        assert (await a.move(code, seq, move.text())).type == "ack"
        full.push(move)
    await asyncio.sleep(0.3)  # what a prefetch scheduled would have started by now
    assert started == [] and hints.spent(code) == 0 and metrics.hints_total["prefetched"] == 0
    assert node.node.workers.completed == 0 and node.node.workers.running == 0
    await a.close()


async def test_the_nodes_process_runs_no_search(
    redis_server: Any, server_node: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    budget = 2000
    full = Board.deal("spider4", SEED)
    move = rank_moves(full)[0]
    full.push(move)
    moves, verdict = expected_moves(full, budget)
    searched: list[str] = []

    def refuse(self: BeamSearch, *args: Any, **kwargs: Any) -> Any:
        searched.append("here")
        raise AssertionError("a search ran in the node's process")

    monkeypatch.setattr(BeamSearch, "run", refuse)
    node = await server_node(redis_server.url, pool_size=0, solver_warm=1, hint_budget=budget)
    a = await Client.connect(node.url, name="ann")
    code = await start(node, a)
    assert (await a.move(code, 1, move.text())).type == "ack"
    reply = await ask(a, code)
    assert reply.type == "hint_reply", reply
    assert reply.moves == moves and reply.verdict == verdict
    assert searched == []
    assert Move.from_text(reply.move).text() == moves[0]
    await a.close()


async def test_the_client_librarys_hints(redis_server: Any, server_node: Any) -> None:
    from spider_client import Client as Library

    node = await server_node(redis_server.url, pool_size=0, solver_warm=1, hint_budget=2000)
    async with await Library.connect(node.url, name="ada") as client:
        await client.create_race(variant="spider1", seed="b", hints=True, countdown=0)
        await client.ready()
        await client.wait_until(lambda c: c.view is not None, timeout=BOUND)
        moves = await client.hints()
        assert moves == expected_moves(Board.deal("spider1", "b"), 2000)[0]
        assert await client.hint() == moves[0]
        await client.resign()


async def test_a_hint_asked_while_its_prefetch_runs_is_the_quick_budgets(
    redis_server: Any, server_node: Any
) -> None:
    quick = 300
    node = await server_node(
        redis_server.url,
        pool_size=0,
        solver_warm=1,
        hint_budget=10**8,
        hint_quick_budget=quick,
        hint_deadline=300,
    )
    hints, workers, metrics = node.node.hints, node.node.workers, node.node.metrics
    a = await Client.connect(node.url, name="ann")
    code = await start(node, a)
    deal = await position(node, code, a.player)
    await until(lambda: hints.searching(deal) and workers.running == 1, "the deal's prefetch")
    reply = await ask(a, code)
    assert reply.type == "hint_reply", reply
    moves, verdict = expected_moves(Board.from_text(deal), quick)
    assert verdict == "unknown"  # the quick budget's answer: the players' ranking
    assert reply.moves == moves and reply.verdict == verdict
    assert metrics.hints_total["prefetch"] == 1 and metrics.hints_total["quick"] == 0
    # answered: the rest of that search is not needed, and is stopped
    await until(lambda: not hints.searching(deal) and workers.running == 0, "the search stopped")
    assert workers.cancelled == 1
    await a.close()
