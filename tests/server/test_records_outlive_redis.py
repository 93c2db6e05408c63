"""Records outlive Redis: a rated race played on a node with an archive, then Redis's data
folder deleted; a node started again on the empty Redis and the same database shows the
player's profile with the same rating, the same ladder, and the race's record with its
moves, the race in the profile's history, and a ghost of the race raced."""

from __future__ import annotations

import asyncio
import json
import shutil
import urllib.request
from typing import Any

import msgpack

from spider_client import protocol as p
from spider_server.race.ratings import Record, VariantRecord
from spider_server.runners.archiver import RETRY
from spider_server.store import keys
from tests.server.account_helpers import ACCOUNT_SETTINGS, account_token
from tests.server.clocks import TestClock
from tests.server.server_helpers import Client, Player

OPTIONS: dict[str, Any] = {
    "variant": "spider1", "rated": True, "public": True, "time_limit": 600, "countdown": 3,
}  # fmt: skip


async def _archived(node: Any, clock: TestClock, code: str) -> None:
    """Archive steps (the clock moved past each retry) until race ``code`` is archived."""
    archive = node.archiver.archive
    for _ in range(50):
        await node.archiver.step()
        if await archive.race(code) is not None:
            return
        clock.move(RETRY + 1)
        await asyncio.sleep(0.05)
    raise AssertionError(f"race {code} was not archived")


async def _seen(url: str, player: str) -> tuple[Any, Any]:
    """The profile of ``player`` (a guest's: by its id) and the spider1 humans' ladder,
    as a client sees them."""
    c = await Client.connect(url, name="onlooker")
    try:
        profile = await c.request(p.Profile(req=0, player=player), ("profile_reply", "error"))
        ladder = await c.request(
            p.RatingLeaderboard(req=0, variant="spider1", pool="humans"),
            ("rating_leaderboard_reply", "error"),
        )
    finally:
        await c.close()
    assert profile.type == "profile_reply" and ladder.type == "rating_leaderboard_reply"
    return profile, ladder


async def _keys(url: str) -> int:
    """Keys in the Redis at ``url``."""
    from redis.asyncio import Redis

    client = Redis.from_url(url)
    try:
        return int(await client.dbsize())
    finally:
        await client.aclose()


def _get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as reply:
        return json.loads(reply.read())


def _ladder(reply: Any) -> list[tuple[int, str, str, int]]:
    return [(e.rank, e.player, e.name, e.rating) for e in reply.entries]


async def test_records_outlive_redis(redis_server, pg_database, server_node) -> None:
    clock = TestClock()
    db = {"database_url": pg_database.url, "clock": clock, **ACCOUNT_SETTINGS}
    one = await server_node(redis_server.url, **db)
    # rated races are between accounts
    a = await Client.connect(one.url, name=None, token=await account_token(one, "Outlives"))
    b = await Client.connect(one.url, name=None, token=await account_token(one, "Forgotten"))
    for c in (a, b):  # ratings settled by many races before (provisional ones are on no ladder)
        settled = Record(player=c.player, version=1, name=c.welcome.name,
                         variants={"spider1": VariantRecord(mu=25.0, sigma=2.0, rated=30)})  # fmt: skip
        await one.node.redis.hset(
            keys.record(c.player), mapping={"v": 1, "d": msgpack.packb(settled.fields())}
        )
    code = (await a.create(**OPTIONS)).race.code
    await b.join(code)
    await a.ready(code)
    await b.ready(code)
    clock.move(3)  # the countdown of a rated race
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=3)
    pb = Player(b, code, (await b.expect("ack", lambda m: m.seq == 0)).view, seed=4)
    b_ack = await pb.step()  # both played (a race nobody played is an abort)
    await pb.resign()
    # both forfeit, so they rank by progress: a moves until theirs is past b's (sets, then
    # cards turned up), whatever the deal (a rated race's deal is the pool's, not chosen)
    b_progress = (b_ack.runs, b_ack.turned_up)
    for _ in range(300):
        a_ack = await pa.step()
        if (a_ack.runs, a_ack.turned_up) > b_progress:
            break
    assert (a_ack.runs, a_ack.turned_up) > b_progress, "300 moves raised no progress"
    await pa.resign()
    await a.expect("finished")
    player = a.player
    await a.close()
    await b.close()
    await _archived(one.node, clock, code)
    before, ladder_before = await _seen(one.url, player)
    assert [line.code for line in before.races] == [code]
    rating = before.variants[0].rating
    assert before.variants[0].rated == 31 and rating > ladder_before.entries[-1].rating
    assert [e.player for e in ladder_before.entries][0] == player
    await one.close()

    # Redis's data folder deleted: a new, empty Redis on the same port
    redis_server.stop()
    shutil.rmtree(redis_server.data_dir)
    redis_server.restart()
    assert await _keys(redis_server.url) == 0
    two = await server_node(redis_server.url, **db)
    await asyncio.wait_for(two.node.rebuild.ready.wait(), 60)
    assert await two.node.redis.exists(keys.RATINGS_REBUILT)

    after, ladder_after = await _seen(two.url, player)
    assert after.player == player and after.name == "Outlives"
    assert after.variants[0].rating == rating and after.variants[0].rated == 31
    assert _ladder(ladder_after) == _ladder(ladder_before)
    assert [line.code for line in after.races] == [code]  # the history, from the archive

    # the race's record and its moves (what ``spider-race export CODE`` prints), from the
    # archive
    record = await asyncio.to_thread(_get_json, f"{two.http_url}/races/{code}.json")
    assert record["code"] == code
    mine = next(pl for pl in record["players"] if pl["player"] == player)
    assert len(mine["actions"]) == pa.seq and mine["actions"][-1] == "resign"  # moves, resign
    assert mine["actions"][:-1] == [ack.move for ack in pa.acks[:-1]]

    # a ghost of the race's winner can still be raced: the new race holds it, ready
    c = await Client.connect(two.url, name="Challenger")
    joined = await c.create(
        **{**OPTIONS, "rated": False}, ghosts=[{"race": code, "player": player}]
    )
    ghosts = [(i.name, i.ready) for i in joined.race.players if i.ghost]
    assert ghosts == [("Outlives", True)]
    await c.close()
