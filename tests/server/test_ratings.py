"""Ratings: the update is openskill's Plackett–Luce on the server's ranking (ties shared);
a finished race is written into its players' records exactly once, whichever nodes try
it and whenever; and one player's two races written at the same moment both count."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace

import msgpack
import pytest
from openskill.models import PlackettLuce

from spider_client.protocol import CreateRace
from spider_server import race as r
from spider_server.race.ratings import (
    DISPLAY_BASE,
    MAX_CHANGE,
    Placing,
    Record,
    VariantRecord,
    capped,
    display,
    rate,
    settle,
)
from spider_server.store import keys

from .account_helpers import ACCOUNT_SETTINGS, account_token

# -- the update, against openskill called directly ----------------------------------------


def test_rate_is_plackett_luce_on_the_ranking_with_ties() -> None:
    model = PlackettLuce()
    start = {"a": (27.0, 6.0), "b": (25.0, 8.333), "c": (22.0, 4.0), "d": (30.0, 7.0)}
    ranking = [("a", 1), ("b", 2), ("c", 2), ("d", 4)]
    ours = rate(ranking, start)
    theirs = model.rate(
        [[model.rating(mu=start[p][0], sigma=start[p][1])] for p, _ in ranking],
        ranks=[1, 2, 2, 4],
    )
    for (p, _), team in zip(ranking, theirs, strict=True):
        assert ours[p] == (team[0].mu, team[0].sigma)
    # tied players who started equal end equal; the winner gains, the last loses
    assert ours["a"][0] > start["a"][0] and ours["d"][0] < start["d"][0]


def test_settle_rates_each_pool_apart_and_counts_every_race() -> None:
    placings = [
        Placing(player="h1", name="ann", rank=1, status="won", time=61.5, moves=90),
        Placing(player="b1", name="bot", rank=2, status="won", time=70.0, bot=True, moves=99),
        Placing(player="h2", name="ann", rank=3, status="timeout", time=None, moves=40),
        Placing(player="b2", name="bot2", rank=4, status="resigned", time=None, bot=True, moves=1),
    ]
    old = Record(player="h2", version=3, variants={"spider1": VariantRecord(mu=30, sigma=3)})
    out = settle(
        code="K7QX2",
        variant="spider1",
        rated=True,
        placings=placings,
        records={"h2": old},
        now=1000.0,
    )
    model = PlackettLuce()
    humans = model.rate([[model.rating()], [model.rating(mu=30, sigma=3)]], ranks=[1, 3])
    bots = model.rate([[model.rating()], [model.rating()]], ranks=[2, 4])
    got = {rec.player: rec.variants["spider1"] for rec in out.records}
    new = model.rating()
    # openskill's update, each cut back to MAX_CHANGE shown (h1 beat a strong player)
    assert (got["h1"].mu, got["h1"].sigma) == capped((new.mu, new.sigma), humans[0][0].mu,
                                                     humans[0][0].sigma)  # fmt: skip
    assert got["h1"].rating == DISPLAY_BASE + MAX_CHANGE
    assert (got["h2"].mu, got["h2"].sigma) == (humans[1][0].mu, humans[1][0].sigma)
    assert (got["b1"].mu, got["b1"].sigma) == (bots[0][0].mu, bots[0][0].sigma)
    assert (got["b2"].mu, got["b2"].sigma) == (bots[1][0].mu, bots[1][0].sigma)
    assert {rec.player: rec.version for rec in out.records}["h2"] == 3
    assert got["h1"].played == got["h1"].won == got["h1"].streak == 1
    assert got["h1"].best_time == 61.5 and got["h2"].won == 0 and got["h2"].streak == 0
    change = {c.player: c for c in out.changes}
    assert change["h1"].before == DISPLAY_BASE and change["h1"].after == got["h1"].rating
    assert change["b1"].pool == "bots" and change["h2"].pool == "humans"
    assert out.lines["h2"].before == display(30, 3) and out.lines["h2"].rank == 3


def test_an_unrated_race_counts_but_moves_no_rating() -> None:
    placings = [
        Placing(player="a", name="a", rank=1, status="won", time=5.0),
        Placing(player="b", name="b", rank=2, status="stuck", time=None),
    ]
    out = settle(code="X", variant="spider1", rated=False, placings=placings, records={}, now=1)
    assert out.changes == []
    for rec in out.records:
        vr = rec.variants["spider1"]
        assert vr.played == 1 and vr.rated == 0 and vr.rating == DISPLAY_BASE
    assert not out.lines["a"].rated


def test_a_race_where_at_most_one_player_moved_is_an_abort() -> None:
    """Nobody moved, or one player alone: unrated for everyone (each race still counts in
    the record); two who moved: rated, a player who never moved rated as the forfeit it is."""
    for moves in ([0, 0, 0], [12, 0, 0]):
        placings = [
            Placing(player=p, name=p, rank=i + 1, status="resigned", time=None, moves=m)
            for i, (p, m) in enumerate(zip("abc", moves, strict=True))
        ]
        out = settle(code="X", variant="spider1", rated=True, placings=placings, records={}, now=1)
        assert out.changes == [] and not any(line.rated for line in out.lines.values())
        assert all(rec.variants["spider1"].played == 1 for rec in out.records)
    placings = [
        Placing(player="a", name="a", rank=1, status="won", time=80.0, moves=60),
        Placing(player="b", name="b", rank=2, status="resigned", time=None, moves=2),
        Placing(player="c", name="c", rank=3, status="resigned", time=None, moves=0),
    ]
    out = settle(code="Y", variant="spider1", rated=True, placings=placings, records={}, now=1)
    moved = {c.player: c.after - c.before for c in out.changes}
    assert set(moved) == {"a", "b", "c"} and moved["c"] < 0 < moved["a"]


def test_a_rating_moves_at_most_max_change_in_one_race() -> None:
    """A settled player beating seven newcomers (or losing to them) moves MAX_CHANGE at
    most; sigma is the update's."""
    from spider_server.race.ratings import MAX_CHANGE, capped

    strong = VariantRecord(mu=20.0, sigma=1.0)  # shown 1500 + 40 * 17 = 2180
    records = {"s": Record(player="s", variants={"spider1": strong})}
    for rank in (1, 8):
        others = [p for p in "abcdefgh" if p != "s"][:7]
        order = ["s", *others] if rank == 1 else [*others, "s"]
        placings = [
            Placing(player=p, name=p, rank=i + 1, status="won", time=10.0 + i, moves=5)
            for i, p in enumerate(order)
        ]
        out = settle(code="Z", variant="spider1", rated=True, placings=placings,
                     records=records, now=1)  # fmt: skip
        change = next(c for c in out.changes if c.player == "s")
        assert abs(change.after - change.before) <= MAX_CHANGE
    assert capped((25.0, 8.0), 40.0, 7.0) == pytest.approx(
        ((display(25.0, 8.0) + MAX_CHANGE - 1500) / 40 + 21.0, 7.0)
    )
    assert capped((25.0, 8.0), 25.5, 7.9) == (25.5, 7.9)  # within the cap: as it was


