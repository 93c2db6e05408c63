"""A master SIGKILLed mid-race on a real cluster (three masters, one replica each), its
replica taking over: with ``replica`` durability every move any player got an ack for is
in Redis exactly once afterwards; with ``primary`` the acked moves found missing are
printed (the loss that level allows, possibly none in a given run)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgpack
import pytest
from redis import Redis
from redis.cluster import ClusterNode, RedisCluster

from tests.faults.cluster_helpers import Cluster, start_cluster
from tests.server.server_helpers import Client

BEFORE, AFTER = 15, 15
"""Moves each player has acked before the kill, and acks each gets after it."""


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = start_cluster(tmp_path, node_timeout=1000)
    try:
        yield c
    finally:
        c.stop()


def _pick(view: str, rng: random.Random) -> str | None:
    from spider_engine import Board

    moves = Board.from_text(view).legal_moves.texts()
    if not moves:
        return None
    plain = [m for m in moves if m != "+"]
    return rng.choice(plain) if plain and rng.random() < 0.85 else rng.choice(moves)


class Racer:
    """A player at full speed: the next move as soon as the last is acked; an
    ``unavailable`` move is sent again (same seq, same move) until it is answered."""

    def __init__(self, client: Client, code: str, view: str, seed: int) -> None:
        self.client, self.code, self.view = client, code, view
        self.rng = random.Random(seed)
        self.acked: dict[int, str] = {}
        self.since_kill = 0
        self.killed = False
        self.stopped_by: Any = None
        self.unavailable = 0

    async def run(self, done: asyncio.Event) -> None:
        seq = 0
        while not done.is_set():
            move = _pick(self.view, self.rng)
            if move is None:
                return
            while True:
                reply = await self.client.move(self.code, seq + 1, move)
                if reply.type == "ack":
                    break
                if reply.error != "unavailable":  # e.g. out_of_order: acked moves lost
                    self.stopped_by = reply
                    return
                self.unavailable += 1
                await asyncio.sleep(0.05)
            seq += 1
            self.acked[seq] = move
            self.view = reply.view
            if self.killed:
                self.since_kill += 1


def _kill_after_cutting_its_replica(cluster: Cluster, master: int, seconds: float = 0.3) -> None:
    """The worst moment for a master to die: its replica is frozen (SIGSTOP) and its link
    cut, so for ``seconds`` what the master applies reaches no replica; then the master is
    SIGKILLed and the replica goes on (SIGCONT), with what it had."""
    replica = cluster.procs[cluster.replicas[master]]
    os.kill(replica.pid, signal.SIGSTOP)
    try:
        Redis(port=master).client_kill_filter(_type="replica")
        time.sleep(seconds)
        cluster.procs[master].kill()
        cluster.procs[master].wait()
    finally:
        os.kill(replica.pid, signal.SIGCONT)


async def _failover_run(cluster: Cluster, server_node, durability: str) -> dict[str, Any]:
    fast = {"rate": 10_000.0, "burst": 10_000}  # full speed: no rate limit
    node1 = await server_node(cluster.url, durability=durability, durability_timeout=1.0, **fast)
    node2 = await server_node(cluster.url, durability=durability, durability_timeout=1.0, **fast)
    clients = [await Client.connect((node1, node2)[i % 2].url, name=f"p{i}") for i in range(4)]
    code = (await clients[0].create(variant="spider1", countdown=0)).race.code
    for c in clients[1:]:
        await c.join(code)
    for c in clients:
        await c.ready(code)
    racers = []
    for i, c in enumerate(clients):
        deal = await c.expect("ack", lambda m: m.seq == 0)
        racers.append(Racer(c, code, deal.view, seed=i))
    done = asyncio.Event()
    tasks = [asyncio.create_task(r.run(done)) for r in racers]

    async def until(check: Callable[[], bool]) -> None:
        while not check():
            if all(t.done() for t in tasks):
                return
            await asyncio.sleep(0.01)

    await until(lambda: all(len(r.acked) >= BEFORE or r.stopped_by for r in racers))
    victim = cluster.master_of(f"{{race:{code}}}:meta")
    # SIGKILLed mid-race, the players still moving, right after its replica stopped
    # getting what it applies
    await asyncio.to_thread(_kill_after_cutting_its_replica, cluster, victim)
    for r in racers:
        r.killed = True
    # its replica takes over (cluster-node-timeout: 1 s); then the killed master is
    # started again, as a supervisor would, and comes back as the new master's replica:
    # until then `replica` durability acks nothing on that shard (the players retry)
    replica = cluster.replicas[victim]
    for _ in range(3000):
        if cluster.role(replica) == "master":
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the replica did not take over")
    cluster.restart(victim)
    await until(lambda: all(r.since_kill >= AFTER or r.stopped_by for r in racers))
    done.set()
    await asyncio.gather(*tasks)
    new_master = cluster.master_of(f"{{race:{code}}}:meta")
    back_as = cluster.role(victim)

    live = cluster.live()
    redis = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in live])
    missing: list[tuple[str, int]] = []
    try:
        for r in racers:
            pid = r.client.player
            actions = [
                str(a, "utf-8") if isinstance(a, bytes) else a
                for a in redis.lrange(f"{{race:{code}}}:actions:{pid}", 0, -1)
            ]
            acks = redis.hgetall(f"{{race:{code}}}:acks:{pid}")
            game_seq = int(redis.hget(f"{{race:{code}}}:game:{pid}", "seq") or 0)
            assert len(actions) == game_seq and len(acks) == game_seq  # one entry a seq
            for seq, move in r.acked.items():
                if seq > game_seq:
                    missing.append((pid, seq))
                    continue
                stored = msgpack.unpackb(acks[str(seq).encode()], raw=False)
                assert stored["move"] == move and move in actions[seq - 1], (seq, move)
    finally:
        redis.close()
    for c in clients:
        await c.close()
    return {
        "victim": victim,
        "new_master": new_master,
        "back_as": back_as,
        "acked": sum(len(r.acked) for r in racers),
        "missing": missing,
        "unavailable": sum(r.unavailable for r in racers),
        "stopped": [r.stopped_by for r in racers if r.stopped_by is not None],
        "after": [r.since_kill for r in racers],
    }


async def test_replica_durability_loses_no_acked_move_in_a_failover(cluster, server_node) -> None:
    async with asyncio.timeout(240):
        run = await _failover_run(cluster, server_node, "replica")
    print(f"replica durability: {run}")
    assert run["new_master"] != run["victim"]
    assert run["missing"] == [] and run["stopped"] == [], run
    assert all(n >= AFTER for n in run["after"]), run  # the players went on


async def test_primary_durability_in_a_failover_is_shown(cluster, server_node) -> None:
    """A demonstration, not a guarantee: with ``primary`` an acked move may be lost."""
    async with asyncio.timeout(240):
        run = await _failover_run(cluster, server_node, "primary")
    lost: dict[str, list[int]] = {}
    for pid, seq in run["missing"]:
        lost.setdefault(pid, []).append(seq)
    print(
        f"primary durability: {len(run['missing'])} of {run['acked']} acked moves missing "
        f"after the failover (per player, seqs {', '.join(f'{min(s)}-{max(s)}' for s in lost.values())}); "
        f"the players were then told: {sorted({e.error for e in run['stopped']})}"
    )
    assert run["new_master"] != run["victim"]
