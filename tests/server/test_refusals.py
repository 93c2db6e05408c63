"""A refused client costs the node little: an address refused a new player is told when to
come back (close 1013 with the time), is answered before the websocket upgrade until then
(HTTP 429 with ``Retry-After``), and once the node knows of the refusal nothing on that
path asks Redis; the client library
waits the time it was told (docs/server.md, "Limits"; docs/protocol.md, close codes)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from redis.asyncio import Redis

from spider_client import Client as LibraryClient
from spider_client.errors import RateLimited
from tests.server.attack_helpers import handshake, http_status, wait_for
from tests.server.server_helpers import Client

QUIET = {
    "sweep_interval": 3600.0,
    "presence_ttl": 3600.0,
    "tick": 3600.0,
    "match_turn": 3600.0,
    "pool_interval": 3600.0,
}
"""The node's periodic loops asleep: nothing asks Redis unless a client makes it."""


async def _commands(redis: Any) -> Counter[str]:
    """Commands Valkey has run since its statistics were reset, by name, the ``INFO``
    commands of this count left out (asked on the test's one connection)."""
    stats = await redis.info("commandstats")
    return Counter(
        {
            name.removeprefix("cmdstat_"): int(value["calls"])
            for name, value in stats.items()
            if name != "cmdstat_info"
        }
    )


async def _settled(redis: Any) -> Counter[str]:
    """The commands run, once two readings 0.2 s apart agree (within 10 s)."""
    last = await _commands(redis)
    for _ in range(50):
        await asyncio.sleep(0.2)
        now = await _commands(redis)
        if now == last:
            return now
        last = now
    raise AssertionError(f"the node keeps asking Redis: {last}")


async def _refused_hello(url: str) -> Client:
    client = await Client.connect(url, hello=False)
    from spider_client import protocol as p

    await client.send(p.Hello(name="again"))
    return client


async def test_the_refused_path_asks_redis_nothing(redis_server, server_node, monkeypatch) -> None:
    # the pending results' loop asleep too (it looks every RESULTS_GRACE / 2 seconds)
    monkeypatch.setattr("spider_server.node.RESULTS_GRACE", 7200.0)
    node = await server_node(redis_server.url, address_new_players=1, **QUIET)
    first = await Client.connect(node.url, name="first")  # the address's one new player
    redis = Redis.from_url(redis_server.url)
    before = await _settled(redis)  # the node's start done: nothing runs in the background
    refused = await _refused_hello(node.url)
    assert (await refused.expect("error")).error == "rate_limited"
    assert await refused.closed_with() == 1013
    # the refused hello: the refusal's mark read before the upgrade (a get), the shared
    # bucket read by one script (an evalsha and its get), which marks the refusal (a set)
    told = await _commands(redis)
    assert told - before == Counter({"get": 2, "set": 1, "evalsha": 1}), told - before

    def again() -> int:
        sock, head = handshake(node.node.port)
        sock.close()
        return http_status(head)

    # back at once, five at a time: answered before the upgrade (each held a second)
    statuses = await asyncio.gather(*(asyncio.to_thread(again) for _ in range(5)))
    assert statuses == [429] * 5
    assert node.node.metrics.refused_total["new_players"] == 1
    assert node.node.metrics.refused_total["retry_early"] == 5
    assert await wait_for(lambda: len(node.node.connections) == 1)
    assert await _commands(redis) - told == Counter()  # the node knows of the refusal
    await redis.aclose()
    await first.close()


async def test_the_client_library_waits_the_time_it_was_told(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, address_new_players=60)  # one a second
    client = await LibraryClient.connect(node.url, name="patient")
    refused: RateLimited | None = None
    while refused is None:  # new players until the address has none left
        try:
            other = await LibraryClient.connect(node.url, name="another", reconnect_timeout=0)
        except RateLimited as e:
            refused = e
        else:
            await other.close()
    assert refused.retry_after == 1.0  # one a second: back in a second
    assert await node.node.addresses.retry_after("127.0.0.1") == 1
    # the library's connection drops meanwhile: its first attempt is answered 429 with
    # Retry-After: 1, and it tries again only once that second is over
    conn = next(
        c
        for c in node.node.connections
        if c.session.identity is not None and c.session.identity.player == client.player
    )
    conn.ws.transport.abort()
    assert await wait_for(lambda: client.reconnects == 1, 10)
    assert node.node.metrics.refused_total["retry_early"] == 1
    assert client.connected
    await client.close()
