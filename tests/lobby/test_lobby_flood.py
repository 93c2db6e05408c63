"""A lobby nobody can bury, against a real node: spam public races from many loopback
addresses (each client socket bound to its own 127.0.0.x, so the node counts each as an
address of its own) and as many players, every one of them still connected, cannot push
an honest race out of its variant's list, the rated list, or the full list; the caps on
a player's and an address's public races hold.

Under the list's old rules (newest first, the variant filtered after the list's cap) the
honest race was gone from every list."""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.asyncio.client import connect

from spider_client import protocol as p
from tests.server.server_helpers import TIMEOUT, Client


async def _client_from(url: str, address: str, name: str) -> Client:
    """A player connected from ``address`` (a loopback address: the socket is bound to
    it), hello said."""
    ws = await connect(url, max_size=None, open_timeout=TIMEOUT, local_addr=(address, 0))
    client = Client(ws, label=name)
    await client.send(p.Hello(name=name))
    client.welcome = await client.expect("welcome")
    return client


def _address(i: int) -> str:
    """The ``i``-th spam address: 127.0.1.0 on (the honest player is 127.0.0.1's)."""
    return f"127.0.{1 + i // 250}.{i % 250 + 1}"


async def _spam(url: str, addresses: int, per_address: int) -> list[Client]:
    """One player per spam race, ``per_address`` of them from each of ``addresses``
    addresses, each creating one public spider1 race and staying connected (a race whose
    creator leaves leaves the list)."""

    async def one(a: int, k: int) -> Client:
        spammer = await _client_from(url, _address(a), f"spam{a}-{k}")
        reply = await spammer.request(
            p.CreateRace(req=0, variant="spider1", max_players=2, public=True), ("joined",)
        )
        assert reply.race.public
        return spammer

    clients: list[Client] = []
    for a in range(addresses):  # an address at a time: its races in creation order
        clients += await asyncio.gather(*(one(a, k) for k in range(per_address)))
    return clients


async def _flood(redis_server: Any, server_node: Any, *, addresses: int, length: int) -> None:
    node = await server_node(
        redis_server.url,
        address_open_races=5,
        player_open_races=2,
        open_list_length=length,
        address_connections=50,
    )
    honest = await _client_from(node.url, "127.0.0.1", "honest")
    joined = await honest.create(
        variant="spider4", max_players=4, public=True, rated=True, time_limit=900, countdown=3
    )
    code = joined.race.code
    spammers = await _spam(node.url, addresses, 5)
    try:
        assert len(spammers) == 5 * addresses > length
        # the caps: a sixth from an address, a third from a player, refused
        sixth = await _client_from(node.url, _address(0), "sixth")
        refused = await sixth.request(
            p.CreateRace(req=0, variant="spider1", public=True), ("joined", "error")
        )
        assert refused.type == "error" and refused.error == "too_many_races", refused
        assert "address" in refused.message
        await honest.create(variant="spider1", public=True)
        refused = await honest.request(
            p.CreateRace(req=0, variant="spider1", public=True), ("joined", "error")
        )
        assert refused.type == "error" and refused.error == "too_many_races", refused
        assert code in refused.races
        await sixth.close()
        # the honest race is in its variant's list, the rated list and the full list
        reader = await _client_from(node.url, "127.0.0.1", "reader")
        for ask in (
            p.OpenRaces(req=0, variant="spider4"),
            p.OpenRaces(req=0, rated=True),
            p.OpenRaces(req=0),
        ):
            reply = await reader.request(ask, ("open_race_list",))
            codes = [r.code for r in reply.races]
            assert code in codes, ask
            assert len(codes) <= length
        full = await reader.request(p.OpenRaces(req=0), ("open_race_list",))
        assert len(full.races) == length
        assert full.races[0].code == code  # the longest waiting
        mine = full.races[0]
        assert (mine.rated, mine.live_boards, mine.humans_only) == (True, False, False)
        assert mine.creator_rating is not None
        # one an address at a time: the first round holds every address once
        # one race an address at a time: every address's oldest race before any second
        spam = await reader.request(p.OpenRaces(req=0, variant="spider1"), ("open_race_list",))
        owners = {s.player: s.ws.local_address[0] for s in spammers}
        seen = [owners[r.creator] for r in spam.races]
        assert seen == [_address(a) for a in range(length)]
        await reader.close()
    finally:
        for s in spammers:
            await s.close()
        await honest.close()


async def test_a_thousand_spam_races_from_200_addresses_bury_no_honest_race(
    redis_server, server_node
) -> None:
    """The attack at full size: 1,000 spam races from 200 loopback addresses and as many
    players (five an address: the address's cap), all still connected, against the
    default list of 100."""
    await _flood(redis_server, server_node, addresses=200, length=100)
