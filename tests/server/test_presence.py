"""Presence: a node's renewal of who watches its races, over many races at once; and, with
real nodes and clients, players away and back, abandoned after the grace, and stuck after
the grace on a position offering only undo."""

from __future__ import annotations

from typing import Any

from spider_client import Client
from spider_client.protocol import Away, Back, Finished, PlayerInfo, Progress
from spider_engine import Board, Move
from spider_server import store as store_module
from spider_server.settings import Settings
from spider_server.store import Store, keys
from spider_server.store.redisconn import connect
from tests.client.client_helpers import Collector


async def test_renewal_over_many_races_in_chunks(redis_server) -> None:
    redis = connect(redis_server.url)
    store = Store.connect(redis, Settings())
    races = [f"R{n:03d}" for n in range(store_module.PRESENCE_CHUNK * 3 + 5)]
    items = []
    for n, code in enumerate(races):
        for p in range(n % 4 + 1):
            items.append((code, f"p{p}|node:{n}-{p}", False))
        for s in range(n % 3):
            items.append((code, f"s{s}|node:{n}-{s}", True))
    try:
        await store.presence.touch_presence(items, now=1000.0)
        for n, code in enumerate(races):
            players, spectators = await store.presence.presence(code, now=1001.0)
            assert players == {f"p{p}" for p in range(n % 4 + 1)}, code
            assert spectators == n % 3, code
        # a later renewal by this node drops what a dead node claimed (their claims lapse)
        await redis.zadd(keys.online("R000"), {"ghost|deadnode:1": 1005.0})
        assert "ghost" in (await store.presence.presence("R000", now=1001.0))[0]
        await store.presence.touch_presence(items[:1], now=1010.0)
        players, _ = await store.presence.presence("R000", now=1010.0)
        assert players == {"p0"}
        # nothing to renew: nothing happens
        await store.presence.touch_presence([], now=1020.0)
    finally:
        await redis.aclose()


# -- away, back, abandoned, stuck on undo: real nodes and clients -------------------------

FAST = {"presence_ttl": 3.0}
"""Short presence lifetimes (renewals and sweeps every second)."""


async def _race(urls: list[str], names: list[str], **options: Any) -> tuple[str, list[Client]]:
    """A running race of players ``names``, each connected to its URL (countdown 0)."""
    clients = [await Client.connect(url, name=name) for url, name in zip(urls, names, strict=True)]
    options = {"variant": "spider4", "countdown": 0, "time_limit": 600, **options}
    code = await clients[0].create_race(max_players=len(clients), **options)
    for c in clients[1:]:
        await c.join(code)
    for c in clients:
        await c.ready()
    for c in clients:
        await c.wait_until(lambda c: c.view is not None, timeout=30)
    return code, clients


def _row(client: Client, player: str) -> PlayerInfo:
    assert client.race is not None
    return next(i for i in client.race.players if i.player == player)


async def test_a_player_who_drops_is_away_for_every_member_and_back_on_rejoin(
    redis_server, server_node
) -> None:
    node1 = await server_node(redis_server.url, **FAST)
    node2 = await server_node(redis_server.url, **FAST)
    code, (alice, bob) = await _race([node1.url, node2.url], ["alice", "bob"], away_grace=60)
    watcher = await Client.connect(node2.url, name="watcher")
    await watcher.join(code, "spectator")
    seen = [Collector(bob), Collector(watcher)]
    who, token = alice.player, alice.token
    assert who is not None and _row(watcher, who).connected
    await alice.close()  # alice's node sees the close: away at once, on the other node too
    for c, client in zip(seen, (bob, watcher), strict=True):
        away = await c.wait_for(Away, timeout=30)
        assert away.player == who
        row = _row(client, who)
        assert not row.connected and row.away_since == away.since
    again = await Client.connect(node2.url, token=token)
    await again.join(code)
    for c, client in zip(seen, (bob, watcher), strict=True):
        back = await c.wait_for(Back, timeout=30)
        assert back.player == who and back.away >= 0
        assert _row(client, who).connected and _row(client, who).away_since is None
    # she plays on
    ack = await again.move("+")
    assert ack.status == "playing"
    assert [type(e) for e in seen[1].events if isinstance(e, (Away, Back))] == [Away, Back]
    for c in (again, bob, watcher):
        await c.close()


async def test_away_past_the_grace_is_abandoned_and_the_race_ends_when_the_others_finish(
    redis_server, server_node
) -> None:
    node1 = await server_node(redis_server.url, **FAST)
    node2 = await server_node(redis_server.url, **FAST)
    code, (alice, bob, carol) = await _race(
        [node1.url, node2.url, node2.url], ["alice", "bob", "carol"], away_grace=2
    )
    seen = Collector(bob)
    who = alice.player
    await alice.close()
    await seen.wait_for(Away, timeout=30)
    await bob.wait_until(lambda c: _row(c, who).status == "abandoned", timeout=30)
    assert not _row(bob, who).connected
    assert not bob.finished  # bob and carol still play
    await bob.move("+")
    await bob.resign()
    assert not bob.finished
    await carol.resign()  # the last one still in: the race ends now, not at its time limit
    await bob.wait_until(lambda c: c.finished, timeout=30)
    assert bob.race is not None and bob.race.results is not None
    statuses = {r.player: r.status for r in bob.race.results}
    assert statuses == {who: "abandoned", bob.player: "resigned", carol.player: "resigned"}
    finished = seen.of(Finished)[0]
    abandoned = [
        e for e in seen.of(Progress) if e.player.player == who and e.player.status == "abandoned"
    ]
    assert len(abandoned) == 1 and abandoned[0].version < finished.version
    for c in (bob, carol):
        await c.close()


async def test_a_position_offering_only_undo_is_stuck_after_the_grace(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **FAST)
    seed = next(s for s in (f"stuck{n}" for n in range(100, 400)) if _stuck_after_deals(s))
    code, (alice, bob) = await _race(
        [node.url, node.url], ["alice", "bob"], seed=seed, undo=True, away_grace=2
    )
    for _ in range(5):
        ack = await alice.move("+")
    assert ack.status == "playing" and alice.legal_moves() == []  # only undo is left
    await bob.resign()
    # alice sits on undo: after the grace she is stuck, and the race is over
    await bob.wait_until(lambda c: c.finished, timeout=30)
    assert bob.race is not None and bob.race.results is not None
    statuses = {r.player: r.status for r in bob.race.results}
    assert statuses == {alice.player: "stuck", bob.player: "resigned"}
    assert bob.race.results[0].player == alice.player  # stuck played on: above a resign
    for c in (alice, bob):
        await c.close()


def _stuck_after_deals(seed: str) -> bool:
    board = Board.deal("spider4", seed)
    for _ in range(board.deals_left()):
        board.push(Move.from_text("+"))
    return board.is_stuck()
