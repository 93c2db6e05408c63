"""How a node uses its solver workers: a hint's fallback when the worker gives no answer
in time, the hint budget of a race, a winnable race's proof cancelled when its creator
leaves, and the workers' figures in ``/metrics``."""

from __future__ import annotations

import asyncio
import time
import urllib.request
from typing import Any

from spider_client import protocol as p
from spider_engine import Board
from spider_engine.solver import rank_moves
from tests.server.server_helpers import Client

BOUND = 60.0


async def _running(client: Client, code: str) -> p.Ack:
    await client.ready(code)
    ack: p.Ack = await client.expect("ack", lambda m: m.seq == 0 and m.code == code)
    return ack


def _solver_metrics(http_url: str) -> dict[str, float]:
    with urllib.request.urlopen(http_url + "/metrics", timeout=5) as r:
        lines = r.read().decode().splitlines()
    return {
        name: float(value)
        for name, _, value in (line.rpartition(" ") for line in lines)
        if name.startswith("spider_solver_")
    }


async def _ask(client: Client, message: Any) -> Any:
    """Send a request and wait (long) for its reply or error."""
    message.req = client.next_req()
    await client.send(message)
    return await client.expect(
        ("hint_reply", "error", "done"), lambda m: m.req == message.req, timeout=BOUND
    )


async def _until(http_url: str, test: Any) -> dict[str, float]:
    deadline = time.monotonic() + BOUND
    while True:
        shown = await asyncio.to_thread(_solver_metrics, http_url)
        if test(shown):
            return shown
        assert time.monotonic() < deadline, shown
        await asyncio.sleep(0.1)


async def test_a_hint_past_its_deadline_is_the_players_ranking(
    redis_server: Any, server_node: Any
) -> None:
    # a spider4 search of 20,000 positions takes far longer than 10 ms on any machine
    node = await server_node(redis_server.url, pool_size=0, hint_deadline=0.01)
    a = await Client.connect(node.url, name="ann")
    seed = "late-hint"
    joined = await a.create(variant="spider4", seed=seed, hints=True, countdown=0)
    code = joined.race.code
    await _running(a, code)
    reply = await _ask(a, p.Hint(req=0, code=code))
    assert reply.type == "hint_reply", reply
    assert reply.move == rank_moves(Board.deal("spider4", seed))[0].text()
    shown = await asyncio.to_thread(_solver_metrics, node.http_url)
    assert shown["spider_solver_jobs_timed_out_total"] == 1
    # the hint counts like any other
    progress = await a.expect("progress", lambda m: m.player.hints == 1)
    assert progress.player.player == a.player
    await a.close()


async def test_hints_past_the_races_budget_are_rate_limited(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, pool_size=0, hints_per_race=2)
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant="spider1", seed="b", hints=True, countdown=0)
    code = joined.race.code
    await _running(a, code)
    for _ in range(2):
        reply = await _ask(a, p.Hint(req=0, code=code))
        assert reply.type == "hint_reply", reply
    reply = await _ask(a, p.Hint(req=0, code=code))
    assert reply.type == "error" and reply.error == "rate_limited", reply
    assert "at most 2 hints" in reply.message
    race = await node.node.store.races.load_race(code)
    assert race is not None and race.players[a.player].hints == 2  # the refused one is not


async def test_a_second_hint_while_one_is_worked_out_is_rate_limited(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, pool_size=0)
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant="spider4", seed="two-hints", hints=True, countdown=0)
    code = joined.race.code
    await _running(a, code)
    first, second = p.Hint(req=a.next_req(), code=code), p.Hint(req=a.next_req(), code=code)
    await a.send(first)
    await a.send(second)
    refused = await a.expect("error", lambda m: m.req == second.req, timeout=BOUND)
    assert refused.error == "rate_limited"
    # the connection's other messages go on while the hint is worked out
    ack = await a.move(code, 1, rank_moves(Board.deal("spider4", "two-hints"))[0].text())
    assert ack.type == "ack", ack
    answered = await a.expect("hint_reply", lambda m: m.req == first.req, timeout=BOUND)
    assert answered.move is None or isinstance(answered.move, str)
    await a.close()


async def test_a_winnable_races_proof_is_cancelled_when_its_creator_leaves(
    redis_server: Any, server_node: Any
) -> None:
    # a budget no spider4 proof finishes within the test
    node = await server_node(redis_server.url, pool_size=0, solve_budget=10**8)
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant="spider4", winnable=True, countdown=0)
    assert joined.race.preparing
    await _until(node.http_url, lambda m: m["spider_solver_jobs_running"] == 1)
    reply = await a.request(p.Leave(req=0, code=joined.race.code))
    assert reply.type == "done", reply
    shown = await _until(
        node.http_url,
        lambda m: m["spider_solver_jobs_running"] == 0 and m["spider_solver_jobs_queued"] == 0,
    )
    assert shown["spider_solver_jobs_cancelled_total"] == 1
    assert shown["spider_solver_jobs_completed_total"] == 0
    # the worker was told to stop the proof and is free again: no worker was killed
    workers = node.node.workers
    assert workers.running == 0 and workers.spawned == 1 and len(workers.pids()) == 1
    await a.close()


async def test_a_winnable_race_is_proven_again_when_its_creator_comes_back(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, pool_size=0, solve_budget=10**8)
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant="spider4", winnable=True, countdown=0)
    code = joined.race.code
    await _until(node.http_url, lambda m: m["spider_solver_jobs_running"] == 1)
    token = a.token
    await a.close()  # nobody waits: cancelled
    await _until(node.http_url, lambda m: m["spider_solver_jobs_cancelled_total"] == 1)
    back = await Client.connect(node.url, token=token)
    rejoined = await back.join(code)
    assert rejoined.race.preparing
    await _until(node.http_url, lambda m: m["spider_solver_jobs_running"] == 1)
    await back.close()


async def test_a_hint_sent_again_is_answered_once(redis_server: Any, server_node: Any) -> None:
    # a client that resends an unanswered request (the client library does after 5 s)
    node = await server_node(redis_server.url, pool_size=0)
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant="spider4", seed="resent", hints=True, countdown=0)
    code = joined.race.code
    await _running(a, code)
    hint = p.Hint(req=a.next_req(), code=code)
    await a.send(hint)
    await a.send(hint)
    reply = await a.expect(("hint_reply", "error"), lambda m: m.req == hint.req, timeout=BOUND)
    assert reply.type == "hint_reply", reply
    await a.drain(0.5)
    again = [m for m in a.inbox if getattr(m, "req", None) == hint.req]
    assert again == []
    race = await node.node.store.races.load_race(code)
    assert race is not None and race.players[a.player].hints == 1
    await a.close()
