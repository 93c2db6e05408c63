"""Presence: a node's renewal of who watches its races, over many races at once."""

from __future__ import annotations

from spider_server import keys
from spider_server import store as store_module
from spider_server.redisconn import connect
from spider_server.settings import Settings
from spider_server.store import Store


async def test_renewal_over_many_races_in_chunks(redis_server) -> None:
    redis = connect(redis_server.url)
    store = Store(redis, Settings())
    races = [f"R{n:03d}" for n in range(store_module.PRESENCE_CHUNK * 3 + 5)]
    items = []
    for n, code in enumerate(races):
        for p in range(n % 4 + 1):
            items.append((code, f"p{p}|node:{n}-{p}", False))
        for s in range(n % 3):
            items.append((code, f"s{s}|node:{n}-{s}", True))
    try:
        await store.touch_presence(items, now=1000.0)
        for n, code in enumerate(races):
            players, spectators = await store.presence(code, now=1001.0)
            assert players == {f"p{p}" for p in range(n % 4 + 1)}, code
            assert spectators == n % 3, code
        # a later renewal by this node drops what a dead node claimed (their claims lapse)
        await redis.zadd(keys.online("R000"), {"ghost|deadnode:1": 1005.0})
        assert "ghost" in (await store.presence("R000", now=1001.0))[0]
        await store.touch_presence(items[:1], now=1010.0)
        players, _ = await store.presence("R000", now=1010.0)
        assert players == {"p0"}
        # nothing to renew: nothing happens
        await store.touch_presence([], now=1020.0)
    finally:
        await redis.aclose()
