"""One set of limits for every way in, against a real node: a rematch and a quick match
count as creations (the creation rates of the player and of the address, and the cap of
unfinished races) like ``create_race``; a refused rematch changes nothing. The node's limits run on a clock
that stands still here: nothing refills, however long the test takes."""

from __future__ import annotations

from typing import Any

from spider_client import protocol as p
from tests.server.server_helpers import Client


def _freeze(node: Any) -> None:
    """The node's limits per address and player on a clock that stands still."""
    node.node.addresses.clock = lambda: 0.0


async def _finished_race(client: Client) -> str:
    """A one-player race (countdown 0) that ``client`` creates, starts and resigns: its
    code, finished."""
    joined = await client.create(variant="spider1", countdown=0)
    code: str = joined.race.code
    await client.ready(code)
    await client.expect("ack", lambda m: m.code == code and m.seq == 0)
    return await _resign(client, code, 1)


async def _resign(client: Client, code: str, seq: int) -> str:
    await client.send(p.Resign(code=code, seq=seq))
    ack = await client.expect(("ack", "error"), lambda m: m.seq == seq and m.code == code)
    assert ack.type == "ack", ack
    await client.expect("finished", lambda m: m.race == code)
    return code


async def _rematch(
    node: Any, client: Client, code: str, *, first: bool = True
) -> tuple[Any, str | None]:
    """Accept the rematch of finished race ``code`` (``first``: not accepted before): the
    reply, and the new race's code (None: none made)."""
    reply = await client.request(p.Rematch(req=0, code=code), ("done", "error"))
    if reply.type == "done" and first:  # made once this node's acceptance is committed: its event
        offer = await client.expect("rematch_offer", lambda m: m.race == code and m.code)
        return reply, offer.code
    race = await node.node.store.races.load_race(code)
    made = race.rematch.code if race is not None and race.rematch is not None else None
    return reply, made


async def _next_in_chain(node: Any, client: Client, code: str) -> str | None:
    """Rematch finished race ``code``, play the new race to its end (resign at once): its
    code, or None when the rematch was refused (then asserted to have changed nothing)."""
    before = await node.node.store.races.load_race(code)
    reply, made = await _rematch(node, client, code)
    if reply.type == "error":
        after = await node.node.store.races.load_race(code)
        assert made is None and after is not None and before is not None
        assert (after.version, after.rematch) == (before.version, None)
        _refusals.append(reply.error)
        return None
    assert made is not None, reply
    joined = await client.join(made)
    return await _resign(client, made, joined.seq + 1)


_refusals: list[str] = []


async def test_a_rematch_chain_stops_at_the_address_creation_rate(
    redis_server, server_node
) -> None:
    """Three players on one address chain rematches of one-player races: together they
    make exactly ``address_creations`` races, counting the first ones they created, and
    every rematch after that is ``rate_limited``, as a ``create_race`` is."""
    node = await server_node(redis_server.url, address_creations=12, player_creations=1000)
    _freeze(node)
    _refusals.clear()
    clients = [await Client.connect(node.url, name=f"chain{i}") for i in range(3)]
    last = [await _finished_race(c) for c in clients]
    made = len(last)
    for _ in range(10):  # rounds: each player rematches their last race
        for i, client in enumerate(clients):
            code = await _next_in_chain(node, client, last[i])
            if code is not None:
                last[i] = code
                made += 1
    assert made == 12
    assert set(_refusals) == {"rate_limited"} and len(_refusals) == 3 * 10 - (12 - 3)
    refused = await clients[0].request(p.CreateRace(req=0, variant="spider1"), ("joined", "error"))
    assert refused.type == "error" and refused.error == "rate_limited"  # the same limit
    assert node.node.metrics.races_created_total == 12
    for c in clients:
        await c.close()


async def test_a_rematch_chain_stops_at_the_player_creation_rate(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, player_creations=4)
    _freeze(node)
    _refusals.clear()
    client = await Client.connect(node.url, name="chain")
    code: str | None = await _finished_race(client)
    made = 1
    while code is not None:
        code = await _next_in_chain(node, client, code)
        made += code is not None
    assert made == 4 and _refusals == ["rate_limited"]
    # another player on the same address is not held back
    other = await Client.connect(node.url, name="other")
    assert (await other.create(variant="spider1")).type == "joined"
    await client.close()
    await other.close()


async def test_a_rematch_past_the_cap_of_unfinished_races_is_refused(
    redis_server, server_node
) -> None:
    """A player with ``max_races_per_player`` races under way may not accept a rematch
    (``too_many_races``, with the codes of those races): the finished race keeps no offer
    and no race is made."""
    node = await server_node(redis_server.url, max_races_per_player=2)
    client = await Client.connect(node.url, name="holder")
    finished = [await _finished_race(client) for _ in range(3)]
    running = []
    for code in finished[:2]:
        reply, made = await _rematch(node, client, code)
        assert reply.type == "done" and made is not None, reply
        running.append(made)
    before = await node.node.store.races.load_race(finished[2])
    reply, made = await _rematch(node, client, finished[2])
    assert reply.type == "error" and reply.error == "too_many_races", reply
    assert sorted(reply.races) == sorted(running)
    after = await node.node.store.races.load_race(finished[2])
    assert made is None and after is not None and before is not None
    assert (after.version, after.rematch) == (before.version, None)
    refused = await client.request(p.CreateRace(req=0, variant="spider1"), ("joined", "error"))
    assert refused.type == "error" and refused.error == "too_many_races"  # the same cap
    # one of them over: the rematch is accepted
    joined = await client.join(running[0])
    await _resign(client, running[0], joined.seq + 1)
    reply, made = await _rematch(node, client, finished[2])
    assert reply.type == "done" and made is not None, reply
    await client.close()


async def test_accepting_a_rematch_again_costs_nothing(redis_server, server_node) -> None:
    """Only an acceptance that puts the player in a new race counts: the same acceptance
    sent again, once the rematch is made, is answered ``done`` at no cost."""
    node = await server_node(redis_server.url, player_creations=2)
    _freeze(node)
    client = await Client.connect(node.url, name="again")
    code = await _finished_race(client)
    reply, made = await _rematch(node, client, code)
    assert reply.type == "done" and made is not None
    for _ in range(3):
        reply, again = await _rematch(node, client, code, first=False)
        assert reply.type == "done" and again == made
    await client.close()


async def test_queueing_for_a_quick_match_counts_as_a_creation(redis_server, server_node) -> None:
    """Queueing for a quick match takes one of the player's creations a minute, as a
    ``create_race`` does: past them, both are ``rate_limited``."""
    node = await server_node(redis_server.url, player_creations=2)
    _freeze(node)
    client = await Client.connect(node.url, name="queuer")
    await client.create(variant="spider1")
    queued = await client.request(p.QuickMatch(req=0, variant="spider1"), ("queued", "error"))
    assert queued.type == "queued", queued
    assert (await client.request(p.CancelMatch(req=0), ("done", "error"))).type == "done"
    refused = await client.request(p.QuickMatch(req=0, variant="spider1"), ("queued", "error"))
    assert refused.type == "error" and refused.error == "rate_limited", refused
    refused = await client.request(p.CreateRace(req=0, variant="spider1"), ("joined", "error"))
    assert refused.type == "error" and refused.error == "rate_limited", refused
    await client.close()
