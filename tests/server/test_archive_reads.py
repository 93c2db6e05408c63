"""What players read comes from the archive once their races are archived, on a real node,
Valkey and PostgreSQL: a history longer than Redis keeps is paged through whole (every race
once, newest first, the races not archived yet from Redis at its head); a profile outlives
its Redis keys; a daily deal's leaderboard read from the archive is the one Redis had."""

from __future__ import annotations

import asyncio
from typing import Any

from spider_client import protocol as p
from spider_engine import Board
from spider_engine.solver import solve
from spider_server.runners.archiver import RETRY
from spider_server.store import archive_players, keys
from spider_server.store.ratings import fold
from tests.server.account_helpers import ACCOUNT_SETTINGS, account_token
from tests.server.clocks import TestClock
from tests.server.server_helpers import Client, Player

FAST: dict[str, Any] = {
    "rate": 1000.0,
    "burst": 1000,
    "player_creations": 1000,
    "address_creations": 1000,
    # the node's own archive steps: one at its start, then the test's (archive_all) alone
    "sweep_interval": 3600,
}
VARIANT = "spider1"


async def archive_all(node: Any, clock: TestClock) -> None:
    """Archive steps until nothing waits (the clock moved past each retry)."""
    archiver = node.node.archiver
    for _ in range(100):
        await archiver.step()
        if archiver.backlog == 0:
            return
        clock.move(RETRY + 1)
        await asyncio.sleep(0.02)
    raise AssertionError(f"{archiver.backlog} races still wait for the archive")


async def solo_race(client: Client, clock: TestClock) -> str:
    """A race of one, resigned at once; its code once it finished (the clock moved on a
    second after: each race finishes at a time of its own, the order it is archived in)."""
    code = (await client.create(variant=VARIANT, countdown=0)).race.code
    await client.ready(code)
    await client.expect("ack", lambda m: m.seq == 0 and m.code == code)
    await client.send(p.Resign(code=code, seq=1))
    await client.expect("finished", lambda m: m.race == code)
    assert (await client.request(p.Leave(req=0, code=code))).type == "done"
    clock.move(1)
    return code


async def profile(client: Client, before: str | None = None, **who: Any) -> Any:
    reply = await client.request(p.Profile(req=0, before=before, **who), ("profile_reply", "error"))
    assert reply.type == "profile_reply", reply
    return reply


async def test_a_history_of_60_races_pages_through_every_race_once(
    redis_server: Any, pg_database: Any, server_node: Any
) -> None:
    clock = TestClock()
    node = await server_node(
        redis_server.url, database_url=pg_database.url, archived_ttl=0, clock=clock, **FAST
    )
    c = await Client.connect(node.url, name="Marathon")
    played = [await solo_race(c, clock) for _ in range(52)]
    await archive_all(node, clock)
    played += [await solo_race(c, clock) for _ in range(5)]  # finished, not archived yet
    newest_first = played[::-1]

    first = await profile(c)
    assert first.found and first.more and first.next is not None
    # the 5 races Redis holds unarchived, then the archive's newest 50
    assert [line.code for line in first.races] == newest_first[:55]
    assert first.races[0].replay == f"/r/{played[-1]}"

    # races finished and archived between two pages: on neither later page twice
    played += [await solo_race(c, clock) for _ in range(3)]
    await archive_all(node, clock)
    second = await profile(c, before=first.next)
    assert [line.code for line in second.races] == newest_first[55:]
    assert not second.more and second.next is None
    assert len(played) == 60

    # the first page again: all 60, every race once, newest first
    again = await profile(c)
    rest = await profile(c, before=again.next)
    seen = [line.code for line in [*again.races, *rest.races]]
    assert seen == played[::-1] and len(set(seen)) == 60
    assert len(again.races) == keys.HISTORY_MAX and not rest.more

    # by another player, by id: the same pages
    other = await Client.connect(node.url, name="Onlooker")
    by_id = await profile(other, player=c.player)
    assert [line.code for line in by_id.races] == seen[:50]

    # a cursor that is not one: a clear error
    bad = await other.request(
        p.Profile(req=0, player=c.player, before="r-1"), ("profile_reply", "error")
    )
    assert bad.type == "error" and bad.error == "invalid" and "before" in bad.message
    await c.close()
    await other.close()


