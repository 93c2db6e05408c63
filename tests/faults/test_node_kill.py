"""Acceptance: a node is killed with SIGKILL while players send at full speed."""

from __future__ import annotations

import asyncio

from spider_client import Client, Disconnected, Reconnected
from tests.client.client_helpers import Collector
from tests.faults.fault_helpers import FAST_ENV, check_exactly_once, start_racers


async def test_sigkill_mid_race_every_ack_is_in_redis_once(redis_server, server_process) -> None:
    node1 = await server_process(redis_server.url, **FAST_ENV)
    node2 = await server_process(redis_server.url, **FAST_ENV)
    # every bot tries node 1 first, then node 2 (a list of URLs, as behind a load balancer)
    code, racers = await start_racers([node1.url, node2.url], 4)
    assert {r.client.node for r in racers} == {"proc1"}
    seen = [Collector(r.client) for r in racers]
    watcher = await Client.connect(node2.url, name="watcher")
    await watcher.join(code, "spectator")

    stop = asyncio.Event()
    running = [asyncio.create_task(r.flat_out(stop, least=10)) for r in racers]
    await asyncio.sleep(0.8)
    before = {r.player: len(r.acks) for r in racers}
    node1.kill()  # SIGKILL, mid-flight: moves are on the wire and in the node
    await asyncio.sleep(1.5)
    stop.set()
    await asyncio.wait_for(asyncio.gather(*running), 60)

    for r in racers:
        assert len(r.acks) > before[r.player] + 5  # it went on, on the other node
        assert r.client.node == "proc2" and r.client.reconnects >= 1
    # the game goes on to the end on node 2
    for r in racers:
        r.acks.append(await r.client.resign())
    await watcher.wait_until(lambda c: c.finished, timeout=20)
    assert watcher.race is not None and watcher.race.results is not None
    seqs = check_exactly_once(redis_server.url, code, racers)
    results = {res.player: res for res in watcher.race.results}
    replays = watcher.race.replays or {}
    for r in racers:
        assert results[r.player].status == "resigned"
        assert replays[r.player] == [a.move for a in sorted(r.acks, key=lambda a: a.seq)]
        assert seqs[r.player] == max(a.seq for a in r.acks)
    for collector in seen:
        assert collector.of(Disconnected)[0].code == 1006  # no close frame: the node died
        assert collector.of(Reconnected)[0].node == "proc2"
    await watcher.close()
    for r in racers:
        await r.client.close()
