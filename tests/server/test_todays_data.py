"""Today's data archived once: a node started with an archive against a Redis holding
finished races, records and histories from before the archive queues every finished race
for the archive, writes every player's record with its Redis version, and keeps the history
lines whose race is gone from Redis; doing it again changes nothing. The players from before
accounts are guests: their ratings are kept, frozen, and off the ladders until one signs up
from its token (the account takes it over, back on the ladder). And the rebuild keeps a
Redis record newer than the archived one."""

from __future__ import annotations

import asyncio
from dataclasses import asdict, replace
from typing import Any

import msgpack

from spider_server.race.ratings import Line, Record
from spider_server.runners.archiver import RETRY
from spider_server.store import keys
from tests.server.account_helpers import ACCOUNT_SETTINGS, basic, call
from tests.server.clocks import TestClock
from tests.server.server_helpers import Client, Player


async def _finished_race(url: str) -> tuple[str, list[str], list[str]]:
    """A rated race of two players played to its finish on ``url`` (a node without
    accounts): its code, the players, their tokens."""
    a = await Client.connect(url, name="Early")
    b = await Client.connect(url, name="Earlier")
    code = (await a.create(variant="spider1", countdown=0, rated=True)).race.code
    await b.join(code)
    await a.ready(code)
    await b.ready(code)
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=4)
    pb = Player(b, code, (await b.expect("ack", lambda m: m.seq == 0)).view, seed=5)
    await pa.step()
    await pb.step()  # both played: rated (a race nobody played is an abort)
    await pb.resign()
    await pa.resign()
    await a.expect("finished")
    await a.close()
    await b.close()
    return code, [a.player, b.player], [a.token, b.token]


async def _members(redis: Any, key: str) -> Any:
    for member in await redis.zrange(key, 0, -1):
        yield member.decode() if isinstance(member, bytes) else member


async def _rows(archive: Any, query: str, *args: Any) -> list[Any]:
    async with archive.connection() as conn:
        return list(await conn.fetch(query, *args))


async def test_todays_data_is_archived_once(redis_server, pg_database, server_node) -> None:
    clock = TestClock()
    before = await server_node(redis_server.url, clock=clock)  # no archive yet
    code, players, tokens = await _finished_race(before.url)
    store = before.node.store
    for _ in range(100):  # the race's results written into the records
        if len(await store.ratings.load_records(players)) == 2:
            break
        await asyncio.sleep(0.05)
    records = await store.ratings.load_records(players)
    assert {r.version for r in records.values()} == {1}
    for rec in records.values():  # settled ratings, as after many races (on the ladder)
        settled = replace(rec, variants={"spider1": replace(rec.variants["spider1"], sigma=2.0)})
        await store.redis.hset(
            keys.record(rec.player), mapping={"d": msgpack.packb(settled.fields())}
        )
        records[rec.player] = settled
        rating = settled.variants["spider1"].rating  # on the ladder, as before accounts
        await store.redis.zadd(keys.ladder("humans", "spider1"), {rec.player: rating})
    # a history line whose race is gone from Redis (a race lives 7 days, a history 50 lines)
    gone = Line(
        code="GONE1", variant="spider1", at=clock() - 86400 * 9, rank=1, of=2, status="won",
        time=61.0, rated=False,
    )  # fmt: skip
    await store.redis.rpush(keys.history(players[0]), msgpack.packb(asdict(gone)))
    await before.close()

    ladder = keys.ladder("humans", "spider1")
    assert {p async for p in _members(store.redis, ladder)} >= set(players)  # rated, ranked
    node = await server_node(
        redis_server.url, database_url=pg_database.url, clock=clock, **ACCOUNT_SETTINGS
    )
    await asyncio.wait_for(node.node.rebuild.ready.wait(), 60)
    # accounts came: the players from before are guests, off the ladder, records kept
    assert await node.node.redis.exists(keys.LADDERS_ACCOUNTS)
    assert await node.node.redis.zcard(ladder) == 0
    kept_records = await node.node.store.ratings.load_records(players)
    assert {r.variants["spider1"].rated for r in kept_records.values()} == {1}
    archive = node.node.archiver.archive
    assert await node.node.redis.exists(keys.ARCHIVE_IMPORTED)
    for _ in range(50):  # the finished race queued, archived by the archive's steps
        await node.node.archiver.step()
        if await archive.race(code) is not None:
            break
        clock.move(RETRY + 1)
        await asyncio.sleep(0.05)
    assert (await archive.race(code)) is not None

    def seen() -> Any:
        return asyncio.gather(
            _rows(archive, "SELECT player, version FROM player_records ORDER BY player"),
            _rows(archive, "SELECT player, code, at FROM history_lines"),
            _rows(archive, "SELECT code FROM races"),
        )

    kept, lines, races = await seen()
    assert sorted((r["player"], r["version"]) for r in kept) == sorted((p, 1) for p in players)
    assert [(r["player"], r["code"], r["at"]) for r in lines] == [(players[0], "GONE1", gone.at)]
    assert [r["code"] for r in races] == [code]

    # again (a Redis that lost its marker): nothing changes in the archive
    await node.node.redis.delete(keys.ARCHIVE_IMPORTED)
    assert await node.node.rebuild.step()
    for _ in range(3):
        await node.node.archiver.step()
    assert await seen() == [kept, lines, races]

    # a rebuild keeps a Redis record newer than the archived one
    rec = records[players[0]]
    newer = Record(player=rec.player, name="Renamed", bot=rec.bot, version=5)
    await node.node.redis.hset(
        keys.record(rec.player), mapping={"v": 5, "d": msgpack.packb(newer.fields())}
    )
    await node.node.redis.delete(keys.RATINGS_REBUILT)
    assert await node.node.rebuild.step()
    now = (await node.node.store.ratings.load_records([rec.player]))[rec.player]
    assert (now.version, now.name) == (5, "Renamed")
    # the second player signs up from its guest token: back on the ladder, as it was
    answer = await call(
        node, "POST", "/account/signup", {**basic("Earlier", "a long pass phrase"),
        "X-Guest-Token": tokens[1]},
    )  # fmt: skip
    assert answer.status == 201, answer
    frozen = kept_records[players[1]].variants["spider1"].rating
    assert await node.node.redis.zscore(ladder, players[1]) == float(frozen)
    assert await node.node.redis.zscore(ladder, players[0]) is None  # still a guest
    # a rebuild puts back the account's missing record with its ladder place (the
    # guest's record is put back too, on no ladder)
    await node.node.redis.delete(keys.record(players[1]), ladder)
    await node.node.redis.delete(keys.RATINGS_REBUILT)
    assert await node.node.rebuild.step()
    back = (await node.node.store.ratings.load_records([players[1]]))[players[1]]
    assert back.version == 1 and back.variants["spider1"].rated == 1
    assert await node.node.redis.zscore(ladder, players[1]) == float(frozen)
    await node.node.redis.delete(keys.record(players[0]), keys.RATINGS_REBUILT)
    assert await node.node.rebuild.step()
    assert [p async for p in _members(node.node.redis, ladder)] == [players[1]]