async def test_a_profile_outlives_its_redis_keys(
    redis_server: Any, pg_database: Any, server_node: Any
) -> None:
    clock = TestClock()
    node = await server_node(
        redis_server.url,
        database_url=pg_database.url,
        archived_ttl=0,
        clock=clock,
        **FAST,
        **ACCOUNT_SETTINGS,
    )
    # rated races are between accounts
    a = await Client.connect(node.url, name=None, token=await account_token(node, "Lasting Lou"))
    b = await Client.connect(node.url, name=None, token=await account_token(node, "Brief Bea"))
    code = (
        await a.create(variant=VARIANT, rated=True, public=True, countdown=3, time_limit=600)
    ).race.code
    await b.join(code)
    for c in (a, b):
        await c.ready(code)
    clock.move(3)  # the countdown of a rated race
    players = [Player(c, code, (await c.expect("ack", lambda m: m.seq == 0)).view, seed=i)
               for i, c in enumerate((a, b))]  # fmt: skip
    for pl in players:
        await pl.step()  # both played (a race nobody played is an abort, unrated)
    await players[1].resign()
    await players[0].resign()
    for c in (a, b):
        await c.expect("finished", lambda m: m.race == code)
    await archive_all(node, clock)  # once the results are written: then Redis's profile
    before = await profile(b, player=a.player)
    assert [line.code for line in before.races] == [code] and before.races[0].rated

    # the ladder and the rating history, as the archive answers them: Redis's
    archive = node.node.archiver.archive
    for pid in (a.player, b.player):
        assert await archive_players.ladder(
            archive, "humans", VARIANT, pid
        ) == await node.node.store.ratings.ladder("humans", VARIANT, pid)
    steps = await archive_players.rating_history(archive, a.player, variant=VARIANT)
    assert [(s.code, s.pool, s.before, s.after) for s in steps] == [
        (code, "humans", before.races[0].before, before.races[0].after)
    ]
    assert await archive_players.rating_history(archive, a.player, variant="spider4") == []
    assert await archive_players.rating_history(archive, a.player, before=steps[0].race_id) == []

    redis = node.node.store.redis
    assert await node.node.store.races.load_race(code) is None  # dropped on archiving
    for pid in (a.player, b.player):
        await redis.delete(keys.record(pid), keys.history(pid))
    await redis.hdel(keys.NAMES, fold("Lasting Lou"))
    assert not await redis.exists(keys.record(a.player), keys.history(a.player))

    # found by its player, and by its account's name (any case)
    for shown in (await profile(b, player=a.player), await profile(b, name="lasting lou")):
        assert shown.found and shown.player == a.player and shown.name == "Lasting Lou"
        assert [(line.code, line.rank, line.of, line.rated) for line in shown.races] == [
            (code, 1, 2, True)
        ]
        assert shown.races[0].after == before.races[0].after
        assert [(v.variant, v.played, v.rating) for v in shown.variants] == [
            (v.variant, v.played, v.rating) for v in before.variants
        ]
        assert not shown.more
    unknown = await profile(b, name="Nobody Here")
    assert not unknown.found
    for c in (a, b):
        await c.close()


