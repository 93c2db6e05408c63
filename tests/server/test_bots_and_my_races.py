"""Bots known as bots, races for humans only, a player's races and the limit on them, against
a real node and Redis: every list of players, result and leaderboard entry a client receives
marks a bot as a bot; a humans-only race refuses a bot with ``humans_only``; ``my_races``
lists the player's races with their states; only races waiting or running count towards the
limit, and the error names them."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import msgpack
import pytest
import redis.asyncio as aioredis

from spider_client import protocol as p
from spider_engine import Board
from spider_engine.solver import solve
from spider_server.store import keys
from spider_server.store.codec import entry_from, race_from
from tests.server.server_helpers import Client

VARIANT = "spider1"
FAST = {"rate": 1000.0, "burst": 1000}


async def connect(url: str, name: str, *, bot: bool) -> Client:
    """A connection whose hello says ``bot``."""
    client = await Client.connect(url, hello=False, label=name)
    await client.send(p.Hello(name=name, together=True, bot=bot))
    client.welcome = await client.expect("welcome")
    return client


def marks(frames: list[bytes]) -> list[tuple[str, str, bool]]:
    """(kind, player, bot) of every player line, result and leaderboard entry in ``frames``."""
    found: list[tuple[str, str, bool]] = []

    def race(info: dict[str, Any]) -> None:
        for player in info.get("players") or []:
            found.append(("player", player["player"], player["bot"]))
        for result in info.get("results") or []:
            found.append(("result", result["player"], result["bot"]))

    for frame in frames:
        data = msgpack.unpackb(frame, raw=False)
        for m in data if isinstance(data, list) else [data]:
            kind = m.get("type")
            if kind == "joined":
                race(m["race"])
            elif kind in ("player_joined", "progress"):
                found.append(("player", m["player"]["player"], m["player"]["bot"]))
            elif kind == "finished":
                race(m)
            elif kind == "leaderboard_reply":
                found += [("leaderboard", e["player"], e["bot"]) for e in m["entries"]]
    return found


async def play_daily(client: Client, r: Any) -> None:
    """Race the day's deal to a win along the solver's line."""
    reply = await client.request(p.DailyRace(req=0, variant=VARIANT))
    assert reply.type == "joined", reply
    code = reply.race.code
    if reply.race.preparing:
        await client.expect("prepared", timeout=20)
    seed = (await r.get(keys.daily(VARIANT, reply.race.daily))).decode()
    await client.ready(code)
    await client.expect("ack", lambda m: m.seq == 0 and m.code == code)
    for seq, move in enumerate(solve(Board.deal(VARIANT, seed), budget=200_000).line, start=1):
        assert (await client.move(code, seq, move.text())).type == "ack"
    await client.expect("finished", lambda m: m.race == code)


async def test_every_result_and_leaderboard_of_a_race_with_a_bot_marks_it(
    redis_server: Any, server_node: Any, daily_seeds: Any
) -> None:
    node = await server_node(redis_server.url, pool_size=0, **FAST)
    bot = await connect(node.url, "Robo", bot=True)
    human = await connect(node.url, "Alice", bot=False)
    watcher = await connect(node.url, "Eve", bot=False)
    code = (await human.create(variant=VARIANT, seed="marked", countdown=0)).race.code
    await bot.join(code)
    await watcher.join(code, role="spectator")
    for c in (human, bot):
        await c.ready(code)
    for c in (human, bot):
        await c.expect("ack", lambda m: m.seq == 0)
    for c in (bot, human):
        moves = [m for m in Board.deal(VARIANT, "marked").legal_moves.texts() if m != "+"]
        assert (await c.move(code, 1, moves[0])).type == "ack"
        await c.send(p.Resign(code=code, seq=2))
        await c.expect("ack", lambda m: m.seq == 2)
    for c in (human, bot, watcher):
        await c.expect("finished", lambda m: m.race == code)
    r = aioredis.from_url(redis_server.url)
    try:
        await play_daily(bot, r)
        await play_daily(human, r)
    finally:
        await r.aclose()
    for _ in range(50):  # the finish is recorded right after it is committed
        board = await watcher.request(p.Leaderboard(req=0, variant=VARIANT), ("leaderboard_reply",))
        if len(board.entries) == 2:
            break
        await asyncio.sleep(0.1)
    assert {e.player: e.bot for e in board.entries} == {bot.player: True, human.player: False}
    for c in (human, bot, watcher):
        found = marks(c.frames)
        kinds = {kind for kind, _, _ in found}
        assert {"player", "result"} <= kinds, c.label
        assert [f for f in found if f[2] != (f[1] == bot.player)] == [], c.label
    assert "leaderboard" in {kind for kind, _, _ in marks(watcher.frames)}
    for c in (human, bot, watcher):
        await c.close()


async def test_a_humans_only_race_refuses_a_bot_with_its_code(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url)
    human = await connect(node.url, "Alice", bot=False)
    bot = await connect(node.url, "Robo", bot=True)
    joined = await human.create(variant=VARIANT, humans_only=True)
    assert joined.race.humans_only is True
    code = joined.race.code
    refused = await bot.request(p.Join(req=0, code=code))
    assert refused.type == "error" and refused.error == "humans_only"
    assert "humans only" in refused.message
    made = await bot.request(p.CreateRace(req=0, variant=VARIANT, humans_only=True))
    assert made.type == "error" and made.error == "humans_only"
    assert (await bot.join(code, role="spectator")).race.players[0].bot is False
    other = await connect(node.url, "Bob", bot=False)
    assert len((await other.join(code)).race.players) == 2
    # a race without the option takes bots; the flag is a strict bool
    assert (await bot.create(variant=VARIANT)).race.players[0].bot is True
    strict = await Client.connect(node.url, hello=False)
    await strict.send_map({"type": "hello", "protocol": 1, "bot": 1})
    assert (await strict.expect("error")).error == "invalid"
    for c in (human, bot, other, strict):
        await c.close()


async def test_my_races_and_the_limit_count_only_races_waiting_or_running(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, max_races_per_player=2, **FAST)
    a = await Client.connect(node.url, name="busy")
    host = await Client.connect(node.url, name="host")
    first = (await a.create(variant=VARIANT)).race.code
    # a running race whose game the player resigned no longer counts
    second = (await a.create(variant=VARIANT, countdown=0)).race.code
    await host.join(second)
    for c in (a, host):
        await c.ready(second)
    for c in (a, host):
        await c.expect("ack", lambda m: m.seq == 0 and m.code == second)
    full = await a.request(p.CreateRace(req=0, variant=VARIANT))
    assert full.type == "error" and full.error == "too_many_races"
    assert sorted(full.races) == sorted([first, second])
    assert first in full.message and second in full.message
    await a.send(p.Resign(code=second, seq=1))
    await a.expect("ack", lambda m: m.seq == 1)
    third = (await a.create(variant=VARIANT)).race.code
    reply = await a.request(p.MyRaces(req=0), ("my_races_reply",))
    got = {r.code: (r.state, r.role, r.status, r.counts, r.players) for r in reply.races}
    assert got == {
        third: ("open", "player", "waiting", True, 1),
        second: ("running", "player", "resigned", False, 2),
        first: ("open", "player", "waiting", True, 1),
    }
    assert reply.limit == 2
    # leaving a race that has not started frees its place at once
    assert (await a.request(p.Leave(req=0, code=first))).type == "done"
    assert (await a.create(variant=VARIANT)).race.code
    await a.close()
    await host.close()


async def test_a_players_list_of_races_stays_bounded(
    redis_server: Any, server_node: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keys, "PLAYER_RACES_KEPT", 2)
    node = await server_node(redis_server.url, max_races_per_player=1, **FAST)
    a = await Client.connect(node.url, name="many")
    codes = []
    for _ in range(5):  # each race: alone, started, resigned at once (it finishes)
        code = (await a.create(variant=VARIANT, countdown=0)).race.code
        codes.append(code)
        await a.ready(code)
        await a.expect("ack", lambda m, code=code: m.seq == 0 and m.code == code)
        await a.send(p.Resign(code=code, seq=1))
        await a.expect("finished", lambda m, code=code: m.race == code)
    reply = await a.request(p.MyRaces(req=0), ("my_races_reply",))
    assert [(r.code, r.state) for r in reply.races] == [
        (codes[4], "finished"),
        (codes[3], "finished"),
    ]
    r = aioredis.from_url(redis_server.url)
    try:
        assert await r.zcard(keys.player_races(a.player)) <= 3
        assert await r.ttl(keys.player_races(a.player)) > 0
    finally:
        await r.aclose()
    await a.close()


def test_entries_and_races_stored_before_the_flags_load_without_them() -> None:
    old_entry = msgpack.packb({"player": "p1", "name": "Ann", "order": 0})
    assert entry_from(old_entry).bot is False
    meta = {
        b"code": b"K7QX2",
        b"variant": b"spider1",
        b"max_players": b"8",
        b"time_limit": b"1800",
        b"undo": b"1",
        b"live_boards": b"0",
        b"countdown": b"3",
        b"state": b"open",
        b"creator": b"p1",
        b"created_at": str(time.time()).encode(),
        b"seed": b"s",
        b"salt": b"t",
        b"commitment": b"c",
    }
    race = race_from(meta, {b"p1": old_entry})
    assert race.options.humans_only is False and race.players["p1"].bot is False
