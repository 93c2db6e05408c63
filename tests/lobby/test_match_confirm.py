"""Confirmed matches, against a real node (real Redis, real sockets): a quick match counts
once every matched player joined its race within ``match_confirm``. Three identities that
queue from one address and never join cannot hold the honest player's seat past that
window: the match is called off, the honest player is queued again ahead of everyone and
matched with the next honest player, and the no-shows (and any new identity from their
address) must wait before queueing again. The node's time is a clock the test moves on:
nothing here waits for wall time to pass."""

from __future__ import annotations

import asyncio

import pytest
import redis.asyncio as aioredis

from spider_client import Client, RateLimited
from spider_client import protocol as p
from spider_server.store import keys
from spider_server.store.matching import MatchingStore
from tests.server.clocks import TestClock

from .match_helpers import RawPlayer

MATCH = {"match_gather": 0.5, "match_turn": 0.05, "match_max_players": 4, "match_countdown": 5}
CONFIRM = 10.0
"""The default confirmation window (the test leaves the setting alone)."""
ATTACKER = "127.0.0.2"


async def _node(redis_server, server_node, **settings):  # type: ignore[no-untyped-def]
    clock = TestClock()  # every window of the node takes its time here
    handle = await server_node(redis_server.url, clock=clock, **{**MATCH, **settings})
    return handle, clock


async def _exists(url: str, code: str) -> bool:
    r = aioredis.from_url(url)
    try:
        return bool(await r.exists(keys.meta(code)))
    finally:
        await r.aclose()


async def _eventually(check, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.05)


async def test_no_shows_cannot_hold_a_seat_past_the_window(redis_server, server_node) -> None:
    handle, clock = await _node(redis_server, server_node)
    node = handle.node
    assert node.settings.match_confirm == CONFIRM
    honest = await Client.connect(handle.url, name="honest")
    no_shows = [await RawPlayer.connect(handle.url, f"ghost{i}", source=ATTACKER) for i in range(3)]
    try:
        for raw in no_shows:
            reply = await raw.request(lambda req: p.QuickMatch(req=req, variant="spider1"))
            assert isinstance(reply, p.Queued), reply
        first = asyncio.ensure_future(honest.quick_match("spider1"))
        told = [await raw.wait_for(lambda m: isinstance(m, p.Matched)) for raw in no_shows]
        code = told[0].code
        assert {m.code for m in told} == {code}
        assert told[0].confirm_by == pytest.approx(clock.now + CONFIRM, abs=0.01)
        await honest.wait_until(lambda c: c.race is not None and c.race.code == code, timeout=20)
        race = await node.store.races.load_race(code)
        assert race is not None and race.state.value == "open"  # waiting for its players
        assert [p for p, e in race.players.items() if e.ready] == [honest.player]

        # just short of the window: the match still waits for them
        clock.move(CONFIRM - 0.5)
        await node.lobby.matches.settle_due()
        assert await _exists(redis_server.url, code) and not first.done()

        # the window is up: the match is called off, the race deleted, the honest player
        # queued again (the client library does it on match_cancelled), first in line
        clock.move(1.0)

        async def gone() -> bool:
            return not await _exists(redis_server.url, code)

        await _eventually(gone)
        await honest.wait_until(lambda c: c.lobby.called_off == code, timeout=20)
        assert not first.done()

        async def queued_again() -> bool:
            return await node.store.lobby.match_entry(honest.player) is not None

        await _eventually(queued_again)

        # the no-shows cannot queue again at once, nor can a new identity from their address
        for raw in no_shows:
            reply = await raw.request(lambda req: p.QuickMatch(req=req, variant="spider1"))
            assert isinstance(reply, p.Error) and reply.error == "rate_limited", reply
            # one miss each (30 s), but three from the address: 30 s doubled twice
            assert reply.retry_after == 120.0, reply
        fresh = await RawPlayer.connect(handle.url, "fresh", source=ATTACKER)
        reply = await fresh.request(lambda req: p.QuickMatch(req=req, variant="spider1"))
        assert isinstance(reply, p.Error) and reply.retry_after == 120.0, reply
        await fresh.close()

        # the next honest player is matched with the one who waited, at once
        async with await Client.connect(handle.url, name="next") as later:
            again = await asyncio.wait_for(later.quick_match("spider1"), 20)
            assert await asyncio.wait_for(first, 20) == again != code
            race = await node.store.races.load_race(again)
            assert race is not None and race.state.value == "countdown"
            assert set(race.players) == {honest.player, later.player}
            assert race.starts_at == pytest.approx(clock.now + MATCH["match_countdown"])
            # the honest player kept their place: they queued first, and waited longest
            [recent] = [
                x
                for x in await node.store.redis.lrange(keys.MATCH_RECENT, 0, -1)
                if x.decode().startswith(again)
            ]
            waits = dict(
                zip(
                    recent.decode().split("|")[1].split(","),
                    (float(w) for w in recent.decode().split("|")[3].split(",")),
                    strict=True,
                )
            )
            assert waits[honest.player] >= CONFIRM and waits[later.player] == 0.0

        # the wait is over once the clock passes it, for the player and the address
        clock.move(120.0)
        reply = await no_shows[0].request(lambda req: p.QuickMatch(req=req, variant="spider1"))
        assert isinstance(reply, p.Queued), reply
    finally:
        first.cancel()
        await honest.close()
        for raw in no_shows:
            await raw.close()


