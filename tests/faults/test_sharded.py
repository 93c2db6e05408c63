"""Sharded pub/sub on a real three-master cluster: a race's events go out only on the
shard that owns its slot, and a resharding of that slot mid-race loses no event."""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from tests.faults.cluster_helpers import Cluster, start_cluster
from tests.faults.test_failover import _pick
from tests.server.server_helpers import Client


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    c = start_cluster(tmp_path, replicas=False)
    try:
        yield c
    finally:
        c.stop()


def _stat(port: int, name: str, section: str = "commandstats") -> int:
    if section == "cluster":
        info = Redis(port=port).execute_command("CLUSTER", "INFO").decode()
        for line in info.splitlines():
            if line.startswith(name + ":"):
                return int(line.split(":")[1])
        return 0
    stats = Redis(port=port).info(section).get(f"cmdstat_{name}")
    return int(stats["calls"]) if stats else 0


async def _setup(cluster: Cluster, server_node) -> tuple[str, list[Client], Client]:
    node1 = await server_node(cluster.url, rate=10_000.0, burst=10_000)
    node2 = await server_node(cluster.url, rate=10_000.0, burst=10_000)
    a = await Client.connect(node1.url, name="alice")
    b = await Client.connect(node2.url, name="bob")
    code = (await a.create(variant="spider1", countdown=0)).race.code
    await b.join(code)
    w = await Client.connect(node2.url, name="watcher")  # hears alice's moves by pub/sub
    await w.join(code, role="spectator")
    await a.ready(code)
    await b.ready(code)
    return code, [a, b], w


async def _play(client: Client, code: str, moves: int, seed: int) -> int:
    """Up to ``moves`` moves at full speed (an ``unavailable`` one is sent again)."""
    view = (await client.expect("ack", lambda m: m.seq == 0)).view
    rng, seq = random.Random(seed), 0
    while seq < moves:
        move = _pick(view, rng)
        if move is None:
            break
        reply = await client.move(code, seq + 1, move)
        if reply.type == "error":
            assert reply.error == "unavailable", reply
            await asyncio.sleep(0.05)
            continue
        seq, view = reply.seq, reply.view
    return seq


def _versions(client: Client) -> list[int]:
    return [m.version for m in client.received if getattr(m, "version", None) is not None]


async def _all_heard(w: Client, version: int) -> list[int]:
    """The versions the spectator got, once it has the race's last one."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(20):
            while not _versions(w) or max(_versions(w)) < version:
                await w.drain(0.2)
    return _versions(w)


def _race_version(cluster: Cluster, code: str) -> int:
    key = f"{{race:{code}}}:meta"
    return int(Redis(port=cluster.master_of(key)).hget(key, "version") or 0)


async def test_a_race_is_published_on_its_own_shard_only(cluster, server_node) -> None:
    async with asyncio.timeout(120):
        code, (a, b), w = await _setup(cluster, server_node)
        owner = cluster.master_of(f"{{race:{code}}}:meta")
        others = [port for port in cluster.masters if port != owner]
        before = {port: _stat(port, "publish") + _stat(port, "spublish") for port in others}
        await asyncio.gather(_play(a, code, 20, 1), _play(b, code, 20, 2))
        heard = await _all_heard(w, _race_version(cluster, code))
        assert heard == list(range(heard[0], heard[-1] + 1)), heard

        channel = f"{{race:{code}}}:ch"
        subs = {
            port: dict(
                zip(
                    *[iter(Redis(port=port).execute_command("PUBSUB", "SHARDNUMSUB", channel))] * 2,
                    strict=True,
                )
            )
            for port in cluster.masters
        }
        assert subs[owner][channel.encode()] == 2, subs  # both nodes, on the owner
        assert all(subs[port][channel.encode()] == 0 for port in others), subs
        assert _stat(owner, "spublish") > 0 and _stat(owner, "publish") == 0
        for port in others:  # nothing of the race reached the other shards
            assert _stat(port, "publish") + _stat(port, "spublish") == before[port]
            assert _stat(port, "cluster_stats_messages_publish_received", "cluster") == 0
            assert _stat(port, "cluster_stats_messages_publishshard_received", "cluster") == 0
        for c in (a, b, w):
            await c.close()


def _reshard(cluster: Cluster, slot: int, source: int, target: int) -> int:
    """Move ``slot`` from ``source`` to ``target`` as ``valkey-cli --cluster reshard``
    does: IMPORTING, MIGRATING, MIGRATE the keys, SETSLOT NODE; the keys moved."""
    src, dst = Redis(port=source), Redis(port=target)
    src_id = src.execute_command("CLUSTER", "MYID").decode()
    dst_id = dst.execute_command("CLUSTER", "MYID").decode()
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    moved = 0
    while True:
        batch = src.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 10)
        if not batch:
            break
        src.execute_command("MIGRATE", "127.0.0.1", target, "", 0, 5000, "KEYS", *batch)
        moved += len(batch)
    dst.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    src.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    for port in cluster.masters:
        if port not in (source, target):
            Redis(port=port).execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    return moved


async def test_resharding_a_live_race_loses_no_event(cluster, server_node) -> None:
    async with asyncio.timeout(180):
        code, (a, b), w = await _setup(cluster, server_node)
        key = f"{{race:{code}}}:meta"
        source = cluster.master_of(key)
        target = next(port for port in cluster.masters if port != source)
        slot = int(Redis(port=source).execute_command("CLUSTER", "KEYSLOT", key))
        plays = [asyncio.create_task(_play(c, code, 80, i)) for i, c in enumerate((a, b))]
        while len(_versions(w)) < 20:
            await w.drain(0.05)
        moved: Any = await asyncio.to_thread(_reshard, cluster, slot, source, target)
        done = await asyncio.gather(*plays)
        assert moved > 5 and all(n >= 40 for n in done), (moved, done)
        assert cluster.master_of(key) == target
        last = _race_version(cluster, code)
        heard = await _all_heard(w, last)
        # every event, once, in order, from the spectator's snapshot on
        assert heard == list(range(heard[0], last + 1)), (heard[:5], len(heard), last)
        channel = f"{{race:{code}}}:ch".encode()
        for _ in range(200):  # both nodes follow the slot (they subscribe on its new owner)
            numsub = Redis(port=target).execute_command("PUBSUB", "SHARDNUMSUB", channel)
            if numsub[1] == 2:
                break
            await asyncio.sleep(0.05)
        assert numsub[1] == 2, numsub
        assert Redis(port=source).execute_command("PUBSUB", "SHARDNUMSUB", channel)[1] == 0
        for c in (a, b, w):
            await c.close()
