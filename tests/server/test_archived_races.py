"""A finished race read from the archive once Redis dropped it (``archived_ttl=0``: the
archive step drops it at once): joining or watching it gives the frame it gave before,
its players' runs are raced as ghosts, a par found after it is kept on its row and shown,
a daily race keeps its seed and moves hidden until its day is over, and a code that a new
race took in Redis shows the new race."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack

from spider_client import protocol as p
from spider_engine import Board
from spider_engine.solver import solve
from spider_server import race as rules
from spider_server.runners.archiver import RETRY
from spider_server.store import keys
from spider_server.store.archive_races import ArchivedRaces
from tests.leakscan import LeakScanner
from tests.server.clocks import TestClock
from tests.server.server_helpers import Client, Player

VARIANT = "spider1"
OPTIONS: dict[str, Any] = {"variant": VARIANT, "countdown": 0, "time_limit": 600}
FAST = {"rate": 1000.0, "burst": 1000}
PAR_BUDGET = 20_000
WAIT = 90.0
"""Seconds a condition is waited for at most (a bound for a busy machine)."""


async def archived(node: Any, code: str, clock: TestClock | None = None) -> None:
    """Run the node's archive step until race ``code`` is archived and gone from Redis
    (its results written first: a step before that leaves it for later)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while await node.node.store.races.load_race(code) is not None:
        assert loop.time() < deadline, f"race {code} was not archived"
        await node.node.archiver.step()
        if clock is not None:
            clock.move(RETRY)
        await asyncio.sleep(0.05)


def joined_frame(client: Client, req: int) -> dict[str, Any]:
    """The ``joined`` answering ``req``, as the bytes sent decode (every field)."""
    for frame in reversed(client.frames):
        data = msgpack.unpackb(frame, raw=False)
        if isinstance(data, dict) and data.get("type") == "joined" and data["req"] == req:
            return data
    raise AssertionError(f"no joined for request {req}")


async def join_frame(client: Client, code: str, role: str = "spectator") -> dict[str, Any]:
    reply = await client.join(code, role=role)
    assert reply.race.code == code
    frame = joined_frame(client, client._req)
    del frame["req"]  # the request's own number
    return frame


async def nobody_connected(node: Any, code: str) -> None:
    """Wait until no connection claims to watch race ``code`` (they closed)."""
    r = node.node.redis
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while await r.zcard(keys.online(code)) or await r.zcard(keys.spectators(code)):
        assert loop.time() < deadline
        await asyncio.sleep(0.05)


async def played(url: str, *, moves: int = 8) -> tuple[str, list[Client], p.Finished]:
    """A finished race of two players who made ``moves`` random moves each and resigned."""
    a = await Client.connect(url, name="alice")
    b = await Client.connect(url, name="bob")
    code = (await a.create(**OPTIONS)).race.code
    await b.join(code)
    players = []
    for c in (a, b):
        await c.ready(code)
    for i, c in enumerate((a, b)):
        ack = await c.expect("ack", lambda m: m.seq == 0)
        players.append(Player(c, code, ack.view, seed=i + 1))
    for _ in range(moves):
        for pl in players:
            await pl.step()
    for pl in players:
        await pl.resign()
    finished = await a.expect("finished")
    await b.expect("finished")
    return code, [a, b], finished


async def test_joining_an_archived_race_gives_the_frame_it_gave_before(
    redis_server: Any, pg_database: Any, server_node: Any
) -> None:
    clock = TestClock()
    node = await server_node(
        redis_server.url, database_url=pg_database.url, archived_ttl=0, clock=clock, **FAST
    )
    code, (a, b), finished = await played(node.url)
    # a player's own joined before (their view and seq), with both players still here
    player_before = await join_frame(a, code, role="player")
    await b.close()
    await a.close()
    s1 = await Client.connect(node.url, name="early")
    await nobody_connected(node, code)  # compare like with like: nobody else watches
    spectator_before = await join_frame(s1, code)
    await s1.close()
    await nobody_connected(node, code)

    await archived(node, code, clock)
    assert await node.node.redis.exists(keys.meta(code), keys.players(code)) == 0
    assert node.node.archiver.archived == 1

    s2 = await Client.connect(node.url, name="late")
    spectator_after = await join_frame(s2, code)
    assert spectator_after == spectator_before  # field by field, every byte of it
    race = spectator_after["race"]
    assert race["state"] == "finished" and race["seed"] == finished.seed
    assert race["salt"] == finished.salt and race["replays"] == finished.replays
    assert race["replay_times"] == finished.replay_times
    assert set(spectator_after["boards"]) == {a.player, b.player}

    # the player comes back: the same view and seq as from their game in Redis
    a2 = await Client.connect(node.url, name="alice", token=a.token)
    player_after = await join_frame(a2, code, role="player")
    assert player_after["view"] == player_before["view"] and player_after["view"]
    assert player_after["seq"] == player_before["seq"] == len(finished.replays[a.player])
    for frame in (player_before, player_after):  # who is connected differs: nothing else
        frame["race"]["spectators"] = 0
        for info in frame["race"]["players"]:
            info["connected"] = False
    assert player_after == player_before

    # a new player cannot join it, as before; its rules' answer is the same
    c = await Client.connect(node.url, name="carol")
    reply = await c.request(p.Join(req=0, code=code))
    assert reply.type == "error" and reply.error == "wrong_state", reply
    # the player's list still shows it, finished; a spectator's list too
    mine = await a2.request(p.MyRaces(req=0), kinds=("my_races_reply",))
    listed = {r.code: r for r in mine.races}
    assert listed[code].state == "finished" and listed[code].status == "resigned"
    assert not listed[code].counts
    theirs = await s2.request(p.MyRaces(req=0), kinds=("my_races_reply",))
    assert [(r.code, r.role, r.state) for r in theirs.races] == [(code, "spectator", "finished")]
    # a code nobody ever had is not found, as before
    reply = await c.request(p.Join(req=0, code="ZZZZZ", role="spectator"))
    assert reply.type == "error" and reply.error == "not_found"
    for client in (s2, a2, c):
        await client.close()


