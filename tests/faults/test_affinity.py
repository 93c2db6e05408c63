"""Race affinity: once a client follows a race, its websocket URL names it (``?race=CODE``),
as the server sees it; behind the deploy's HAProxy every member of a race then lands on
one node."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

from spider_client import Client
from spider_client.affinity import race_of, race_url
from tests.faults.test_deploy import _get, _haproxy

MATCH = {"match_wait": 3.0, "match_gather": 0.3, "match_turn": 0.05, "match_countdown": 1}


def _paths(node: Any) -> list[str]:
    """The request path of every websocket the node holds open."""
    return sorted(conn.ws.request.path for conn in node.node.connections)


async def _until(predicate: Any, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def test_race_url_sets_the_race_and_keeps_the_rest() -> None:
    assert race_url("ws://h:1/ws", "ABCDE") == "ws://h:1/ws?race=ABCDE"
    assert race_url("ws://h:1/ws?x=1&race=OLD", "NEW") == "ws://h:1/ws?x=1&race=NEW"
    assert race_url("ws://h:1/ws", None) == "ws://h:1/ws"
    assert race_of("ws://h:1/ws?race=ABCDE") == "ABCDE" and race_of("ws://h:1/ws") is None


async def test_the_server_sees_the_race_on_the_url_after_create_join_and_a_drop(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url)
    a = await Client.connect(node.url, name="ada")
    b = await Client.connect(node.url, name="bob")
    w = await Client.connect(node.url, name="cy")
    try:
        assert _paths(node) == ["/ws"] * 3
        code = await a.create_race(variant="spider1", countdown=0)
        await b.join(code)
        await w.join(code, role="spectator")
        want = f"/ws?race={code}"
        # each moved: a new connection naming the race, the old one closed
        await _until(lambda: _paths(node) == [want] * 3)
        assert [c.moves for c in (a, b, w)] == [1, 1, 1]
        assert all(c.url == node.url + f"?race={code}" for c in (a, b, w))
        assert a.reconnects == b.reconnects == 0
        # the race goes on over the new connections
        await a.ready()
        await b.ready()
        await a.wait_until(lambda c: c.view is not None, timeout=20)
        moves = a.legal_moves()
        ack = await a.move(moves[0])
        assert ack.seq == 1 and not ack.duplicate
        await w.wait_until(
            lambda c: c.race is not None
            and any(pl.player == a.player and pl.moves == 1 for pl in c.race.players),
            timeout=10,
        )
        # joining again does not move
        await b.refresh()
        assert b.moves == 1
        # a dropped connection comes back on the race's URL
        (held,) = [c for c in node.node.connections if c.session.player == b.player]
        await held.ws.close(1012, "restarting")
        await b.wait_until(lambda c: c.reconnects == 1 and c.connected, timeout=20)
        await _until(lambda: _paths(node) == [want] * 3)
        assert b.moves == 1
    finally:
        for c in (a, b, w):
            await c.close()


async def test_a_quick_match_moves_to_the_race_url(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **MATCH)
    a = await Client.connect(node.url, name="ann")
    b = await Client.connect(node.url, name="ben")
    try:
        codes = await asyncio.wait_for(
            asyncio.gather(a.quick_match("spider1"), b.quick_match("spider1")), 10
        )
        assert codes[0] == codes[1]
        await _until(lambda: _paths(node) == [f"/ws?race={codes[0]}"] * 2)
        assert a.moves == b.moves == 1
    finally:
        await a.close()
        await b.close()


async def test_without_affinity_the_url_stays(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    async with await Client.connect(node.url, name="dee", affinity=False) as a:
        await a.create_race(variant="spider1", countdown=0)
        assert a.moves == 0 and a.url == node.url
        assert _paths(node) == ["/ws"]


async def test_a_spectator_who_moved_is_counted_once(redis_server, server_node) -> None:
    """A spectator's move to the race's URL opens a second connection before the first one
    closes: the snapshot it gets counts one spectator, not two."""
    node = await server_node(redis_server.url)
    async with (
        await Client.connect(node.url, name="host") as host,
        await Client.connect(node.url, name="wanda") as wanda,
        await Client.connect(node.url, name="walt") as walt,
    ):
        code = await host.create_race(variant="spider1")
        await wanda.join(code, "spectator")
        assert wanda.moves == 1 and wanda.race is not None
        assert wanda.race.spectators == 1
        # wanda's first connection is gone once its claim is (its close drops it)
        async with asyncio.timeout(30):
            while (await host.refresh()).race.spectators != 1:
                await asyncio.sleep(0.05)
        await walt.join(code, "spectator")
        assert walt.moves == 1 and walt.race is not None
        assert walt.race.spectators == 2
        await host.refresh()
        assert host.race is not None and host.race.spectators == 2


async def test_haproxy_puts_every_member_of_a_race_on_one_node(
    redis_server, server_process, tmp_path
) -> None:
    node1 = await server_process(redis_server.url)
    node2 = await server_process(redis_server.url)
    async with _haproxy([node1, node2], tmp_path) as url:
        clients = [await Client.connect(url, name=f"p{i}") for i in range(5)]
        try:
            # a first connection names no race: least connections spreads them
            assert {c.node for c in clients} == {"proc1", "proc2"}
            codes = []
            for first in range(0, 4, 2):  # two races of two players
                code = await clients[first].create_race(variant="spider1", countdown=0)
                await clients[first + 1].join(code)
                codes.append(code)
            await clients[4].join(codes[0], role="spectator")
            for race, members in ((codes[0], [0, 1, 4]), (codes[1], [2, 3])):
                nodes = {clients[i].node for i in members}
                assert len(nodes) == 1, (race, nodes)
                assert all(race_of(clients[i].url) == race for i in members)
            # each node's /metrics counts only the members of the races it holds
            for name, node in (("proc1", node1), ("proc2", node2)):
                here = sum(1 for c in clients if c.node == name)
                text = await asyncio.to_thread(_get, node.http_url + "/metrics")
                assert f"spider_connections {here}" in text.splitlines(), text
        finally:
            for c in clients:
                await c.close()


def _bench(*args: str) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "bench", *args],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)


def test_bench_affinity_counts_what_each_placement_publishes() -> None:
    """Races on one node publish nothing; spread over two, about one message a move."""
    figures = _bench("affinity", "--players", "4", "--races", "2", "--rate", "2", "--seconds", "2")
    assert figures["together_errors"] == figures["spread_errors"] == "0"
    assert int(figures["together_moves"]) > 0 and int(figures["spread_moves"]) > 0
    assert figures["together_published"] == "0"
    assert 0.5 < float(figures["spread_published_per_move"]) <= 1.0


def test_the_capacity_model_scales_with_the_measured_costs() -> None:
    from spider_race.bench_server.capacity import model

    costs = {
        "node_ms_per_move": 0.6,
        "shard_ms_per_move": 0.15,
        "spectator_us_per_event": 20.0,
        "kib_per_connection": 18.0,
        "bytes_per_move": 500.0,
        "bytes_per_race": 40_000.0,
    }
    one = model(**costs)
    assert round(one["node_processes"]) == 1000  # 1e6 moves/s x 0.6 ms / 60 % of a core
    assert round(one["shards"]) == 250
    assert round(one["show_fan_out_cores"]) == 20  # 1e5 spectators x 10 events/s x 20 us
    double = model(**{**costs, "node_ms_per_move": 1.2}, racers=2_000_000)
    assert round(double["node_processes"]) == 4000 and round(double["shards"]) == 500
