"""Solver work under attack, on a real node process: hint spam and a flood of winnable
spider4 races from throwaway identities of one address.

What is asserted does not depend on the machine's speed: the node's own process spends
little CPU while its workers prove (the solver runs in the workers), the caps answer
``rate_limited``, an honest client from another address gets its winnable spider1 race
prepared and its moves acked while the attack runs, and once the attackers are gone the
workers stop working for them (their proofs cancelled)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import urllib.request
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from spider_client import protocol as p
from spider_engine import Board
from tests.server.server_helpers import TIMEOUT, Client

BOUND = 120.0
"""Seconds any wait here may take on a busy machine."""


def _cpu(pid: int) -> tuple[float, float]:
    """A process's own CPU seconds (user + system), and its reaped children's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def _children_cpu(pid: int) -> float:
    """CPU seconds of the live children of ``pid`` (the solver's workers) plus its reaped
    ones'."""
    total = _cpu(pid)[1]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            after = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(after[1]) == pid:
                own, reaped = _cpu(int(entry.name))
                total += own + reaped
    return total


def _metrics(http_url: str) -> dict[str, float]:
    with urllib.request.urlopen(http_url + "/metrics", timeout=5) as r:
        text = r.read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("spider_solver_"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


async def metrics(http_url: str) -> dict[str, float]:
    return await asyncio.to_thread(_metrics, http_url)


async def _from(url: str, address: str, name: str) -> Client:
    """A test client whose connection comes from ``address`` (a loopback address)."""
    ws = await connect(url, max_size=None, open_timeout=TIMEOUT, local_addr=(address, 0))
    client = Client(ws, label=name)
    await client.send(p.Hello(name=name))
    client.welcome = await client.expect("welcome")
    return client


async def _hint_spam(client: Client, code: str, replies: list[str]) -> None:
    """Ask for hints back to back (and one more while each is worked out)."""
    while True:
        first, second = (
            p.Hint(req=client.next_req(), code=code),
            p.Hint(req=client.next_req(), code=code),
        )
        await client.send(first)
        await client.send(second)
        for req in (first.req, second.req):
            reply = await client.expect(
                ("hint_reply", "error"), lambda m, r=req: m.req == r, timeout=BOUND
            )
            replies.append(reply.type if reply.type == "hint_reply" else reply.error)


async def test_hint_spam_and_a_spider4_flood_do_not_run_in_the_node_nor_starve_others(
    redis_server: Any, server_process: Any
) -> None:
    node = await server_process(
        redis_server.url,
        SPIDER_RACE_SOLVER_WORKERS="1",
        SPIDER_RACE_SOLVER_WARM="1",
        SPIDER_RACE_SOLVER_YIELD_AFTER="2",
        SPIDER_RACE_PROOF_DEADLINE="5",
        SPIDER_RACE_HINT_DEADLINE="5",
        SPIDER_RACE_POOL_SIZE="0",
        SPIDER_RACE_PROOFS_PER_IDENTITY="2",
        SPIDER_RACE_PROOFS_PER_ADDRESS="4",
    )
    pid = node.process.pid
    attackers = [await _from(node.url, "127.0.0.1", f"flood{i}") for i in range(5)]
    refusals: list[str] = []
    created = 0
    for a in attackers:  # winnable spider4 races, one after another
        for _ in range(3):
            reply = await a.request(
                p.CreateRace(req=0, variant="spider4", winnable=True, countdown=0)
            )
            if reply.type == "joined":
                created += 1
            else:
                assert reply.error == "rate_limited", reply
                refusals.append(reply.message)
    # the address's cap holds the proofs of all its players: 4 races, the rest refused
    assert created == 4
    assert any("per player" in m for m in refusals) and any("per address" in m for m in refusals)

    spammers = [await _from(node.url, "127.0.0.1", f"hinter{i}") for i in range(4)]
    replies: list[str] = []
    spam: list[asyncio.Task[None]] = []
    for s in spammers:
        joined = await s.create(variant="spider4", seed="spam", hints=True, countdown=0)
        await s.ready(joined.race.code)
        await s.expect("ack", lambda m: m.seq == 0)
        spam.append(asyncio.create_task(_hint_spam(s, joined.race.code, replies)))
    try:
        deadline = time.monotonic() + BOUND
        while (await metrics(node.http_url)).get("spider_solver_jobs_running", 0) < 1:
            assert time.monotonic() < deadline, "the workers never ran the attack's jobs"
            await asyncio.sleep(0.2)

        # while the workers prove and hint, the node's own process stays nearly idle
        own_before, workers_before = _cpu(pid)[0], _children_cpu(pid)
        started = time.monotonic()
        await asyncio.sleep(4)
        wall = time.monotonic() - started
        own = _cpu(pid)[0] - own_before
        workers = _children_cpu(pid) - workers_before
        assert own < 0.25 * wall, (own, wall, workers)
        assert workers > own, (own, workers)  # the solving happened in the workers

        # an honest client from another address: prepared, started, its moves acked
        honest = await _from(node.url, "127.0.0.2", "honest")
        joined = await honest.create(variant="spider1", winnable=True, countdown=0)
        assert joined.race.preparing
        code = joined.race.code
        await honest.ready(code)
        await honest.expect("prepared", timeout=BOUND)
        ack = await honest.expect("ack", lambda m: m.seq == 0, timeout=BOUND)
        board = Board.from_text(ack.view)
        for seq in range(1, 6):
            # whatever the deal allows: a move of cards where there is one, else a deal
            moves = list(board.legal_moves.texts())
            assert moves, board  # five moves into a deal with its stock full: never stuck
            move = next((m for m in moves if m != "+"), moves[0])
            reply = await honest.move(code, seq, move)
            assert reply.type == "ack", reply
            board = Board.from_text(reply.view)
        shown = await metrics(node.http_url)
        assert shown["spider_solver_jobs_running"] >= 1  # the attack still ran meanwhile
        await honest.close()
    finally:
        for task in spam:
            task.cancel()
        for task in spam:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
    # hints were answered, and a second hint while one was worked out was refused
    assert "hint_reply" in replies and "rate_limited" in replies, replies
    shown = await metrics(node.http_url)
    assert shown["spider_solver_jobs_completed_total"] >= 1

    # the attackers leave: nobody waits for their proofs or hints, and the workers stop
    for c in attackers + spammers:
        await c.close()
    deadline = time.monotonic() + BOUND
    while True:
        shown = await metrics(node.http_url)
        if shown["spider_solver_jobs_running"] == 0 and shown["spider_solver_jobs_queued"] == 0:
            break
        assert time.monotonic() < deadline, shown
        await asyncio.sleep(0.2)
    assert shown["spider_solver_jobs_cancelled_total"] >= 1
    await asyncio.sleep(1)
    idle_before = _children_cpu(pid)
    await asyncio.sleep(2)
    assert _children_cpu(pid) - idle_before < 0.5  # no core burns for races nobody waits for
    assert node.terminate() == 0