async def test_a_ghost_of_an_archived_races_player_replays_the_same_run(
    redis_server: Any, pg_database: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, database_url=pg_database.url, archived_ttl=0)
    a = await Client.connect(node.url, name="alice")
    code = (await a.create(**OPTIONS)).race.code
    await a.ready(code)
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=5)
    for _ in range(6):
        await pa.step()
        await asyncio.sleep(0.02)  # the run's times apart
    await pa.resign()
    recorded = await a.expect("finished")
    actions, times = recorded.replays[a.player], recorded.replay_times[a.player]
    await archived(node, code)

    b = await Client.connect(node.url, name="bob")
    joined = await b.create(**OPTIONS, ghosts=[{"race": code, "player": a.player}])
    assert [(i.player, i.name) for i in joined.race.players if i.ghost] == [("ghost1", "alice")]
    ghost_code = joined.race.code
    w = await Client.connect(node.url, name="watcher")
    await w.join(ghost_code, role="spectator")
    await b.ready(ghost_code)
    await b.expect("ack", lambda m: m.seq == 0)
    seen = []
    while not seen or seen[-1].status != "resigned":  # a spectator gets every event
        seen.append((await w.expect("progress", lambda m: m.player.player == "ghost1")).player)
    assert [i.moves for i in seen] == [*range(1, len(actions)), len(actions) - 1]
    # the ghost's game played the same actions, each at its recorded race time
    r = node.node.redis
    played_actions = [x.decode() for x in await r.lrange(keys.actions(ghost_code, "ghost1"), 0, -1)]
    played_times = [int(x) for x in await r.lrange(keys.times(ghost_code, "ghost1"), 0, -1)]
    assert played_actions == actions and played_times == times
    await b.send(p.Resign(code=ghost_code, seq=1))
    finished = await b.expect("finished")
    assert finished.replays["ghost1"] == actions and finished.replay_times["ghost1"] == times
    # the source's seed is the ghost race's deal
    assert finished.seed == recorded.seed
    for client in (a, b, w):
        await client.close()


async def test_a_par_found_after_archiving_is_kept_in_the_archive_and_shown(
    redis_server: Any, pg_database: Any, server_node: Any
) -> None:
    node = await server_node(
        redis_server.url,
        database_url=pg_database.url,
        archived_ttl=0,
        par_budget=PAR_BUDGET,
        pool_size=0,
        **FAST,
    )
    seed = "par-e2e-1"
    a = await Client.connect(node.url, name="ann")
    code = (await a.create(**OPTIONS, seed=seed)).race.code
    # another node holds the search's claim until the race is archived: the par comes
    # after (the claim then lapses, and this node searches)
    claim = keys.par_claim(code)
    await node.node.redis.set(claim, "elsewhere", px=1000)
    holding = asyncio.Event()

    async def hold() -> None:
        while not holding.is_set():
            await node.node.redis.pexpire(claim, 1000)
            await asyncio.sleep(0.2)

    holder = asyncio.create_task(hold())
    w = await Client.connect(node.url, name="eve")
    await w.join(code, role="spectator")
    await a.ready(code)
    await a.expect("ack", lambda m: m.seq == 0)
    line = solve(Board.deal(VARIANT, seed), budget=PAR_BUDGET).line
    for seq, move in enumerate(line, start=1):
        assert (await a.move(code, seq, move.text())).type == "ack"
    finished = await a.expect("finished")
    known = await w.expect("par", timeout=WAIT)  # the winner's line, at once, in Redis
    assert known.provisional
    await archived(node, code)
    assert await node.node.redis.exists(keys.meta(code)) == 0
    assert node.node.pars.computed == 0
    holding.set()
    await holder

    # the search, once the claim lapsed, lands its par on the archived row
    store = ArchivedRaces(node.node.archiver.archive)
    settled = await w.expect("par", timeout=WAIT)  # its watcher here hears it
    assert not settled.provisional and settled.version > known.version
    race = await store.race(code)
    assert race is not None and race.par is not None and not race.par.provisional
    assert (race.par.moves, race.par.line) == (settled.moves, settled.line)
    assert race.version == settled.version and race.final is not None
    assert await node.node.redis.exists(keys.meta(code)) == 0  # not back in Redis
    # shown to whoever joins it now
    late = await Client.connect(node.url, name="late")
    joined = await late.join(code, role="spectator")
    assert joined.race.par == p.ParInfo(moves=settled.moves, line=settled.line, first=settled.first)
    assert joined.race.version == settled.version and joined.race.seed == finished.seed
    assert node.node.pars.computed == 1
    for client in (a, w, late):
        await client.close()


