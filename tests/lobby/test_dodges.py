"""Dodging costs, against a real node (real Redis, real sockets): a player who leaves a
matched race before it starts dodges it. The first three dodges in a day cost a wait
before queueing again (30 s, doubling); the fourth, in a rated race, is a loss: the
dodger stays in the race as ``left``, ranks last, and is rated against those who raced —
when at least two players made a move: a race of two where one made a move at most is an
abort, unrated for both (the pure rules' test rates the dodger's loss in a race two
played). The node's time is a clock the test moves on (no wall time waited for)."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from spider_client import Client
from spider_client import protocol as p
from spider_server.store import keys
from tests.server.clocks import TestClock

from .match_helpers import RawPlayer

MATCH = {"match_gather": 0.5, "match_turn": 0.05, "match_max_players": 2, "match_countdown": 60}
DODGER = "127.0.0.3"


async def _rated_races(url: str) -> int:
    r = aioredis.from_url(url)
    try:
        return int(await r.get(keys.RATED_RACES) or 0)
    finally:
        await r.aclose()


async def _dodge(dodger: RawPlayer, opponent: Client, seen: set[str]) -> str:
    """The dodger and the opponent are matched (a race not in ``seen``), both join (it
    counts down), and the dodger leaves in the countdown; the race's code."""
    reply = await dodger.request(lambda req: p.QuickMatch(req=req, variant="spider1"))
    assert isinstance(reply, p.Queued), reply
    confirmed = asyncio.ensure_future(opponent.quick_match("spider1"))
    matched = await dodger.wait_for(lambda m: isinstance(m, p.Matched) and m.code not in seen)
    seen.add(matched.code)
    joined = await dodger.request(lambda req: p.Join(req=req, code=matched.code))
    assert isinstance(joined, p.Joined), joined
    assert await asyncio.wait_for(confirmed, 20) == matched.code  # it counts down
    assert opponent.race is not None and opponent.race.state == "countdown"
    done = await dodger.request(lambda req: p.Leave(req=req, code=matched.code))
    assert isinstance(done, p.Done), done
    return str(matched.code)


async def test_the_fourth_dodge_in_a_day_is_a_rated_loss(redis_server, server_node) -> None:
    clock = TestClock()
    handle = await server_node(redis_server.url, clock=clock, **MATCH)
    node = handle.node
    dodger = await RawPlayer.connect(handle.url, "dodger", source=DODGER)
    opponents: list[Client] = []
    seen: set[str] = set()
    try:
        for n, wait in enumerate((30.0, 60.0, 120.0), start=1):
            opponent = await Client.connect(handle.url, name=f"opponent{n}")
            opponents.append(opponent)
            code = await _dodge(dodger, opponent, seen)
            race = await node.store.races.load_race(code)
            assert race is not None and dodger.player not in race.players  # out of it
            assert race.state.value == "countdown"  # the other races on
            # a free dodge costs a wait only: refused, then queued once it passed
            refused = await dodger.request(lambda req: p.QuickMatch(req=req, variant="spider1"))
            assert isinstance(refused, p.Error) and refused.error == "rate_limited", refused
            assert refused.retry_after == wait, (n, refused)
            clock.move(wait)
        assert not await node.store.ratings.load_records([dodger.player])

        opponent = await Client.connect(handle.url, name="opponent4")
        opponents.append(opponent)
        code = await _dodge(dodger, opponent, seen)
        race = await node.store.races.load_race(code)
        assert race is not None and race.players[dodger.player].status == "left"
        refused = await dodger.request(lambda req: p.QuickMatch(req=req, variant="spider1"))
        assert isinstance(refused, p.Error) and refused.retry_after == 240.0, refused
        await opponent.wait_until(
            lambda c: (
                c.race is not None
                and any(i.player == dodger.player and i.status == "left" for i in c.race.players)
            ),
            timeout=20,
        )

        # the countdown ends: the dodger's game is over at the start, the other plays it
        # out (resigning at once, with the very progress the dodger has: still first)
        before = await _rated_races(redis_server.url)
        clock.move(MATCH["match_countdown"] + 1)
        await opponent.wait_until(lambda c: c.view is not None, timeout=20)
        await opponent.resign()
        await opponent.wait_until(lambda c: c.finished, timeout=20)
        assert opponent.race is not None and opponent.race.results is not None
        ranked = {r.player: (r.rank, r.status) for r in opponent.race.results}
        assert ranked == {opponent.player: (1, "resigned"), dodger.player: (2, "left")}

        changes = await opponent.rating_changes(code)  # once the results are written
        assert changes.rated and changes.applied and changes.changes == []
        assert await _rated_races(redis_server.url) == before  # an abort: no rated race
        records = await node.store.ratings.load_records([dodger.player, opponent.player])
        lost, won = (
            records[dodger.player].variants["spider1"],
            records[opponent.player].variants["spider1"],
        )
        # nobody made a move: an abort, each race counted, no rating moved
        assert (lost.played, won.played, lost.rated, won.rated) == (1, 1, 0, 0)
        assert lost.mu == won.mu == 25.0
    finally:
        await dodger.close()
        for c in opponents:
            await c.close()