async def play_daily(client: Client, clock: TestClock, redis: Any, *, took: float) -> str:
    """Race the day's deal to a win along the solver's line in ``took`` seconds."""
    reply = await client.request(p.DailyRace(req=0, variant=VARIANT))
    assert reply.type == "joined", reply
    code = reply.race.code
    if reply.race.preparing:
        await client.expect("prepared", timeout=30)
    seed = (await redis.get(keys.daily(VARIANT, reply.race.daily))).decode()
    await client.ready(code)
    clock.move(reply.race.countdown)  # the countdown over: the race starts
    await client.expect("ack", lambda m: m.seq == 0 and m.code == code)
    line = solve(Board.deal(VARIANT, seed), budget=200_000).line
    for seq, move in enumerate(line, start=1):
        if seq == len(line):
            clock.move(took)
        assert (await client.move(code, seq, move.text())).type == "ack"
    await client.expect("finished", lambda m: m.race == code)
    return code


async def test_a_daily_leaderboard_read_from_the_archive_is_redis_s(
    redis_server: Any, pg_database: Any, server_node: Any, daily_seeds: Any
) -> None:
    clock = TestClock()
    node = await server_node(
        redis_server.url,
        database_url=pg_database.url,
        archived_ttl=0,
        clock=clock,
        pool_size=0,
        **FAST,
        **ACCOUNT_SETTINGS,
    )
    redis = node.node.store.redis
    players = []
    for i, (name, bot, took) in enumerate([
        ("Ann", False, 30.0),
        ("Bot Bo", True, 12.5),
        ("Cy", False, 30.0),  # as fast as Ann, in as many moves: by id, sharing a rank
        ("Di", False, 7.25),
    ]):  # fmt: skip
        token = await account_token(node, name, address=f"198.51.100.{i + 1}", bot=bot)
        c = await Client.connect(node.url, hello=False, label=name)
        await c.send(p.Hello(token=token, together=True, bot=bot))
        c.welcome = await c.expect("welcome")
        players.append(c)
        await play_daily(c, clock, redis, took=took)
    # a guest races the day's deal too, fastest of all: on no leaderboard
    guest = await Client.connect(node.url, name="Gus")
    await play_daily(guest, clock, redis, took=5.0)
    loser = await Client.connect(node.url, name="Quitter")
    reply = await loser.request(p.DailyRace(req=0, variant=VARIANT))
    if reply.race.preparing:
        await loser.expect("prepared", timeout=30)
    await loser.ready(reply.race.code)
    clock.move(reply.race.countdown)
    await loser.expect("ack", lambda m: m.seq == 0)
    await loser.send(p.Resign(code=reply.race.code, seq=1))
    await loser.expect("finished")
    day = reply.race.daily

    async def board() -> list[tuple[Any, ...]]:
        got = await loser.request(
            p.Leaderboard(req=0, variant=VARIANT, day=day), ("leaderboard_reply", "error")
        )
        assert got.type == "leaderboard_reply", got
        return [(e.rank, e.player, e.name, e.time, e.moves, e.bot, e.race) for e in got.entries]

    from_redis = await board()
    tied = sorted(players[i].player for i in (0, 2))
    assert [row[1] for row in from_redis] == [players[3].player, players[1].player, *tied]
    assert [row[0] for row in from_redis] == [1, 2, 3, 3]
    assert [row[3] for row in from_redis] == [7.25, 12.5, 30.0, 30.0]
    assert from_redis[1][5] is True and loser.player not in {row[1] for row in from_redis}
    assert guest.player not in {row[1] for row in from_redis}

    await archive_all(node, clock)
    archive = node.node.archiver.archive
    rows = await archive_players.daily_leaderboard(archive, VARIANT, day)
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        (player, name, time, moves, bot)
        for player, name, time, moves, bot in await node.node.store.seeds.leaderboard(VARIANT, day)
    ]
    # Redis's keys of the day gone: the archive answers alone, the same
    await redis.delete(
        keys.leaderboard(VARIANT, day),
        keys.leaderboard(VARIANT, day, "names"),
        keys.leaderboard(VARIANT, day, "bots"),
        keys.daily(VARIANT, day, "races"),
    )
    assert await node.node.store.seeds.leaderboard(VARIANT, day) == []
    assert await board() == from_redis
    for c in [*players, loser, guest]:
        await c.close()
