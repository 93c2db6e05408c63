"""Quick match and ratings together, against real nodes: the queue reads each player's
rating from the store once, when they queue; a quick-match race is rated and moves its
players' ratings exactly once; players of far-apart ratings still race within the wait
(on the server's clock); and a rematch accepted after it started is refused plainly."""

from __future__ import annotations

import asyncio

import msgpack
import pytest
import redis.asyncio as aioredis

from spider_client import Client, NotAPlayer, NotFound, WrongState
from spider_client import protocol as p
from spider_server.race.ratings import Record, VariantRecord
from spider_server.store import keys

MATCH = {
    "match_wait": 2.0,
    "match_gather": 0.5,
    "match_turn": 0.25,
    "match_countdown": 0,
    "rate": 2000.0,
    "burst": 2000,
}


LAG = 1.0
"""Seconds a loaded machine may delay the node's matching turn (not the rule's slack)."""


async def _set_rating(url: str, player: str, shown: int, *, bot: bool = False) -> None:
    """Give ``player`` a spider1 rating shown as ``shown`` (sigma 2: not provisional),
    written straight into their record in Redis."""
    sigma = 2.0
    mu = (shown - 1500) / 40 + 3 * sigma
    record = Record(
        player=player, name="x", bot=bot, variants={"spider1": VariantRecord(mu=mu, sigma=sigma)}
    )
    assert record.variants["spider1"].rating == shown
    r = aioredis.from_url(url)
    try:
        data = msgpack.packb(record.fields(), use_bin_type=True)
        await r.hset(keys.record(player), mapping={"v": "1", "d": data})
    finally:
        await r.aclose()


async def _queue(c: Client) -> None:
    await c._request(lambda req: p.QuickMatch(req=req, variant="spider1"))


async def _wait_matched(c: Client) -> str:
    await c.wait_until(lambda c: c.matched is not None, timeout=20)
    assert c.matched is not None
    await c.join(c.matched.code)
    return c.matched.code


async def _play_out(clients: list[Client]) -> None:
    """Everyone makes a move (a race nobody played is an abort) and resigns as soon as the
    deal comes; the first turns up a card first (it ranks first). Returns when every
    client saw the finish."""
    for c in clients:
        await c.wait_until(lambda c: c.view is not None, timeout=20)
    first, *others = clients
    for c in others:
        await c.move(c.legal_moves()[0])
        await c.resign()
    for _ in range(60):
        moves = first.legal_moves()
        if not moves:
            break
        ack = await first.move(moves[0])
        if ack.status != "playing" or (first.me is not None and first.me.turned_up > 0):
            break
    if first.status == "playing":
        await first.resign()
    for c in clients:
        await c.wait_until(lambda c: c.finished, timeout=20)


async def _counter(url: str, key: str) -> int:
    r = aioredis.from_url(url)
    try:
        return int(await r.get(key) or 0)
    finally:
        await r.aclose()


