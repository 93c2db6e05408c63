"""The durability levels (``SPIDER_RACE_DURABILITY``) on real servers: a primary with a
replica (two server processes, ``REPLICAOF``) for ``replica``, an AOF for ``fsync``."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from redis import Redis

from spider_client import protocol as p
from tests.server.server_helpers import Client, Player


def _calls(r: Redis, command: str) -> int:
    stats = r.info("commandstats").get(f"cmdstat_{command}")
    return int(stats["calls"]) if stats else 0


@pytest.fixture
def primary_and_replica(tmp_path: Path) -> Iterator[tuple[Any, Any]]:
    """Two servers (the embedded one's binary), the second a replica of the first."""
    from spider_server.embedded import RedisProcess

    primary = RedisProcess(tmp_path / "primary")
    replica = RedisProcess(tmp_path / "replica")
    primary.start()
    try:
        replica.start()
        try:
            r = Redis(port=replica.port)
            r.execute_command("REPLICAOF", "127.0.0.1", primary.port)
            for _ in range(400):
                if r.info("replication").get("master_link_status") == "up":
                    break
                time.sleep(0.05)
            else:
                pytest.fail("the replica did not connect")
            yield primary, replica
        finally:
            replica.kill()
    finally:
        primary.kill()


async def _race(url: str, players: int) -> tuple[str, list[Player]]:
    clients = [await Client.connect(url, name=f"p{i}") for i in range(players)]
    code = (await clients[0].create(variant="spider1", countdown=0)).race.code
    for c in clients[1:]:
        await c.join(code)
    for c in clients:
        await c.ready(code)
    out = []
    for i, c in enumerate(clients):
        deal = await c.expect("ack", lambda m: m.seq == 0)
        out.append(Player(c, code, deal.view, seed=i))
    return code, out


async def test_replica_durability_acks_once_a_replica_has_it(
    primary_and_replica, server_node
) -> None:
    primary, replica = primary_and_replica
    node = await server_node(primary.url, durability="replica", durability_timeout=0.5)
    p_redis, r_redis = Redis(port=primary.port), Redis(port=replica.port)
    async with asyncio.timeout(120):
        code, players = await _race(node.url, 6)
        waits_before, commits_before = _calls(p_redis, "wait"), _calls(p_redis, "evalsha")
        for _ in range(10):
            await asyncio.gather(*(pl.step() for pl in players))
        calls = _calls(p_redis, "evalsha") - commits_before
        waits = _calls(p_redis, "wait") - waits_before
        # 60 moves in script calls that each commit a batch, one wait after each batch
        assert 1 <= calls < 60 and 1 <= waits < 60, (waits, calls)
        # every acked move is on the replica the moment its ack is read
        for pl in players:
            stored = r_redis.hlen(f"{{race:{code}}}:acks:{pl.client.player}")
            assert stored >= pl.seq == 10

        # the replica stops answering: a move is applied on the primary but never acked
        os.kill(replica.process.pid, signal.SIGSTOP)
        try:
            mover = players[0]
            move = mover.pick()
            assert move is not None
            reply = await mover.client.move(code, mover.seq + 1, move)
            assert reply.type == "error" and reply.error == "unavailable", reply
            assert p_redis.hexists(f"{{race:{code}}}:acks:{mover.client.player}", mover.seq + 1)
        finally:
            os.kill(replica.process.pid, signal.SIGCONT)
        # the resend is acked (as a duplicate) once the replica has the move (it may take
        # the replica a moment to catch up: until then the resend is unavailable too)
        for _ in range(40):
            ack = await mover.client.move(code, mover.seq + 1, move)
            if ack.type == "ack" or ack.error != "unavailable":
                break
            await asyncio.sleep(0.25)
        assert ack.type == "ack" and ack.duplicate, ack
        assert r_redis.hexists(f"{{race:{code}}}:acks:{mover.client.player}", mover.seq + 1)
        for pl in players:
            await pl.client.close()


async def test_replica_durability_without_a_replica_changes_nothing_acked(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, durability="replica", durability_timeout=0.2)
    async with asyncio.timeout(60):
        c = await Client.connect(node.url, name="alone")
        for _ in range(2):  # race changes wait too: no race is announced that may be lost
            reply = await c.request(p.CreateRace(req=0, variant="spider1"))
            assert reply.type == "error" and reply.error == "unavailable", reply
        await c.close()


async def test_fsync_durability_waits_for_the_aof(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, durability="fsync")
    r = Redis.from_url(redis_server.url)
    async with asyncio.timeout(60):
        code, players = await _race(node.url, 3)
        before = _calls(r, "waitaof")
        for _ in range(5):
            await asyncio.gather(*(pl.step() for pl in players))
        assert _calls(r, "waitaof") - before >= 1
        # without an AOF there is nothing to wait for: no ack
        r.config_set("appendonly", "no")
        move = players[0].pick()
        assert move is not None
        reply = await players[0].client.move(code, players[0].seq + 1, move)
        assert reply.type == "error" and reply.error == "unavailable", reply
        for pl in players:
            await pl.client.close()


async def _ready(node: Any) -> tuple[int, str]:
    from tests.server.test_http_and_lifecycle import _get

    status, _, body = await asyncio.to_thread(_get, node.http_url + "/readyz")
    return status, body


async def _ready_becomes(node: Any, status: int) -> str:
    """Probe ``/readyz`` until it answers ``status`` (each probe checks afresh); its body."""
    async with asyncio.timeout(30):
        while True:
            got, body = await _ready(node)
            if got == status:
                return body
            await asyncio.sleep(0.05)


async def test_a_durability_that_cannot_be_had_is_not_ready(redis_server, server_node) -> None:
    # a replica asked for, none connected: not ready, and says why; the primary level is
    replica = await server_node(redis_server.url, durability="replica", durability_timeout=0.2)
    status, body = await _ready(replica)
    assert status == 503 and "replica" in body, (status, body)
    plain = await server_node(redis_server.url)
    assert (await _ready(plain))[0] == 200
    # an append-only file asked for, and turned off: not ready until it is on again
    r = Redis.from_url(redis_server.url)
    try:
        fsync = await server_node(redis_server.url, durability="fsync")
        assert (await _ready(fsync))[0] == 200
        r.config_set("appendonly", "no")
        assert "append-only" in await _ready_becomes(fsync, 503)
        r.config_set("appendonly", "yes")
        await _ready_becomes(fsync, 200)
    finally:
        r.config_set("appendonly", "yes")
        r.close()


async def test_replica_durability_is_ready_while_a_replica_is_connected(
    primary_and_replica, server_node
) -> None:
    primary, replica = primary_and_replica
    node = await server_node(primary.url, durability="replica", durability_timeout=0.5)
    assert (await _ready(node))[0] == 200
    replica.kill()  # the primary sees its replica go: no commit can be saved now
    assert "replica" in await _ready_becomes(node, 503)