def test_rated_is_refused_with_a_chosen_seed() -> None:
    limits = r.Limits()
    ok = r.RaceOptions.from_request(CreateRace(req=1, variant="spider1", rated=True), limits)
    assert ok.rated
    try:
        r.RaceOptions.from_request(
            CreateRace(req=1, variant="spider1", rated=True, seed="s"), limits
        )
    except Exception as e:
        assert "rated" in str(e)
    else:
        raise AssertionError("a rated race with a chosen seed was accepted")


# -- writing a finished race, once --------------------------------------------------------


async def _finished(
    store, players: list[str], *, rated: bool = True, times=None, finish: bool = True
) -> r.Race:
    """A race of ``players`` (ranked in that order by their win times) committed as
    finished, through the race's own decisions (without ``finish``: started, and long due
    to finish)."""
    options = r.RaceOptions.from_request(
        CreateRace(req=1, variant="spider1", rated=rated, countdown=0), r.Limits()
    )
    change = r.create_race(
        code=r.new_code(), options=options, creator=players[0], name=players[0], now=100.0
    )
    race = replace(change.race, version=(await store.commits.commit(change, new=True)).version)
    for pid in players[1:]:
        change = r.join(race, pid, pid, 100.0)
        race = replace(change.race, version=(await store.commits.commit(change)).version)
    for pid in players:
        change = r.set_ready(race, pid, True, 101.0)
        race = replace(change.race, version=(await store.commits.commit(change)).version)
    change = r.start(race, 101.0)
    race = replace(change.race, version=(await store.commits.commit(change)).version)
    if not finish:  # each made a move (a race nobody played is an abort, unrated)
        played = [replace(g, moves=3) for g in change.games]
        entries = [r.entry_of(race.players[g.player], g) for g in played]
        moved = replace(race, players={e.player: e for e in entries})
        step = r.RaceChange(base=race.version, race=moved, meta=False, players=entries,
                            games=played)  # fmt: skip
        return replace(moved, version=(await store.commits.commit(step)).version)
    times = times or [10.0 + i for i in range(len(players))]
    games = {  # each made moves: a race nobody played is an abort, unrated
        g.player: replace(g, status="won", time=t, moves=3)
        for g, t in zip(change.games, times, strict=True)
    }
    race = replace(race, players={p: r.entry_of(e, games[p]) for p, e in race.players.items()})
    change = r.finish(race, games, {}, 150.0)
    return replace(change.race, version=(await store.commits.commit(change)).version)


