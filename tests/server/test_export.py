"""A finished race's record (``GET /races/<code>.json``): it replays with the engine to the
race's results and its commitment checks, from Redis and from the archive alike; every
refusal (no such code, not a code, not finished, a daily race before its day is over, too
many requests) is a clear JSON error that changes nothing."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from spider_client import protocol as p
from spider_engine import Board, Move
from spider_server.race import day_end
from tests.server.clocks import TestClock
from tests.server.server_helpers import Client, Player, start_race

VERIFY = Path(__file__).resolve().parents[2] / "scripts" / "verify_race.py"


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


async def get(node: Any, code: str) -> tuple[int, dict[str, str], Any]:
    status, headers, body = await asyncio.to_thread(_get, f"{node.http_url}/races/{code}.json")
    return status, headers, json.loads(body)


async def played_race(node: Any, *, variant: str = "spider2") -> tuple[str, dict[str, Any]]:
    """A race of two players with moves, an undo and resigns, finished; its code and the
    spectator's ``finished`` event as a map."""
    code, (a, b), (w,) = await start_race(node.url, players=2, spectators=1, variant=variant)
    pa = Player(a, code, (await a.join(code)).view, seed=5)
    pb = Player(b, code, (await b.join(code)).view, seed=6)
    for _ in range(5):
        await pa.step()
        await pb.step()
    assert (await pa.undo()).type == "ack"
    await pa.resign()
    for _ in range(3):
        await pb.step()
    await pb.resign()
    finished = await w.expect("finished")
    return code, p.fields_of(finished)


def check_record(record: dict[str, Any], code: str, finished: dict[str, Any]) -> None:
    """The record is the race's: its commitment checks and every player's actions replay
    with the engine to the results the race published."""
    assert record["format"] == 1 and record["code"] == code
    seed, salt = record["seed"], record["salt"]
    digest = hashlib.sha256(bytes.fromhex(salt) + seed.encode("utf-8")).hexdigest()
    assert digest == record["commitment"] == finished["commitment"]
    assert seed == finished["seed"] and salt == finished["salt"]
    results = {r.player: r for r in finished["results"]}
    assert [x["player"] for x in record["players"]] == [r.player for r in finished["results"]]
    for x in record["players"]:
        result = results[x["player"]]
        board = Board.deal(record["variant"], seed)
        for action in x["actions"]:
            if action == "undo":
                board.pop()
            elif action != "resign":
                board.push(Move.from_text(action))
        counted = sum(1 for action in x["actions"] if action != "resign")
        assert x["actions"] == finished["replays"][x["player"]]
        assert board.text() == x["board"] == finished["boards"][x["player"]]
        assert counted == x["moves"] == result.moves
        assert board.classic_score(counted) == x["score"] == result.score
        assert board.variant.sets_completed(board) == x["runs"] == result.runs
        assert (x["rank"], x["status"], x["name"]) == (result.rank, result.status, result.name)
        assert x["times"] == finished["replay_times"][x["player"]]
        assert len(x["times"]) == len(x["actions"]) and x["times"] == sorted(x["times"])
    assert record["started_at"] <= record["finished_at"]


def verify_file(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(VERIFY), str(path)], capture_output=True, text=True, timeout=120
    )


