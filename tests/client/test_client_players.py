"""The client library's profiles, rating changes, rating ladders and rematches, against real
server nodes: a rated race of two moves both players' ratings, once; a rematch with two
players starts a new race with a fresh deal (never the creator's chosen seed) and the same
options."""

from __future__ import annotations

import asyncio

from openskill.models import PlackettLuce

from spider_client import Client
from spider_server.race.ratings import display
from tests.client.client_helpers import FAST


async def _race_to_the_end(a: Client, b: Client, code: str, *others: Client) -> None:
    """``b`` (and ``others``) join, everyone is ready; ``b`` and the others make a move (a
    race nobody played is an abort) and resign, ``a`` plays until it turned up more cards
    than any of them (more progress: ``a`` ranks first), then resigns."""
    await b.join(code)
    for c in others:
        await c.join(code)
    await asyncio.gather(*(c.ready() for c in (a, b, *others)))
    for c in (a, b, *others):
        await c.wait_until(lambda c: c.view is not None, timeout=20)
    for c in (b, *others):
        await c.move(c.legal_moves()[0])
        await c.resign()
    most = max(c.me.turned_up if c.me is not None else 0 for c in (b, *others))
    for _ in range(200):
        moves = a.legal_moves()
        if not moves:
            break
        ack = await a.move(moves[0])
        if ack.status != "playing" or (a.me is not None and a.me.turned_up > most):
            break
    if a.status == "playing":
        await a.resign()
    await a.wait_until(lambda c: c.finished, timeout=20)
    await b.wait_until(lambda c: c.finished, timeout=20)


async def test_a_rated_race_moves_ratings_once_and_shows_in_profiles(
    redis_server, server_node
) -> None:
    one = await server_node(redis_server.url, **FAST)
    two = await server_node(redis_server.url, **FAST)
    async with (
        await Client.connect(one.url, name="ann") as a,
        await Client.connect(two.url, name="ann") as b,  # the same name: told apart by tag
    ):
        code = await a.create_race(variant="spider1", countdown=0, rated=True, max_players=2)
        assert a.race is not None and a.race.rated
        await _race_to_the_end(a, b, code)
        assert a.race is not None and a.race.results is not None
        ranks = {r.player: r.rank for r in a.race.results}
        reply = await a.rating_changes()
        assert reply.applied and reply.rated and len(reply.changes) == 2
        model = PlackettLuce()
        order = sorted(ranks, key=lambda pid: ranks[pid])
        rated = model.rate([[model.rating()], [model.rating()]], ranks=[ranks[p] for p in order])
        expected = {
            pid: display(team[0].mu, team[0].sigma) for pid, team in zip(order, rated, strict=True)
        }
        assert {c.player: c.after for c in reply.changes} == expected
        assert {c.player: c.before for c in reply.changes} == {a.player: 1500, b.player: 1500}
        assert {c.tag for c in reply.changes} == {a.player[-4:], b.player[-4:]}
        assert all(c.provisional for c in reply.changes)
        # the same answer from the other node
        assert (await b.rating_changes(code)).changes == reply.changes

        mine = await a.profile()
        assert mine.found and mine.player == a.player and mine.tag == a.player[-4:]
        [stats] = mine.variants
        assert (stats.variant, stats.played, stats.rated) == ("spider1", 1, 1)
        assert stats.rating == expected[a.player]
        assert [line.code for line in mine.races] == [code]
        assert mine.races[0].replay == f"/r/{code}" and mine.races[0].rated
        theirs = await a.profile(b.player)
        assert theirs.player == b.player and theirs.races[0].rank == ranks[b.player]
        # by name: an account's only (two guests named ann are no one's "ann")
        named = await a.profile("ann")
        assert not named.found and named.races == []
        assert not (await a.profile("nobody-at-all")).found

        # one race leaves both ratings provisional: on no ladder yet
        ladder = await a.rating_leaderboard("spider1")
        assert ladder.entries == [] and ladder.me is None
        assert (await a.rating_leaderboard("spider1", "bots")).entries == []


async def test_rematch_with_two_players(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST, rematch_wait=30)
    async with (
        await Client.connect(node.url, name="ada") as a,
        await Client.connect(node.url, name="bob") as b,
    ):
        code = await a.create_race(
            variant="spider1", seed="chosen", countdown=0, undo=False, time_limit=600
        )
        await _race_to_the_end(a, b, code)
        old = a.race
        assert old is not None and old.seed_chosen
        # both accept: made at once, long before the 30 s wait
        new_a, new_b = await asyncio.wait_for(asyncio.gather(a.rematch(), b.rematch()), 10)
        assert new_a == new_b != code
        for c in (a, b):
            assert c.code == new_a and c.race is not None
            assert {p.player for p in c.race.players} == {a.player, b.player}
            assert (c.race.variant, c.race.undo, c.race.time_limit) == ("spider1", False, 600)
            assert not c.race.seed_chosen  # the rematch's deal is a fresh secret one
        # every player was ready: the countdown (0 s) runs and the fresh deal comes
        await a.wait_until(lambda c: c.view is not None, timeout=20)
        assert a.race is not None and a.race.commitment != old.commitment


async def test_a_rematch_starts_after_the_wait_with_those_who_accepted(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **FAST, rematch_wait=1)
    async with (
        await Client.connect(node.url, name="ada") as a,
        await Client.connect(node.url, name="bob") as b,
        await Client.connect(node.url, name="cy") as c,
    ):
        code = await a.create_race(variant="spider1", countdown=0)
        await _race_to_the_end(a, b, code, c)
        # c never accepts: after the wait, a and b race again
        new_a, new_b = await asyncio.wait_for(asyncio.gather(a.rematch(), b.rematch()), 10)
        assert new_a == new_b
        assert a.race is not None
        assert {p.player for p in a.race.players} == {a.player, b.player}