async def _one_move(client) -> None:
    """The client's player makes a move (a deal counts) once its game runs."""
    await client.wait_until(lambda c: c.view is not None, timeout=10)
    await client.move(client.legal_moves()[0])


async def _stores(redis_server, n: int):
    from spider_server.settings import Settings
    from spider_server.store import Store
    from spider_server.store.redisconn import connect

    out = []
    for i in range(n):
        redis = connect(redis_server.url)
        out.append(Store.connect(redis, Settings().replace(node=f"n{i}")))
    return out


async def _close(stores) -> None:
    for s in stores:
        await s.aclose()
        await s.redis.aclose()


async def test_two_nodes_applying_one_race_write_it_once(redis_server) -> None:
    a, b = await _stores(redis_server, 2)
    try:
        race = await _finished(a, ["p1", "p2", "p3"])
        await a.ratings.mark_pending(race.code, 150.0)
        got = await asyncio.gather(*(s.ratings.apply_results(race) for s in (a, b, a, b)))
        assert all(g == got[0] for g in got) and len(got[0]) == 3
        assert int(await a.redis.get(keys.RATED_RACES)) == 1
        records = await a.ratings.load_records(["p1", "p2", "p3"])
        assert {rec.version for rec in records.values()} == {1}
        assert all(rec.variants["spider1"].played == 1 for rec in records.values())
        assert [len(await a.ratings.history(p)) for p in ("p1", "p2", "p3")] == [1, 1, 1]
        assert await a.ratings.pending_races(1e12) == []
        # and once more, later, changes nothing
        assert await b.ratings.apply_results(race) == got[0]
        assert int(await a.redis.get(keys.RATED_RACES)) == 1
    finally:
        await _close([a, b])


async def test_one_players_two_races_at_once_both_count(redis_server) -> None:
    stores = await _stores(redis_server, 2)
    try:
        one = await _finished(stores[0], ["me", "x1"])
        two = await _finished(stores[0], ["me", "x2"])
        for _ in range(3):  # both at the same moment, from two nodes, a few times
            await asyncio.gather(
                stores[0].ratings.apply_results(one), stores[1].ratings.apply_results(two)
            )
        rec = (await stores[0].ratings.load_records(["me"]))["me"]
        vr = rec.variants["spider1"]
        assert rec.version == 2 and vr.played == 2 and vr.rated == 2 and vr.won == 2
        # the same as applying them one after the other, in either order
        model = PlackettLuce()
        first = model.rate([[model.rating()], [model.rating()]], ranks=[1, 2])[0][0]
        second = model.rate([[first], [model.rating()]], ranks=[1, 2])[0][0]
        assert (vr.mu, vr.sigma) == (second.mu, second.sigma)
        assert int(await stores[0].redis.get(keys.RATED_RACES)) == 2
    finally:
        await _close(stores)