async def test_an_archived_daily_race_hides_its_seed_and_moves_until_its_day_is_over(
    redis_server: Any, pg_database: Any, server_node: Any, daily_seeds: Any
) -> None:
    clock = TestClock()
    node = await server_node(
        redis_server.url, database_url=pg_database.url, archived_ttl=0, clock=clock, pool_size=0
    )
    a = await Client.connect(node.url, name="ann")
    reply = await a.request(p.DailyRace(req=0, variant=VARIANT))
    assert reply.type == "joined", reply
    code, day = reply.race.code, reply.race.daily
    if reply.race.preparing:
        await a.expect("prepared", timeout=WAIT)
    seed = (await node.node.redis.get(keys.daily(VARIANT, day))).decode()
    await a.ready(code)
    clock.move(reply.race.countdown + 1)  # the day's race counts down: over
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=2)
    for _ in range(4):
        await pa.step()
    await pa.resign()
    finished = await a.expect("finished")
    assert finished.seed is None and finished.replays is None
    await archived(node, code, clock)

    # in its day: nothing of the deal, to a spectator or to its player
    s = await Client.connect(node.url, name="sam")
    watched = await s.join(code, role="spectator")
    assert watched.race.state == "finished" and watched.race.results
    assert watched.race.seed is None and watched.race.salt is None
    assert watched.race.replays is None and watched.race.replay_times is None
    assert watched.boards is None
    back = await a.join(code)  # the player asks for the day's race again: this one
    again = await a.request(p.DailyRace(req=0, variant=VARIANT))
    assert again.type == "joined" and again.race.code == code
    assert back.race.seed is None and back.race.replays is None and back.boards is None
    assert back.view == pa.view and back.seq == pa.seq  # their own final view, as before
    scanner = LeakScanner(VARIANT, secrets=(seed,))
    assert scanner.feed_all(s.player, "spectator", s.frames) == []
    assert scanner.feed_all(a.player, "player", a.frames) == []
    # nor as a ghost for another race
    g = await Client.connect(node.url, name="gus")
    ghosts = [{"race": code, "player": a.player}]
    refused = await g.request(p.CreateRace(req=0, **OPTIONS, ghosts=ghosts))
    assert refused.type == "error" and "day is over" in refused.message

    clock.move(rules.day_end(day) - clock() + 1)  # the day is over: all of it, public
    late = await Client.connect(node.url, name="late")
    shown = await late.join(code, role="spectator")
    assert shown.race.seed == seed and list(shown.race.replays) == [a.player]
    assert len(shown.race.replays[a.player]) == pa.seq == 5
    assert shown.boards is not None and set(shown.boards) == {a.player}
    for client in (a, s, g, late):
        await client.close()


async def test_a_code_a_new_race_took_shows_the_new_race(
    redis_server: Any, pg_database: Any, server_node: Any, monkeypatch: Any
) -> None:
    clock = TestClock()
    node = await server_node(
        redis_server.url, database_url=pg_database.url, archived_ttl=0, clock=clock
    )
    code, players, finished = await played(node.url, moves=2)
    await archived(node, code, clock)
    s = await Client.connect(node.url, name="sam")
    old = await s.join(code, role="spectator")
    assert old.race.state == "finished" and old.race.seed == finished.seed

    from spider_server.fanout import changes

    monkeypatch.setattr(changes, "new_code", lambda: code)  # the next race draws that code
    d = await Client.connect(node.url, name="dora")
    new = await d.create(**OPTIONS)
    assert new.race.code == code and new.race.state == "open"
    t = await Client.connect(node.url, name="tom")
    shown = await t.join(code, role="spectator")
    assert shown.race.state == "open" and shown.race.creator == d.player
    assert [i.player for i in shown.race.players] == [d.player]
    assert shown.race.seed is None and shown.race.results is None
    assert await node.node.finished.race(code) is not None
    assert (await node.node.finished.race(code)).creator == d.player  # type: ignore[union-attr]
    # the archived one is still there, for its own reads (its row)
    store = ArchivedRaces(node.node.archiver.archive)
    kept = await store.race(code)
    assert kept is not None and kept.seed == finished.seed and kept.creator == players[0].player
    for client in (*players, s, d, t):
        await client.close()
