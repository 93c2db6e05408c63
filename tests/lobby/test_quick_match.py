"""Quick match against real nodes (real Redis, real sockets, the client library)."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio as aioredis

from spider_client import Client
from spider_client import protocol as p

MATCH = {"match_wait": 3.0, "match_gather": 0.5, "match_turn": 0.05, "match_countdown": 1}


async def test_two_clients_quick_match_into_the_same_race(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **MATCH)
    async with (
        await Client.connect(node.url, name="ann") as a,
        await Client.connect(node.url, name="bob") as b,
    ):
        code_a, code_b = await asyncio.wait_for(
            asyncio.gather(a.quick_match("spider1"), b.quick_match("spider1")), 10
        )
        assert code_a == code_b
        assert a.race is not None and a.race.quick and a.race.state == "countdown"
        assert {pl.player for pl in a.race.players} == {a.player, b.player}
        await a.wait_until(lambda c: c.view is not None, timeout=10)
        await b.wait_until(lambda c: c.view is not None, timeout=10)
        assert a.race.state == "running"


async def test_far_apart_ratings_each_start_within_the_wait(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **MATCH)
    ratings: dict[str, float] = {}
    node.node.lobby.rating_of = lambda player, variant: ratings[player]
    clients = [await Client.connect(node.url, name=f"r{i}") for i in range(3)]
    try:
        for i, c in enumerate(clients):
            assert c.player is not None
            ratings[c.player] = 1000.0 + 5000.0 * i
        started = time.monotonic()
        codes = await asyncio.wait_for(
            asyncio.gather(*(c.quick_match("spider1") for c in clients)), 10
        )
        waited = time.monotonic() - started
        assert waited <= MATCH["match_wait"] + 1.0, waited
        assert waited >= MATCH["match_wait"] - 0.5, waited  # the ratings kept them apart first
        assert len(set(codes)) == 1  # at the wait, anyone fits: one race of three
    finally:
        for c in clients:
            await c.close()


async def test_near_ratings_match_first(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **{**MATCH, "match_max_players": 2})
    ratings: dict[str, float] = {}
    node.node.lobby.rating_of = lambda player, variant: ratings[player]
    clients = [await Client.connect(node.url, name=f"n{i}") for i in range(4)]
    try:
        for c, r in zip(clients, (1000.0, 3000.0, 1010.0, 3010.0), strict=True):
            assert c.player is not None
            ratings[c.player] = r
        codes = await asyncio.wait_for(
            asyncio.gather(*(c.quick_match("spider1") for c in clients)), 10
        )
        assert codes[0] == codes[2] and codes[1] == codes[3] and codes[0] != codes[1]
    finally:
        for c in clients:
            await c.close()


async def _entry(url: str, player: str) -> bytes | None:
    r = aioredis.from_url(url)
    try:
        value: bytes | None = await r.hget("{match}:who", player)
        return value
    finally:
        await r.aclose()


async def test_one_queue_at_a_time_cancel_and_disconnect(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **MATCH)
    r = aioredis.from_url(redis_server.url)
    try:
        async with await Client.connect(node.url, name="solo") as a:
            assert a.player is not None
            await a._request(lambda req: p.QuickMatch(req=req, variant="spider1"))
            await a._request(lambda req: p.QuickMatch(req=req, variant="spider2"))
            queues = {k.decode(): await r.zrange(k, 0, -1) for k in await r.keys("{match}:q:*")}
            holding = [k for k, members in queues.items() if a.player.encode() in members]
            assert holding == ["{match}:q:spider2:u:humans"]
            await a.cancel_match()
            assert await r.hget("{match}:who", a.player) is None
            assert not await r.zscore("{match}:q:spider2:u:humans", a.player)
            await a._request(lambda req: p.QuickMatch(req=req, variant="spider1"))
            assert await r.hget("{match}:who", a.player) is not None
        deadline = time.monotonic() + 5
        while await r.hget("{match}:who", a.player) is not None:
            assert time.monotonic() < deadline, "a closed connection stays queued"
            await asyncio.sleep(0.05)
        assert not await r.zscore("{match}:q:spider1:u:humans", a.player)
        # alone after the others left: nobody else is queued, so nobody is matched
        async with await Client.connect(node.url, name="alone") as b:
            with pytest.raises(TimeoutError):
                await b.quick_match("spider1", timeout=MATCH["match_wait"] + 0.5)
            assert b.player is not None
            assert await r.hget("{match}:who", b.player) is None  # the timeout left the queue
    finally:
        await r.aclose()


async def test_bots_and_humans_queue_apart(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **MATCH)
    async with (
        await Client.connect(node.url, name="human") as h,
        await Client.connect(node.url, name="bot1", bot=True) as b1,
        await Client.connect(node.url, name="friendly") as f,
    ):
        task_h = asyncio.create_task(h.quick_match("spider1"))
        codes = await asyncio.wait_for(
            asyncio.gather(b1.quick_match("spider1"), f.quick_match("spider1", with_bots=True)),
            10,
        )
        assert codes[0] == codes[1]
        await asyncio.sleep(MATCH["match_wait"] + 0.5)
        assert not task_h.done()  # alone among humans
        task_h.cancel()


async def test_two_nodes_matching_at_once_never_share_a_player(redis_server, server_node) -> None:
    settings = {**MATCH, "match_turn": 0.01, "match_gather": 0.2, "match_max_players": 3}
    nodes = [await server_node(redis_server.url, **settings) for _ in range(2)]
    clients = [await Client.connect(nodes[i % 2].url, name=f"m{i}") for i in range(24)]
    try:
        # a bound for a busy machine, not a measure: 24 players, matched in groups of 3
        codes = await asyncio.wait_for(
            asyncio.gather(*(c.quick_match("spider1") for c in clients)), 90
        )
        r = aioredis.from_url(redis_server.url)
        try:
            groups = int(await r.get("{match}:groups"))
            created = int(await r.get("{match}:created"))
            recent = [x.decode().split("|")[:3] for x in await r.lrange("{match}:recent", 0, -1)]
            assert await r.hlen("{match}:who") == 0  # every match told, nobody left queued
        finally:
            await r.aclose()
        assert groups == created == len(recent) == len(set(codes))
        assert sum(n.node.lobby.matches_made for n in nodes) == created
        seen = [p for _, players, _ in recent for p in players.split(",")]
        assert sorted(seen) == sorted(c.player for c in clients)  # each player in one race
        for c, code in zip(clients, codes, strict=True):
            assert c.race is not None and c.race.code == code
            assert c.player in {pl.player for pl in c.race.players}
    finally:
        for c in clients:
            await c.close()


async def test_a_match_told_on_a_lost_connection_is_told_again(redis_server, server_node) -> None:
    """A player told of their match whose connection is lost before they join it (their
    node may have died just after telling them) comes back and queues again: they are sent
    to that race, not queued into a second one while their game in the first waits."""
    node = await server_node(redis_server.url, **MATCH, match_confirm=120)
    a = await Client.connect(node.url, name="ann")
    token = a.token
    async with await Client.connect(node.url, name="bob") as b:
        await a._request(lambda req: p.QuickMatch(req=req, variant="spider1"))
        confirmed = asyncio.ensure_future(b.quick_match("spider1"))
        await a.wait_until(lambda c: c.matched is not None, timeout=10)
        assert a.matched is not None
        code = a.matched.code
        await a.close()  # told, never joined
        async with (
            await Client.connect(node.url, token=token) as back,
            await Client.connect(node.url, name="cid") as c,
        ):
            assert back.player == a.player
            queued = asyncio.ensure_future(c.quick_match("spider1", timeout=MATCH["match_wait"]))
            again = await asyncio.wait_for(back.quick_match("spider1"), 10)
            assert again == code  # the race made for them, which they now join
            assert await asyncio.wait_for(confirmed, 10) == code  # it counts down for both
            assert back.race is not None and back.player in {pl.player for pl in back.race.players}
            with pytest.raises(TimeoutError):  # nobody else queued for the third player
                await queued