async def _eventually(check, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(timeout / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)
    assert await check()


async def test_a_quick_match_race_of_bots_is_rated_once(redis_server, server_node) -> None:
    nodes = [await server_node(redis_server.url, **MATCH) for _ in range(2)]
    clients = [await Client.connect(nodes[i % 2].url, name=f"bot{i}", bot=True) for i in range(3)]
    try:
        for c in clients:
            await _queue(c)
        codes = await asyncio.gather(*(_wait_matched(c) for c in clients))
        assert len(set(codes)) == 1
        code = codes[0]
        race = clients[0].race
        assert race is not None and race.quick and race.rated
        assert all(pl.bot for pl in race.players)  # seated as the bots they are
        await _play_out(clients)

        async def applied() -> bool:
            return await _counter(redis_server.url, keys.RATED_RACES) >= 1

        await _eventually(applied)
        store = nodes[1].node.store
        records = await store.ratings.load_records([c.player for c in clients if c.player])
        assert len(records) == 3
        for c in clients:
            assert c.player is not None
            vr = records[c.player].variants["spider1"]
            assert (vr.rated, vr.played) == (1, 1)  # changed exactly once
            assert vr.sigma < 25 / 3  # it moved
        changes = await clients[0].rating_changes(code)
        assert changes.applied and changes.rated and len(changes.changes) == 3
        assert {ch.pool for ch in changes.changes} == {"bots"}
        assert any(ch.after != ch.before for ch in changes.changes)
        # both nodes applying again (their background step) writes nothing new
        for n in nodes:
            await n.node.store.ratings.apply_pending(n.node.now() + 1)
            await n.node.store.ratings.apply_results(await n.node.store.races.load_race(code))
        assert await _counter(redis_server.url, keys.RATED_RACES) == 1
        again = await store.ratings.load_records([c.player for c in clients if c.player])
        assert all(r.variants["spider1"].rated == 1 for r in again.values())
        # one race leaves a rating provisional: on no ladder yet, the bots' nor the humans'
        for pool in ("bots", "humans"):
            assert (await store.ratings.ladder(pool, "spider1", None))[0] == []
    finally:
        for c in clients:
            await c.close()


async def test_the_queue_keeps_the_rating_read_from_the_store(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **{**MATCH, "match_wait": 30.0})
    async with await Client.connect(node.url, name="rated") as c:
        assert c.player is not None
        await _set_rating(redis_server.url, c.player, 2100)
        await _queue(c)
        entry = await node.node.store.lobby.match_entry(c.player)
        assert entry is not None and float(entry[2]) == 2100.0
        await c.cancel_match()


async def test_far_apart_ratings_start_within_the_wait_on_the_servers_clock(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **MATCH)
    clients = [await Client.connect(node.url, name=f"far{i}") for i in range(3)]
    try:
        for c, shown in zip(clients, (1000, 1800, 2600), strict=True):
            assert c.player is not None
            await _set_rating(redis_server.url, c.player, shown)
        for c in clients:
            await _queue(c)
        codes = await asyncio.gather(*(_wait_matched(c) for c in clients))
        assert len(set(codes)) == 1  # at the wait anyone fits: one race of the three
        r = aioredis.from_url(redis_server.url)
        try:
            [recent] = [x.decode() for x in await r.lrange(keys.MATCH_RECENT, 0, -1)]
        finally:
            await r.aclose()
        code, players, _, waits = recent.split("|")
        assert code == codes[0]
        assert sorted(players.split(",")) == sorted(c.player for c in clients if c.player)
        waited = [float(w) for w in waits.split(",")]
        # 800 apart needs a window wider than the wait gives: matched only once the wait
        # passed for the longest waiting, at most one turn's sleep and one turn's work later
        # (plus what a busy machine may hold the node's event loop: LAG)
        wait, turn = MATCH["match_wait"], MATCH["match_turn"]
        assert max(waited) >= wait, waited
        assert all(w <= wait + 2 * turn + LAG for w in waited), waited
    finally:
        for c in clients:
            await c.close()


async def test_a_late_rematch_is_refused_plainly(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **MATCH, rematch_wait=0.5)
    clients = [await Client.connect(node.url, name=n) for n in ("ada", "bob", "cy")]
    a, b, c = clients
    try:
        code = await a.create_race(variant="spider1", countdown=0)
        for other in (b, c):
            await other.join(code)
        await asyncio.gather(*(x.ready() for x in clients))
        await _play_out(clients)
        new_a, new_b = await asyncio.wait_for(asyncio.gather(a.rematch(), b.rematch()), 10)
        assert new_a == new_b != code
        with pytest.raises(WrongState, match="has already started"):
            await c._request(lambda req: p.Rematch(req=req, code=code))
        # accepting again once in it is no error
        await a._request(lambda req: p.Rematch(req=req, code=code))
        # one who never played the race is told so, started rematch or not
        async with await Client.connect(node.url, name="dee") as d:
            with pytest.raises(NotAPlayer, match="did not play"):
                await d._request(lambda req: p.Rematch(req=req, code=code))
        # once the finished race is gone (expired), the rematch cannot be accepted
        r = aioredis.from_url(redis_server.url)
        try:
            await r.delete(keys.meta(code))
        finally:
            await r.aclose()
        with pytest.raises(NotFound, match="can no longer be accepted"):
            await c._request(lambda req: p.Rematch(req=req, code=code))
    finally:
        for x in clients:
            await x.close()


async def test_the_open_races_list_shows_the_creators_rating(redis_server, server_node) -> None:
    """A listed race carries its creator's rating in the variant: a rated player's as
    shown, and a new player's as the display base, provisional."""
    node = await server_node(redis_server.url)
    async with (
        await Client.connect(node.url, name="rated") as rated,
        await Client.connect(node.url, name="fresh") as fresh,
    ):
        assert rated.player is not None
        await _set_rating(redis_server.url, rated.player, 1840)
        one = await rated.create_race(variant="spider1", max_players=3, public=True)
        two = await fresh.create_race(variant="spider1", max_players=3, public=True)
        listed = {r.code: r for r in await fresh.open_races()}
        assert (listed[one].creator_rating, listed[one].creator_provisional) == (1840, False)
        assert (listed[two].creator_rating, listed[two].creator_provisional) == (1500, True)