async def test_history_is_capped(redis_server) -> None:
    (store,) = await _stores(redis_server, 1)
    try:
        for _ in range(keys.HISTORY_MAX + 3):
            race = await _finished(store, ["solo", "rival"], rated=False)
            await store.ratings.apply_results(race)
        lines = await store.ratings.history("solo")
        assert len(lines) == keys.HISTORY_MAX
        assert await store.redis.llen(keys.history("solo")) == keys.HISTORY_MAX
        rec = (await store.ratings.load_records(["solo"]))["solo"]
        assert rec.variants["spider1"].played == keys.HISTORY_MAX + 3
        assert 0 < await store.redis.ttl(keys.history("solo")) <= keys.PROFILE_TTL
    finally:
        await _close([store])


async def test_the_ladder_ranks_by_rating_with_the_askers_place(redis_server) -> None:
    (store,) = await _stores(redis_server, 1)
    try:
        await store.ratings.apply_results(await _finished(store, ["top", "mid", "low"]))
        # provisional ratings are on no ladder: nobody is after one race
        assert (await store.ratings.ladder("humans", "spider1", "low")) == ([], None)
        for pid, rec in (await store.ratings.load_records(["top", "mid", "low"])).items():
            settled = replace(rec.variants["spider1"], sigma=2.0)  # as after many races
            rec = replace(rec, variants={"spider1": settled})
            await store.redis.hset(keys.record(pid), mapping={"d": msgpack.packb(rec.fields())})
        await store.ratings.apply_results(await _finished(store, ["top", "mid", "low"]))
        rows, mine = await store.ratings.ladder("humans", "spider1", "low", limit=2)
        assert [row[1] for row in rows] == ["top", "mid"]
        assert rows[0][3] > rows[1][3]
        assert mine is not None and mine[0] == 3 and mine[1] == "low"
        assert (await store.ratings.ladder("bots", "spider1", "low"))[0] == []
        assert await store.ratings.rating_of("top", "spider1") == rows[0][3]
        assert await store.ratings.rating_of("nobody", "spider1") == DISPLAY_BASE
    finally:
        await _close([store])


async def test_a_race_left_pending_by_a_dead_node_is_written_by_another(
    redis_server, server_node
) -> None:
    """A node that committed the finish and died before writing the results (all it did
    was mark the race pending, then commit the finish) leaves the race pending: every
    node's background step writes it, once."""
    (store,) = await _stores(redis_server, 1)
    try:
        race = await _finished(store, ["p1", "p2"])
        await store.ratings.mark_pending(race.code, 100.0)  # what the finishing node did first
        assert await store.ratings.applied_changes(race) is None
        await server_node(redis_server.url)
        await server_node(redis_server.url)
        for _ in range(100):
            if await store.ratings.applied_changes(race) is not None:
                break
            await asyncio.sleep(0.1)
        changes = await store.ratings.applied_changes(race)
        assert changes is not None and len(changes) == 2
        await asyncio.sleep(3)  # both nodes' steps ran again: still once
        assert int(await store.redis.get(keys.RATED_RACES)) == 1
        assert await store.ratings.pending_races(1e12) == []
        records = await store.ratings.load_records(["p1", "p2"])
        assert {rec.version for rec in records.values()} == {1}
    finally:
        await _close([store])


async def test_a_race_not_finished_stays_pending_and_a_gone_one_is_dropped(redis_server) -> None:
    (store,) = await _stores(redis_server, 1)
    try:
        await store.ratings.mark_pending("GONE1", 1.0)
        assert await store.ratings.apply_pending(10.0) == 1
        assert await store.ratings.pending_races(1e12) == []
    finally:
        await _close([store])


