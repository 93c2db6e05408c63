"""Acceptance: a node is killed with SIGKILL while players send at full speed."""

from __future__ import annotations

import asyncio

import pytest

from spider_client import Client, Disconnected, Reconnected
from spider_client import protocol as p
from tests.client.client_helpers import Collector
from tests.faults.fault_helpers import FAST_ENV, check_exactly_once, start_racers


@pytest.mark.parametrize("layouts", [("1", "1"), ("1", "2")], ids=["layout1", "upgrade"])
async def test_sigkill_mid_race_every_ack_is_in_redis_once(
    redis_server, server_process, layouts: tuple[str, str]
) -> None:
    """With ``upgrade``, the node that takes the race over writes the newer layout of a
    player's keys (``SPIDER_RACE_STORE_LAYOUT=2``) after the killed one wrote the older."""
    first, then = ({**FAST_ENV, "SPIDER_RACE_STORE_LAYOUT": n} for n in layouts)
    node1 = await server_process(redis_server.url, **first)
    node2 = await server_process(redis_server.url, **then)
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
        times = (watcher.race.replay_times or {})[r.player]  # each action's, in either layout
        assert len(times) == len(replays[r.player]) and times == sorted(times)
        assert seqs[r.player] == max(a.seq for a in r.acks)
    for collector in seen:
        assert collector.of(Disconnected)[0].code == 1006  # no close frame: the node died
        assert collector.of(Reconnected)[0].node == "proc2"
    await watcher.close()
    for r in racers:
        await r.client.close()


async def test_sigkill_of_the_node_holding_a_player_is_away_then_back(
    redis_server, server_process
) -> None:
    env = {**FAST_ENV, "SPIDER_RACE_PRESENCE_TTL": "1.5", "SPIDER_RACE_AWAY_GRACE": "2"}
    node1 = await server_process(redis_server.url, **env)
    node2 = await server_process(redis_server.url, **env)
    options = {"backoff_initial": 0.02, "backoff_max": 0.2}
    alice = await Client.connect([node1.url, node2.url], name="alice", **options)
    bob = await Client.connect(node2.url, name="bob")
    code = await alice.create_race(variant="spider4", countdown=0, max_players=2, time_limit=600)
    await bob.join(code)
    watcher = await Client.connect(node2.url, name="watcher")
    await watcher.join(code, "spectator")
    for c in (alice, bob):
        await c.ready()
    for c in (alice, bob):
        await c.wait_until(lambda c: c.view is not None, timeout=20)
    assert alice.node == "proc1"
    seen = [Collector(c) for c in (bob, watcher)]
    gone = Collector(alice)
    node1.kill()  # alice's socket dies with its node; her client rejoins through node 2
    await gone.wait_for(Reconnected, timeout=30)
    assert alice.node == "proc2"
    for c in seen:
        back = await c.wait_for(p.Back, timeout=30)
        away = c.of(p.Away)
        assert away and away[0].player == back.player == alice.player
        assert away[0].version < back.version
    # past node 1's claims and the grace: she is still in, and plays on
    await asyncio.sleep(4)
    ack = await alice.move("+")
    assert ack.status == "playing"
    await alice.resign()
    await bob.resign()
    await watcher.wait_until(lambda c: c.finished, timeout=30)
    assert watcher.race is not None and watcher.race.results is not None
    assert {r.status for r in watcher.race.results} == {"resigned"}
    for c in seen:
        assert [type(e) for e in c.events if isinstance(e, (p.Away, p.Back))] == [p.Away, p.Back]
    for c in (alice, bob, watcher):
        await c.close()


async def test_a_node_killed_with_a_player_who_cannot_come_back_lapses_to_abandoned(
    redis_server, server_process
) -> None:
    """Nothing closes the player's socket for the other node to see: her node's claims
    lapse, another node's sweep finds her away, and after the grace she is abandoned; the
    race ends when the other player finishes."""
    env = {**FAST_ENV, "SPIDER_RACE_PRESENCE_TTL": "1.5"}
    node1 = await server_process(redis_server.url, **env)
    node2 = await server_process(redis_server.url, **env)
    alice = await Client.connect(node1.url, name="alice", backoff_initial=0.1, backoff_max=0.5)
    bob = await Client.connect(node2.url, name="bob")
    code = await alice.create_race(
        variant="spider4", countdown=0, max_players=2, time_limit=600, away_grace=2
    )
    await bob.join(code)
    for c in (alice, bob):
        await c.ready()
    for c in (alice, bob):
        await c.wait_until(lambda c: c.view is not None, timeout=20)
    seen = Collector(bob)
    node1.kill()  # alice's client can only try node 1 again: she is gone for good
    away = await seen.wait_for(p.Away, timeout=30)
    assert away.player == alice.player
    await bob.wait_until(
        lambda c: any(i.player == alice.player and i.status == "abandoned" for i in c.race.players),
        timeout=30,
    )
    assert not bob.finished
    await bob.move("+")
    await bob.resign()
    await bob.wait_until(lambda c: c.finished, timeout=30)
    assert bob.race is not None and bob.race.results is not None
    statuses = {r.player: r.status for r in bob.race.results}
    assert statuses == {alice.player: "abandoned", bob.player: "resigned"}
    assert [type(e) for e in seen.events if isinstance(e, (p.Away, p.Back))] == [p.Away]
    await bob.close()
    await alice.close()
