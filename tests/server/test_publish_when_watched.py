"""A race's events are published on its channel only for other nodes.

Each node claims the races it watches (the race's ``nodes`` set, renewed while it watches,
dropped when it stops). The commit scripts publish an event only when a node other than
the committing one holds a live claim; the committing node dispatches its own events
itself, in version order, waiting briefly for any that come out of order and reading the
stream when they do not come."""

from __future__ import annotations

import asyncio
import time

import msgpack

from spider_server.fanout.hub import GAP_WAIT
from spider_server.store import keys
from spider_server.store.redisconn import connect
from tests.server.server_helpers import Player, start_race
from tests.server.test_hot_path import _progress, _watched


async def _heard(pubsub, seconds: float = 0.3) -> list[bytes]:
    """What the channel brought within ``seconds``."""
    out: list[bytes] = []
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=left)
        if message is not None and message["type"] == "message":
            out.append(message["data"])
    return out


async def test_a_race_watched_by_one_node_publishes_nothing_and_another_claim_hears_all(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url)
    code, (a, b), (w,) = await start_race(node.url, spectators=1)
    redis = connect(redis_server.url)
    pubsub = redis.pubsub()
    try:
        await pubsub.subscribe(keys.channel(code))
        claims = await redis.zrange(keys.nodes(code), 0, -1, withscores=True)
        assert [(n.decode(), s > time.time()) for n, s in claims] == [("node1", True)]

        pa = Player(a, code, (await a.join(code)).view, seed=1)
        mover = a.welcome.player if a.welcome is not None else None
        for _ in range(4):
            await pa.step()
        assert await _heard(pubsub) == []  # only this node watches: nothing published
        # ... and still everyone here got every move
        await w.expect("progress", lambda m: m.player.moves == 4)
        await b.expect("progress", lambda m: m.player.player == mover and m.player.moves == 4)
        spectated = [e.version for e in w.events() if e.type == "progress"]
        assert spectated == list(range(spectated[0], spectated[0] + 4))

        # another node claims the race: from now on each event is published for it
        await redis.zadd(keys.nodes(code), {"elsewhere": time.time() + 60})
        for _ in range(3):
            await pa.step()
        heard = await _heard(pubsub)
        assert len(heard) == 3
        versions = [int(m.split(b":", 1)[0]) for m in heard]
        assert versions == list(range(versions[0], versions[0] + 3))
        for message in heard:
            _, audience, data = message.split(b":", 2)
            assert audience == b"all"
            assert msgpack.unpackb(data)["type"] == "progress"
        await w.expect("progress", lambda m: m.version == versions[-1])
        spectated = [e.version for e in w.events() if e.type == "progress"]
        assert versions == spectated[-3:]

        # a claim that has run out is no one's: nothing published again
        await redis.zadd(keys.nodes(code), {"elsewhere": time.time() - 1})
        await pa.step()
        assert await _heard(pubsub) == []
        await w.expect("progress", lambda m: m.player.moves == 8)
    finally:
        await pubsub.aclose()
        await redis.aclose()


async def test_a_node_renews_its_claim_and_drops_it_when_no_one_watches(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, presence_ttl=1.5)
    code, (a, b), _ = await start_race(node.url)
    redis = connect(redis_server.url)
    try:
        first = await redis.zscore(keys.nodes(code), "node1")
        assert first is not None
        await asyncio.sleep(1.2)  # the node renews every presence_ttl / 3
        renewed = await redis.zscore(keys.nodes(code), "node1")
        assert renewed is not None and renewed > first
        await a.close()
        await b.close()
        for _ in range(100):
            if await redis.zscore(keys.nodes(code), "node1") is None:
                break
            await asyncio.sleep(0.05)
        assert await redis.zscore(keys.nodes(code), "node1") is None
    finally:
        await redis.aclose()


async def test_own_events_whose_replies_came_out_of_order_go_out_in_order(hub) -> None:
    rec, _ = await _watched(hub, 5)
    hub.committed("ABCDE", 7, [("all", _progress(2))])  # the later commit's reply first
    assert rec.frames == []
    hub.committed("ABCDE", 6, [("all", _progress(1))])
    assert [(f["version"], f["player"]["moves"]) for f in rec.frames] == [(6, 1), (7, 2)]
    assert hub.watches["ABCDE"].early == {}
    assert hub.watches["ABCDE"].gap_timer is None


async def test_an_event_that_does_not_come_is_read_from_the_stream(hub, redis_server) -> None:
    """Version 5 was committed (it is in the stream) but its reply never reached this node:
    6 and 7 wait for it GAP_WAIT seconds, then all three are read and sent in order."""
    redis = connect(redis_server.url)
    try:
        for version, moves in ((5, 9), (6, 1), (7, 2)):
            await redis.xadd(
                keys.events("ABCDE"),
                {"v": str(version), "a": "all", "d": _progress(moves)},
                id=f"{version}-0",
            )
    finally:
        await redis.aclose()
    rec, _ = await _watched(hub, 4)
    hub.committed("ABCDE", 7, [("all", _progress(1)), ("all", _progress(2))])
    assert rec.frames == []
    for _ in range(100):
        if len(rec.frames) == 3:
            break
        await asyncio.sleep(GAP_WAIT / 2)
    assert [(f["version"], f["player"]["moves"]) for f in rec.frames] == [(5, 9), (6, 1), (7, 2)]
    assert hub.watches["ABCDE"].early == {}


async def test_a_players_keys_get_their_ttl_on_the_first_action_and_every_64th(
    redis_server, server_node
) -> None:
    """An action writes the player's game, actions and acks and the race's keys; their TTL is
    set on the first action and refreshed on every 64th after it (a race change refreshes all)."""
    node = await server_node(redis_server.url, race_ttl=5000, rate=1000.0, burst=1000)
    code, (a, _b), _ = await start_race(node.url)
    redis = connect(redis_server.url)
    try:
        player = a.welcome.player if a.welcome is not None else ""
        written = [keys.actions(code, player), keys.acks(code, player), keys.game(code, player)]
        assert await redis.ttl(keys.actions(code, player)) == -2  # no action yet: no list
        pa = Player(a, code, (await a.join(code)).view, seed=3)
        await pa.step()
        for key in [*written, keys.meta(code), keys.events(code)]:
            assert 4900 < await redis.ttl(key) <= 5000, key
        # the TTL left is not refreshed by the next actions...
        await redis.expire(keys.actions(code, player), 100)
        while pa.seq < 64:
            await pa.step()
        assert await redis.ttl(keys.actions(code, player)) <= 100
        # ... until the 65th (the first and every 64th after)
        await pa.step()
        assert pa.seq == 65
        assert 4900 < await redis.ttl(keys.actions(code, player)) <= 5000
    finally:
        await redis.aclose()