async def test_two_nodes_finishing_one_rated_race_write_it_once(redis_server, server_node) -> None:
    """Both nodes watch the race and try its finish at its time limit (and once more, at
    once, by hand): one finish, one write of its results."""
    from spider_client import Client

    one = await server_node(redis_server.url)
    two = await server_node(redis_server.url)
    (store,) = await _stores(redis_server, 1)
    try:
        async with (
            await Client.connect(one.url, name="a") as a,
            await Client.connect(two.url, name="b") as b,
        ):
            code = await a.create_race(variant="spider1", rated=True, countdown=0, time_limit=3)
            await b.join(code)
            await asyncio.gather(a.ready(), b.ready())
            await a.wait_until(
                lambda c: c.race is not None and c.race.state == "running", timeout=10
            )
            running = time.monotonic()
            await asyncio.gather(_one_move(a), _one_move(b))  # a race nobody played: unrated
            await asyncio.sleep(max(0.0, 2.9 - (time.monotonic() - running)))
            await asyncio.gather(one.node.advance(code), two.node.advance(code))
            await a.wait_until(lambda c: c.finished, timeout=10)
            reply = await b.rating_changes(code)
            assert reply.applied and len(reply.changes) == 2
            players = [a.player, b.player]
        await asyncio.sleep(0.5)
        assert int(await store.redis.get(keys.RATED_RACES)) == 1
        records = await store.ratings.load_records(players)
        assert {rec.version for rec in records.values()} == {1}
        assert [len(await store.ratings.history(p)) for p in players] == [1, 1]
        assert await store.ratings.pending_races(1e12) == []
    finally:
        await _close([store])


async def test_a_pending_race_whose_finish_was_lost_is_finished_then_written(
    redis_server, server_node
) -> None:
    """The node marked the race pending and died before its finish was committed (nobody
    else watches the race to finish it): another node's background step finishes the race
    (it is due) and writes its results."""
    (store,) = await _stores(redis_server, 1)
    try:
        race = await _finished(store, ["p1", "p2"], finish=False)  # started, long due
        assert race.state is r.RaceState.RUNNING
        await store.ratings.mark_pending(race.code, 1.0)
        await server_node(redis_server.url)
        for _ in range(100):
            done = await store.races.load_race(race.code)
            if done is not None and done.final and await store.ratings.applied_changes(done):
                break
            await asyncio.sleep(0.1)
        assert done is not None and done.final is not None
        changes = await store.ratings.applied_changes(done)
        assert changes is not None and len(changes) == 2
        assert int(await store.redis.get(keys.RATED_RACES)) == 1
    finally:
        await _close([store])


@pytest.mark.parametrize("delay", [1.95, 2.0, 2.03, 2.08])
async def test_a_node_sigkilled_around_a_rated_finish_leaves_it_written_once(
    redis_server, server_node, server_process, pg_database, delay: float
) -> None:
    """The node both players (two accounts: rated races are theirs) are on is killed with
    SIGKILL at about the moment its tick finishes the race (before the finish, between the
    finish and the write, or after): whichever it was, once the players are back through
    another node the race is finished and its results written exactly once."""
    from spider_client import Client

    proc = await server_process(redis_server.url, SPIDER_RACE_DATABASE_URL=pg_database.url)
    other = await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)
    (store,) = await _stores(redis_server, 1)
    urls = [proc.url, other.url]
    delay += 1.0  # past a time limit of 3 s (a second to make a move each)
    tokens = [await account_token(other, name, address=f"198.51.100.{i}") for i, name in
              enumerate(["Ada", "Bea"], 1)]  # fmt: skip
    try:
        async with (
            await Client.connect(urls, token=tokens[0], reconnect_timeout=30) as a,
            await Client.connect(urls, token=tokens[1], reconnect_timeout=30) as b,
        ):
            code = await a.create_race(variant="spider1", rated=True, countdown=0, time_limit=3)
            await b.join(code)
            await asyncio.gather(a.ready(), b.ready())
            await a.wait_until(
                lambda c: c.race is not None and c.race.state == "running", timeout=10
            )
            running = time.monotonic()
            await asyncio.gather(_one_move(a), _one_move(b))  # a race nobody played: unrated
            await asyncio.sleep(max(0.0, delay - (time.monotonic() - running)))
            proc.kill()
            for c in (a, b):
                await c.wait_until(lambda c: c.finished, timeout=30)
            reply = await a.rating_changes(code, timeout=20)
            assert reply.applied and len(reply.changes) == 2
            players = [a.player, b.player]
        assert int(await store.redis.get(keys.RATED_RACES)) == 1
        records = await store.ratings.load_records(players)
        assert {rec.version for rec in records.values()} == {1}
        assert [len(await store.ratings.history(p)) for p in players] == [1, 1]
    finally:
        await _close([store])