async def test_the_wait_is_told_to_the_client_library(redis_server, server_node) -> None:
    """A client that missed its match gets RateLimited with the seconds to wait."""
    handle, clock = await _node(redis_server, server_node, match_max_players=2)
    node = handle.node
    async with (
        await Client.connect(handle.url, name="missing") as missing,
        await Client.connect(handle.url, name="keen") as keen,
    ):
        await missing._request(lambda req: p.QuickMatch(req=req, variant="spider1"))
        first = asyncio.ensure_future(keen.quick_match("spider1"))
        await missing.wait_until(lambda c: c.matched is not None, timeout=20)
        assert missing.matched is not None
        code = missing.matched.code
        assert missing.matched.confirm_by == pytest.approx(clock.now + CONFIRM, abs=1)
        await keen.wait_until(lambda c: c.race is not None and c.race.code == code, timeout=20)
        clock.move(CONFIRM + 0.5)

        async def gone() -> bool:
            return not await _exists(redis_server.url, code)

        await _eventually(gone)
        with pytest.raises(RateLimited) as refused:
            await missing.quick_match("spider1", timeout=20)
        assert refused.value.retry_after == 30.0
        assert "queue again in 30 s" in refused.value.message
        assert not first.done()  # the keen one waits, queued again

        async def queued_again() -> bool:
            return await node.store.lobby.match_entry(keen.player) is not None

        await _eventually(queued_again)
        first.cancel()


async def test_a_match_left_unsettled_is_due_again_at_once(redis_server) -> None:
    """A match taken to be settled is held by its lease (no other node takes it), but one
    given back unsettled (its race changed under every try, or settling failed) is due
    again on the next turn, not once the lease runs out; one settled meanwhile stays
    forgotten."""
    r = aioredis.from_url(redis_server.url)
    try:
        matching = MatchingStore(r)
        await matching.expect("ABCDE", "spider1:n:humans", {}, 100.0)
        assert await matching.due(99.0, lease=30.0) == []
        assert await matching.due(101.0, lease=30.0) == ["ABCDE"]
        assert await matching.due(101.0, lease=30.0) == []  # held by its lease
        await matching.give_back(["ABCDE"], 101.0)
        assert await matching.due(101.0, lease=30.0) == ["ABCDE"]
        await matching.settled("ABCDE")
        await matching.give_back(["ABCDE"], 101.0)
        assert await matching.due(1e12, lease=30.0) == []
    finally:
        await r.aclose()
