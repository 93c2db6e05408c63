"""The open races' list against real nodes: a public race appears, fills and vanishes, on
every node; private races never show."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import AsyncIterator

from spider_client import Client
from spider_client import protocol as p
from spider_server.session.departures import left_public_race
from spider_server.store import keys
from tests.server.clocks import TestClock


async def _next(
    it: AsyncIterator[p.OpenRaceChanged], code: str, *, gone: bool = False
) -> p.OpenRaceChanged:
    """The next change of race ``code`` (with ``gone``: the one taking it off the list)."""
    async with asyncio.timeout(10):
        async for change in it:
            if change.code == code and (change.race is None or not gone):
                return change
    raise AssertionError("the watch ended")


async def test_a_public_race_appears_fills_and_vanishes_across_nodes(
    redis_server, server_node
) -> None:
    one = await server_node(redis_server.url)
    two = await server_node(redis_server.url)
    async with (
        await Client.connect(one.url, name="host") as host,
        await Client.connect(two.url, name="visitor") as guest,
        await Client.connect(two.url, name="lurker") as lurker,
    ):
        watch = lurker.watch_open_races()
        private = await host.create_race(variant="spider1", max_players=2)
        code = await host.create_race(variant="spider1", max_players=2, public=True)
        seen = await _next(watch, code)
        assert seen.race is not None
        assert (seen.race.players, seen.race.free, seen.race.creator_name) == (1, 1, "host")
        listed = await guest.open_races()
        assert [r.code for r in listed] == [code] and private not in lurker.listed
        await guest.join(code)
        filled = await _next(watch, code)
        assert filled.race is not None and (filled.race.players, filled.race.free) == (2, 0)
        await host.ready()
        await guest.ready()
        gone = await _next(watch, code, gone=True)
        assert gone.race is None and code not in lurker.listed
        assert await guest.open_races() == []
        await watch.aclose()


async def test_a_race_left_by_everyone_leaves_the_list(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    async with await Client.connect(node.url, name="host") as host:
        code = await host.create_race(variant="spider1", public=True)
        assert [r.code for r in await host.open_races("spider1")] == [code]
        assert await host.open_races("spider2") == []
        await host.leave()
        assert await host.open_races() == []


async def test_a_public_race_leaves_the_list_when_its_creator_leaves_it(
    redis_server, server_node
) -> None:
    """Its creator gone, a race leaves the list though others are still in it (they go on
    by its code); the creator's place in the lobby is free again."""
    node = await server_node(redis_server.url, player_open_races=1)
    async with (
        await Client.connect(node.url, name="host") as host,
        await Client.connect(node.url, name="visitor") as guest,
        await Client.connect(node.url, name="lurker") as lurker,
    ):
        watch = lurker.watch_open_races()
        code = await host.create_race(variant="spider1", max_players=3, public=True)
        assert (await _next(watch, code)).race is not None
        await guest.join(code)
        await _next(watch, code)
        await host.leave()
        assert (await _next(watch, code, gone=True)).race is None
        assert await lurker.open_races() == []
        race = await node.node.store.races.load_race(code)
        assert race is not None and list(race.players) == [guest.player]
        await lurker.join(code)  # by its code, still open
        again = await host.create_race(variant="spider1", public=True)  # a place again
        assert [r.code for r in await lurker.open_races()] == [again]
        await watch.aclose()


async def test_a_creator_who_disconnects_takes_the_race_off_the_list(
    redis_server, server_node
) -> None:
    """A player whose last connection to a public race waiting for players ends is out of
    it: its creator's race leaves the list, and the race closes when nobody is in."""
    node = await server_node(redis_server.url)
    store = node.node.store
    async with await Client.connect(node.url, name="lurker") as lurker:
        watch = lurker.watch_open_races()
        host = await Client.connect(node.url, name="host")
        guest = await Client.connect(node.url, name="visitor")
        code = await host.create_race(variant="spider1", max_players=3, public=True)
        await guest.join(code)
        await host.close()
        assert (await _next(watch, code, gone=True)).race is None
        race = await store.races.load_race(code)
        assert race is not None and list(race.players) == [guest.player]
        await guest.close()
        async with asyncio.timeout(10):
            while await store.races.load_race(code) is not None:
                await asyncio.sleep(0.02)
        assert await lurker.open_races() == []
        # a private race is left alone: its player's claim dropped, they are still in it
        private_host = await Client.connect(node.url, name="private")
        private = await private_host.create_race(variant="spider1", max_players=2)
        player = private_host.player
        await private_host.close()
        async with asyncio.timeout(10):
            while (await store.presence.presence(private, node.node.now()))[0]:
                await asyncio.sleep(0.02)
        await left_public_race(node.node.context, private, player)  # as the node does
        race = await store.races.load_race(private)
        assert race is not None and player in race.players
        await watch.aclose()


async def test_a_race_whose_creator_s_claims_lapsed_leaves_the_list(
    redis_server, server_node
) -> None:
    """A creator whose node died holds no claim on their race once a claim's life has
    passed: the list takes the race off when it is read. (Claims live an hour here: the
    node's own renewal, every third of that, never comes during the test; the test renews
    the claims of the connections the node keeps, as that turn would.)"""
    clock = TestClock()
    node = await server_node(redis_server.url, clock=clock, presence_ttl=3600)
    store, ttl = node.node.store, node.node.settings.presence_ttl
    async with (
        await Client.connect(node.url, name="kept") as kept,
        await Client.connect(node.url, name="lost") as lost,
    ):
        one = await kept.create_race(variant="spider1", public=True)
        two = await lost.create_race(variant="spider1", public=True)
        assert {r.code for r in await kept.open_races()} == {one, two}
        # as if the node holding ``lost``'s connection had died: no claim is renewed
        await store.redis.delete(keys.online(two))
        assert {r.code for r in await kept.open_races()} == {one, two}  # not yet a claim's life
        clock.move(ttl + 1)  # a claim's life later
        items = [i for c in node.node.connections for i in c.session.presence_items()]
        await store.presence.touch_presence(
            [i for i in items if i[0] != two], node.node.now()
        )  # the claims this node renews
        assert [r.code for r in await kept.open_races()] == [one]
        assert [r.code for r in await kept.open_races()] == [one]  # off the list for good


def test_the_listed_map_keeps_the_newest_listing_of_each_race() -> None:
    """A change applied to ``listed`` (from an event, from the watch's read, or from a
    change that came during that read) never puts back an older listing, and a race off
    the list leaves it."""
    client = Client("ws://127.0.0.1:9/ws")  # never connected: the map alone
    older = p.OpenRace(
        code="K7M2Q", variant="spider1", state="open", players=1, max_players=4,
        time_limit=1800, undo=True, countdown=3, winnable=False, hints=False,
        creator="p3f9a2c41d0b7", creator_name="alice", created_at=1.0, version=1,
    )  # fmt: skip
    newer = dataclasses.replace(older, players=2, version=2)
    client.lobby.take_change(p.OpenRaceChanged(code="K7M2Q", race=newer))
    client.lobby.take_change(p.OpenRaceChanged(code="K7M2Q", race=older))
    assert client.listed["K7M2Q"].players == 2
    client.lobby.take_change(p.OpenRaceChanged(code="K7M2Q", race=None))
    assert "K7M2Q" not in client.listed
    client.lobby.take_change(p.OpenRaceChanged(code="K7M2Q", race=older))  # listed again
    assert client.listed["K7M2Q"].version == 1
