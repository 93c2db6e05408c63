"""A real three-master cluster (Valkey's cluster mode, the embedded server's binary) on
loopback, two server nodes on it, whole races."""

from __future__ import annotations

import asyncio
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from redis import Redis

from spider_client import protocol as p
from tests.server.server_helpers import Client, Player


@pytest.fixture
def redis_cluster(tmp_path: Path) -> Iterator[list[int]]:
    """Three server processes in cluster mode (the binary the embedded server runs), each
    given a third of the slots and an epoch of its own, then introduced to the first with
    ``CLUSTER MEET`` (what ``valkey-cli --cluster create`` does); their ports."""
    from spider_server.embedded import find_redis_server, free_cluster_ports

    server = find_redis_server()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(5):  # ports taken meanwhile by another test's server: others
            ports = free_cluster_ports(3)
            procs = []
            for port in ports:
                folder = tmp_path / f"cluster-{port}"
                folder.mkdir(exist_ok=True)
                args = [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder)]
                args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
                args += ["--appendonly", "yes", "--save", "", "--daemonize", "no"]
                procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL))
            if all(_answers(proc, port) for proc, port in zip(procs, ports, strict=True)):
                break
            for proc in procs:
                proc.kill()
                proc.wait()
        else:
            pytest.fail("no three free ports for the cluster's servers")
        for i, port in enumerate(ports):
            node = Redis(port=port)
            node.execute_command("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
            first, last = i * 16384 // len(ports), (i + 1) * 16384 // len(ports) - 1
            node.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
        for port in ports[1:]:
            Redis(port=port).execute_command("CLUSTER", "MEET", "127.0.0.1", ports[0])
        for _ in range(400):
            states = [
                Redis(port=port).execute_command("CLUSTER", "INFO").decode() for port in ports
            ]
            if all(
                "cluster_state:ok" in info and f"cluster_known_nodes:{len(ports)}" in info
                for info in states
            ):
                break
            time.sleep(0.05)
        else:
            pytest.fail(f"the cluster is not ok: {states}")
        yield ports
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _answers(proc: subprocess.Popen[bytes], port: int) -> bool:
    """Whether the server ``proc`` started answers on ``port`` (not another program that
    took the port first: the server then exits, and what listens may never answer)."""
    for _ in range(100):
        if proc.poll() is not None:
            return False
        try:
            with Redis(port=port, socket_timeout=1, socket_connect_timeout=1) as r:
                return bool(r.info("server")["process_id"] == proc.pid)
        except Exception:
            time.sleep(0.05)
    return False


def _master_of(ports: list[int], key: str) -> int:
    """The port of the master that holds ``key``."""
    for port in ports:
        if Redis(port=port).execute_command("CLUSTER", "COUNTKEYSINSLOT", _slot(port, key)):
            return port
    raise AssertionError(f"no master holds {key}")


def _slot(port: int, key: str) -> int:
    return int(Redis(port=port).execute_command("CLUSTER", "KEYSLOT", key))


async def test_races_on_a_three_master_cluster(redis_cluster, server_node) -> None:
    async with asyncio.timeout(120):
        await _races_on_a_cluster(redis_cluster, server_node)


async def _races_on_a_cluster(ports: list[int], server_node) -> None:
    url = "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in ports[:2])
    node1 = await server_node(url)
    node2 = await server_node(url)
    masters = [
        line.split()
        for line in Redis(port=ports[0]).execute_command("CLUSTER", "NODES").decode().splitlines()
    ]
    assert sum(1 for m in masters if "master" in m[2]) == 3

    # a whole race, its players on the two nodes
    a = await Client.connect(node1.url, name="alice")
    b = await Client.connect(node2.url, name="bob")
    code = (await a.create(variant="spider1", countdown=0)).race.code
    await b.join(code)
    w = await Client.connect(node2.url, name="watcher")
    await w.join(code, role="spectator")
    await a.ready(code)
    await b.ready(code)
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=1)
    pb = Player(b, code, (await b.expect("ack", lambda m: m.seq == 0)).view, seed=2)
    for _ in range(5):
        await asyncio.gather(pa.step(), pb.step())
    await pa.resign()
    await pb.resign()
    finished = [await c.expect("finished") for c in (a, b, w)]
    assert len({f.version for f in finished}) == 1
    assert len(finished[0].replays[a.player]) == 6 and len(finished[0].replays[b.player]) == 6
    # a resent action is answered with its first ack, not applied again
    await a.send(p.MoveAction(code=code, seq=5, move=pa.acks[4].move))
    assert (await a.expect("ack", lambda m: m.seq == 5)).duplicate

    # the keys of ten races spread over the masters
    codes = [code]
    for i in range(9):
        c = await Client.connect((node1, node2)[i % 2].url, name=f"host{i}")
        codes.append((await c.create(variant="spider1")).race.code)
        await c.close()
    holders = {_master_of(ports, f"{{race:{c}}}:meta") for c in codes}
    assert len(holders) >= 2, holders
    for c in (a, b, w):
        await c.close()
