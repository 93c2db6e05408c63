"""The limits per client address are every node's, kept in Redis: two real nodes on one
Valkey, clients from one loopback address (each socket bound to its own 127.0.x.y) going
to either node, spend the same buckets and are refused on whichever node they reach; an
IPv6 address counts as its /64; idle buckets expire (docs/server.md, "Limits"). The nodes
run on a clock the test moves (nothing refills unless it says so)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from redis.asyncio import Redis
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from spider_client import protocol as p
from spider_server.limits import address_key
from tests.server.clocks import TestClock
from tests.server.server_helpers import TIMEOUT, Client


async def _from(url: str, address: str) -> Client:
    """A connection from ``address`` (a loopback address the socket is bound to), no hello
    said yet."""
    host = "::1" if ":" in address else address
    ws = await connect(url, max_size=None, open_timeout=TIMEOUT, local_addr=(host, 0))
    return Client(ws, label=address)


async def _hello(url: str, address: str, token: str | None = None) -> tuple[Client, Any]:
    """Say hello from ``address``: the connection and the reply (welcome or error)."""
    client = await _from(url, address)
    await client.send(p.Hello(name="racer", token=token))
    reply = await client.expect(("welcome", "error"))
    if reply.type == "welcome":
        client.welcome = reply
    return client, reply


async def _upgrade_refused(url: str, address: str) -> tuple[int, str]:
    """The HTTP status and Retry-After of an upgrade from ``address`` that is refused."""
    with pytest.raises(InvalidStatus) as refused:
        await _from(url, address)
    response = refused.value.response
    return response.status_code, response.headers.get("Retry-After", "")


def test_an_address_key_is_the_ipv4_address_or_the_ipv6_slash_64() -> None:
    assert address_key("203.0.113.7") == "203.0.113.7"
    assert address_key("::ffff:203.0.113.7") == "203.0.113.7"  # IPv4-mapped
    assert address_key("2001:db8:1:2:aaaa::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:2:ffff:ffff:ffff:ffff") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") == "2001:db8:1:3::/64"  # the next /64: its own
    assert address_key("::1") == "::/64"
    assert address_key("2001:db8:1:2::/64") == "2001:db8:1:2::/64"  # a key is its own key
    assert address_key("unix") == "unix"
    assert address_key("not an address") == "not an address"


async def test_new_players_from_one_address_are_refused_on_every_node(
    redis_server: Any, server_node: Any
) -> None:
    clock = TestClock()
    one = await server_node(redis_server.url, clock=clock, address_new_players=3)
    two = await server_node(redis_server.url, clock=clock, address_new_players=3)
    nodes = [one, two]
    here = "127.0.7.1"
    welcomed = []
    for i in range(3):  # alternating between the nodes: three new players in all
        client, reply = await _hello(nodes[i % 2].url, here)
        assert reply.type == "welcome", reply
        welcomed.append(client)
    client, reply = await _hello(two.url, here)  # the fourth, on the node that had one
    assert (reply.error, reply.retry_after) == ("rate_limited", 20.0)  # 3 a minute
    assert "too many new players from your address" in reply.message
    assert "try again in 20 s" in reply.message
    assert await client.closed_with() == 1013
    assert two.node.metrics.refused_total["new_players"] == 1
    # the other node, which refused nobody, answers the address before the upgrade
    assert await _upgrade_refused(one.url, here) == (429, "20")
    assert one.node.metrics.refused_total["retry_early"] == 1
    # another address is not touched, on either node
    for node in nodes:
        other, reply = await _hello(node.url, "127.0.7.2")
        assert reply.type == "welcome", reply
        await other.close()
    # the bucket and the mark live until they are full again, no longer
    redis = Redis.from_url(redis_server.url)
    bucket, mark = b"{limit:a:127.0.7.1}:new_player", b"{limit:a:127.0.7.1}:refused"
    assert 0 < await redis.pttl(bucket) <= 60_000
    assert 0 < await redis.pttl(mark) <= 20_000
    assert float(await redis.get(bucket)) == pytest.approx(clock() + 60)
    await redis.aclose()
    clock.move(20)  # one new player's worth: the next is welcomed, on either node
    back, reply = await _hello(one.url, here)
    assert reply.type == "welcome", reply
    again, reply = await _hello(two.url, here)
    assert (reply.error, reply.retry_after) == ("rate_limited", 20.0)
    for c in [*welcomed, back]:
        await c.close()


async def test_creations_are_counted_on_every_node_and_a_refusal_takes_nothing(
    redis_server: Any, server_node: Any
) -> None:
    clock = TestClock()
    limits = {"address_creations": 4, "player_creations": 3}
    one = await server_node(redis_server.url, clock=clock, **limits)
    two = await server_node(redis_server.url, clock=clock, **limits)
    here = "127.0.8.1"
    alice, _ = await _hello(one.url, here)
    alice_too, _ = await _hello(two.url, here, token=alice.token)  # the same player
    bob, _ = await _hello(two.url, here)
    for c in (alice, alice_too, alice):  # the player's three, on both nodes
        assert (await c.request(p.CreateRace(req=0, variant="spider1"))).type == "joined"
    refused = await alice_too.request(p.CreateRace(req=0, variant="spider1"), ("joined", "error"))
    assert (refused.error, refused.retry_after) == ("rate_limited", 20.0)  # 3 a minute
    assert "you created too many races" in refused.message
    # the player's refusal took none of the address's: one is left, for bob
    assert (await bob.request(p.CreateRace(req=0, variant="spider1"))).type == "joined"
    bob_on_one, _ = await _hello(one.url, here, token=bob.token)
    refused = await bob_on_one.request(p.CreateRace(req=0, variant="spider1"), ("joined", "error"))
    assert (refused.error, refused.retry_after) == ("rate_limited", 15.0)  # 4 a minute
    assert "too many races created from your address" in refused.message
    # and the address's refusal took none of bob's: one used, full again in 20 s
    redis = Redis.from_url(redis_server.url)
    bob_bucket = f"{{limit:p:{bob.player}}}:player_create"
    assert float(await redis.get(bob_bucket)) == pytest.approx(clock() + 20)
    assert float(await redis.get(b"{limit:a:127.0.8.1}:create")) == pytest.approx(clock() + 60)
    await redis.aclose()
    assert one.node.metrics.refused_total["creations"] == 1
    assert two.node.metrics.refused_total["creations"] == 1
    clock.move(15)
    assert (await bob_on_one.request(p.CreateRace(req=0, variant="spider1"))).type == "joined"
    for c in (alice, alice_too, bob, bob_on_one):
        await c.close()


async def test_an_ipv6_slash_64_is_one_address(redis_server: Any, server_node: Any) -> None:
    """Behind a trusted proxy (on ::1), addresses of one /64 share one bucket and another
    /64 has its own; a real IPv6 socket (from ::1, no proxy's word) is one address too."""
    clock = TestClock()
    settings = {"address_new_players": 2, "trusted_proxies": "::1"}
    node = await server_node(redis_server.url, clock=clock, host="::1", **settings)
    port = node.node.port

    async def hello(forwarded: str | None) -> Any:
        headers = {"X-Forwarded-For": forwarded} if forwarded else {}
        ws = await connect(
            f"ws://[::1]:{port}/ws", open_timeout=TIMEOUT, additional_headers=headers
        )
        client = Client(ws)
        await client.send(p.Hello(name="six"))
        reply = await client.expect(("welcome", "error"))
        await client.close()
        return reply.type if reply.type == "welcome" else reply.error

    first, second, third = "2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:db8:1:2::77"
    assert [await hello(a) for a in (first, second, third)] == [
        "welcome",
        "welcome",
        "rate_limited",
    ]
    assert await hello("2001:db8:1:3::1") == "welcome"  # the next /64
    assert [await hello(None) for _ in range(3)] == ["welcome", "welcome", "rate_limited"]
    redis = Redis.from_url(redis_server.url)
    found = sorted(await redis.keys("{limit:a:*}:new_player"))
    assert found == [
        b"{limit:a:2001:db8:1:2::/64}:new_player",
        b"{limit:a:2001:db8:1:3::/64}:new_player",
        b"{limit:a:::/64}:new_player",
    ]
    await redis.aclose()


async def test_while_redis_does_not_answer_new_players_come_in_and_creations_do_not(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, address_new_players=1)
    first, _ = await _hello(node.url, "127.0.9.1")
    redis_server.kill()
    try:
        newcomer, reply = await _hello(node.url, "127.0.9.1")  # past the limit, let in
        assert reply.type == "welcome", reply
        refused = await newcomer.request(p.CreateRace(req=0, variant="spider1"), ("error",))
        assert refused.error == "unavailable"
    finally:
        redis_server.restart()
    await asyncio.sleep(0)
    assert node.node.metrics.errors_total["internal"] == 0
    await first.close()
    await newcomer.close()