async def test_a_record_from_redis_replays_to_the_results(
    redis_server: Any, server_node: Any, tmp_path: Path
) -> None:
    node = await server_node(redis_server.url)
    code, finished = await played_race(node)
    status, headers, record = await get(node, code.lower())
    assert status == 200, record
    assert headers["Content-Type"] == "application/json"
    assert headers["Content-Disposition"] == f'attachment; filename="spider-race-{code}.json"'
    check_record(record, code, finished)
    assert record["options"]["variant"] == "spider2" and record["par"] is None
    # the checker script checks the exported file as it is
    path = tmp_path / "race.json"
    path.write_text(json.dumps(record))
    done = await asyncio.to_thread(verify_file, path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all checks passed" in done.stdout
    # and catches a record changed after the fact
    record["players"][0]["actions"].insert(0, "+")
    path.write_text(json.dumps(record))
    done = await asyncio.to_thread(verify_file, path)
    assert done.returncode == 1 and "FAIL" in done.stdout


async def test_a_record_from_the_archive_is_the_same(
    redis_server: Any, server_node: Any, pg_database: Any
) -> None:
    node = await server_node(redis_server.url, database_url=pg_database.url, archived_ttl=0)
    code, finished = await played_race(node)
    status, _, from_redis = await get(node, code)
    assert status == 200
    for _ in range(100):  # the results are written, then the race archives
        if await node.node.archiver.step():
            break
        await asyncio.sleep(0.05)
    assert await node.node.store.races.load_race(code) is None  # gone from Redis
    status, _, from_archive = await get(node, code)
    assert status == 200, from_archive
    assert from_archive == from_redis
    check_record(from_archive, code, finished)


async def _kept(r: Any) -> set[bytes]:
    """Redis's keys but the limits' buckets (each request asked for takes one export)."""
    return {k for k in await r.keys("*") if not k.startswith(b"{limit:")}


async def test_refusals_are_clear_and_change_nothing(redis_server: Any, server_node: Any) -> None:
    node = await server_node(redis_server.url)
    code, (a, b), _ = await start_race(node.url, players=2)
    r = node.node.redis
    version = await node.node.store.races.race_version(code)
    keys_before = await _kept(r)
    status, _, body = await get(node, code)
    assert (status, body["error"]) == (409, "not_finished")
    assert f"race {code} is running" in body["message"]
    status, _, body = await get(node, "ZZZZZ" if code != "ZZZZZ" else "YYYYY")
    assert (status, body["error"]) == (404, "not_found") and "no race" in body["message"]
    for bad in ("K7QX", "K7QX2X", "0OOO1", "%20%20"):
        status, _, body = await get(node, bad)
        assert (status, body["error"]) == (404, "not_found"), bad
        assert "is not a race code" in body["message"]
    status, _, body = await asyncio.to_thread(_get, f"{node.http_url}/races/{code}")
    assert status == 404
    assert await node.node.store.races.race_version(code) == version
    assert await _kept(r) == keys_before
    # the race goes on as if nothing was asked
    assert (await Player(a, code, (await a.join(code)).view).resign()).type == "ack"


async def test_exports_are_limited_per_address(redis_server: Any, server_node: Any) -> None:
    node = await server_node(redis_server.url, address_exports=1)
    code, _ = await played_race(node, variant="spider1")
    assert (await get(node, code))[0] == 200
    status, headers, body = await get(node, code)
    assert (status, body["error"]) == (429, "rate_limited")
    assert int(headers["Retry-After"]) >= 1
    # a path that is no race code is turned away before the address's count
    status, _, body = await get(node, "nope")
    assert status == 404
    assert node.node.metrics.refused_total["export"] == 1


async def test_a_daily_race_is_out_once_its_day_is_over(
    redis_server: Any, server_node: Any, daily_seeds: Any
) -> None:
    clock = TestClock()
    node = await server_node(redis_server.url, clock=clock, pool_size=0)
    a = await Client.connect(node.url, name="ann")
    reply = await a.request(p.DailyRace(req=0, variant="spider1"))
    assert reply.type == "joined", reply
    code, day = reply.race.code, reply.race.daily
    if reply.race.preparing:
        await a.expect("prepared", timeout=60)
    await a.ready(code)
    await a.expect("countdown")
    clock.move(reply.race.countdown)  # the countdown is over on the node's clock
    dealt = await a.expect("ack", lambda m: m.seq == 0)
    player = Player(a, code, dealt.view, seed=3)
    await player.step()
    await player.resign()
    finished = p.fields_of(await a.expect("finished"))
    assert finished["seed"] is None
    status, _, body = await get(node, code)
    assert (status, body["error"]) == (403, "not_yet")
    assert f"daily race of {day}" in body["message"] and "day is over" in body["message"]
    assert body["available_at"] == day_end(day)
    clock.move(day_end(day) - clock() + 1)
    status, _, record = await get(node, code)
    assert status == 200, record
    assert record["options"]["daily"] == day
    assert record["players"][0]["actions"] == [*player_actions(player), "resign"]
    seed, salt = record["seed"], record["salt"]
    assert hashlib.sha256(bytes.fromhex(salt) + seed.encode()).hexdigest() == (record["commitment"])


def player_actions(player: Player) -> list[str]:
    return [ack.move for ack in player.acks if getattr(ack, "move", None) and ack.move != "resign"]
