"""The archive under faults: PostgreSQL stopped while races finish, a node killed while it
writes, two nodes writing the same races, the backlog's bound, a schema newer than the
node. Every race ends in the database exactly once: one row of ``races`` per (code,
creation time), one row of ``race_players`` per player of it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

import asyncpg
import pytest
from prometheus_client.parser import text_string_to_metric_families
from redis import Redis

from spider_client import protocol as p
from spider_server.errors import ArchiveError, Unavailable
from spider_server.runners.archiver import LEASE, Archiver
from spider_server.store import keys
from tests.faults.fault_helpers import FAST_ENV
from tests.server.clocks import TestClock
from tests.server.server_helpers import Client, start_race

BOUND = 120.0
"""Seconds a condition may take before the test fails (a bound, never a measure)."""


async def until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait until ``check()`` is true (polled), failing after :data:`BOUND` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND
    while not await check():
        assert loop.time() < deadline, f"never: {what}"
        await asyncio.sleep(0.05)


async def finish_race(url: str, name: str) -> tuple[str, Client]:
    """A one-player race made and finished (its player resigns); its code and client."""
    code, (c,), _ = await start_race(url, players=1)
    await c.send(p.Resign(code=code, seq=1))
    await c.expect("finished")
    return code, c


async def archived(url: str) -> dict[str, tuple[int, int]]:
    """Code -> (rows of ``races`` with its (code, created_at), rows of ``race_players``)."""
    conn = await asyncpg.connect(url)
    try:
        rows = await conn.fetch(
            "SELECT r.code, count(DISTINCT r.id) AS races, count(p.player) AS players"
            " FROM races r LEFT JOIN race_players p ON p.race_id = r.id"
            " GROUP BY r.code, r.created_at"
        )
        twice = await conn.fetchval(
            "SELECT count(*) FROM (SELECT 1 FROM races GROUP BY code, created_at"
            " HAVING count(*) > 1) AS t"
        )
    finally:
        await conn.close()
    assert twice == 0
    out: dict[str, tuple[int, int]] = {}
    for row in rows:
        assert row["code"] not in out, f"race {row['code']} archived twice"
        out[row["code"]] = (row["races"], row["players"])
    return out


async def archive_all(archiver: Archiver, clock: TestClock | None = None) -> None:
    """Step ``archiver`` until no finished race waits (the database may need a try or two
    to answer again after a restart)."""

    async def drained() -> bool:
        if clock is not None:
            clock.move(5)  # a race looked at too early is due again
        with contextlib.suppress(Unavailable):
            await archiver.step()
        return await archiver.queue.backlog() == 0

    await until(drained, "every finished race archived")


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return int(r.status), r.read().decode()
    except urllib.error.HTTPError as e:
        return int(e.code), e.read().decode()


async def lock_waiters(url: str) -> int:
    """The node's connections waiting for a lock on the test's database."""
    conn = await asyncpg.connect(url)
    try:
        return int(
            await conn.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND application_name = 'spider-race' AND wait_event_type = 'Lock'"
            )
        )
    finally:
        await conn.close()


async def hold_races(url: str) -> Any:
    """A connection holding ``races`` (every write to it waits until it is closed)."""
    conn = await asyncpg.connect(url)
    await conn.execute("BEGIN")
    await conn.execute("LOCK TABLE races IN ACCESS EXCLUSIVE MODE")
    return conn


async def test_races_finished_while_the_database_is_stopped_are_archived_once_after(
    redis_server, pg_database, server_node
) -> None:
    node = await server_node(redis_server.url, database_url=pg_database.url)
    archiver = node.node.archiver
    status, body = await asyncio.to_thread(_get, node.http_url + "/readyz")
    assert (status, body) == (200, "ok\narchive: ok, backlog 0\n")

    pg_database.server.stop()
    finished = [await finish_race(node.url, f"p{i}") for i in range(4)]
    codes = {code for code, _ in finished}
    with pytest.raises(Unavailable):
        await archiver.step()
    assert archiver.archived == 0
    assert await archiver.queue.backlog() == 4
    # unarchived, a finished race outlives results_ttl in Redis: it waits for the database
    settings = node.node.settings
    for code in codes:
        assert await node.node.redis.ttl(f"{{race:{code}}}:meta") > settings.results_ttl
    # ready all the same: the archive's line says why nothing is written, and what waits
    status, body = await asyncio.to_thread(_get, node.http_url + "/readyz")
    assert status == 200
    first, line = body.splitlines()
    assert first == "ok"
    assert re.fullmatch(
        r"archive: database unavailable \(the database .+\), backlog 4, oldest waiting \d+ s",
        line,
    ), line

    pg_database.server.restart()
    await archive_all(archiver)
    assert await archived(pg_database.url) == {code: (1, 1) for code in codes}
    assert archiver.archived == 4
    for code in codes:  # archived: Redis keeps it archived_ttl at most
        assert 0 < await node.node.redis.ttl(f"{{race:{code}}}:meta") <= settings.archived_ttl
    # once more changes nothing
    assert await archiver.step() == 0
    assert await archived(pg_database.url) == {code: (1, 1) for code in codes}
    status, body = await asyncio.to_thread(_get, node.http_url + "/readyz")
    assert (status, body) == (200, "ok\narchive: ok, backlog 0\n")

    # the metrics: backlog, races written, finish to archive, the pool, each query's time
    _, text = await asyncio.to_thread(_get, node.http_url + "/metrics")
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }
    assert samples[("spider_archive_backlog", ())] == 0
    assert samples[("spider_archive_written_total", ())] == 4
    assert samples[("spider_archive_seconds_count", ())] == 4
    assert samples[("spider_database_query_seconds_count", (("query", "write_race"),))] >= 4
    assert samples[("spider_database_query_seconds_count", (("query", "write_players"),))] == 4
    used = samples[("spider_database_pool_connections", (("state", "used"),))]
    idle = samples[("spider_database_pool_connections", (("state", "idle"),))]
    assert used >= 0 and used + idle >= 1
    for _, c in finished:
        await c.close()


async def test_a_node_killed_while_it_writes_loses_and_doubles_nothing(
    redis_server, pg_database, server_process
) -> None:
    env = {**FAST_ENV, "SPIDER_RACE_DATABASE_URL": pg_database.url}
    first = await server_process(redis_server.url, **env)
    held = await hold_races(pg_database.url)  # the node's write waits mid-transaction
    finished = [await finish_race(first.url, f"p{i}") for i in range(8)]
    codes = {code for code, _ in finished}

    async def blocked() -> bool:
        return await lock_waiters(pg_database.url) >= 1

    await until(blocked, "the node's archive write waits on the lock")
    first.kill()  # SIGKILL in the middle of its transaction
    await held.close()  # the lock released: the dead node's transaction is rolled back
    redis = Redis.from_url(redis_server.url)
    try:
        waiting = redis.zrange(keys.ARCHIVE, 0, -1)
        assert len(waiting) == 8  # every race still waits: none was lost
        # the dead node's lease (LEASE seconds) has passed: its races are due again
        redis.zadd(keys.ARCHIVE, dict.fromkeys(waiting, 0), xx=True)
        second = await server_process(redis_server.url, **env)

        async def done() -> bool:
            return redis.zcard(keys.ARCHIVE) == 0 and len(await archived(pg_database.url)) == 8

        await until(done, "the second node archives every race")
        assert await archived(pg_database.url) == {code: (1, 1) for code in codes}
        status, body = await asyncio.to_thread(_get, second.http_url + "/readyz")
        assert (status, body) == (200, "ok\narchive: ok, backlog 0\n")
    finally:
        redis.close()


async def test_two_nodes_writing_the_same_races_at_once_write_each_once(
    redis_server, pg_database, server_node
) -> None:
    clock = TestClock()
    # the nodes' own archive steps run once at start and not again for an hour: only the
    # test's steps take the races, whatever the time the races take to finish on a busy
    # machine (a step of their own in between would archive them before the table is held)
    quiet = {"database_url": pg_database.url, "clock": clock, "sweep_interval": 3600}
    a = await server_node(redis_server.url, **quiet)
    b = await server_node(redis_server.url, **quiet)
    finished = [await finish_race(a.url, f"p{i}") for i in range(5)]
    codes = {code for code, _ in finished}

    async def results_written() -> bool:
        for code in codes:
            race = await a.node.store.races.load_race(code)
            if race is None or await a.node.store.ratings.applied_changes(race) is None:
                return False
        return True

    await until(results_written, "every race's results written")  # nothing waits on them
    held = await hold_races(pg_database.url)
    step_a = asyncio.create_task(a.node.archiver.step())

    def waiting(n: int) -> Callable[[], Awaitable[bool]]:
        async def check() -> bool:
            return await lock_waiters(pg_database.url) >= n

        return check

    await until(waiting(1), "node a writes, held")
    clock.move(LEASE + 1)  # a's lease is over: b takes the same races
    step_b = asyncio.create_task(b.node.archiver.step())
    await until(waiting(2), "node b writes the same races, held")
    await held.close()
    await asyncio.gather(step_a, step_b)
    await archive_all(a.node.archiver, clock)
    await archive_all(b.node.archiver, clock)
    assert await archived(pg_database.url) == {code: (1, 1) for code in codes}
    assert a.node.archiver.archived + b.node.archiver.archived == 5


async def test_past_the_backlog_bound_no_race_is_made_until_the_archive_catches_up(
    redis_server, pg_database, server_node
) -> None:
    node = await server_node(redis_server.url, database_url=pg_database.url, archive_backlog_max=3)
    archiver = node.node.archiver
    pg_database.server.stop()
    # four races running, and one waiting for a second player, made while nothing waits
    running = [await start_race(node.url, players=1) for _ in range(4)]
    host = await Client.connect(node.url, name="host")
    waiting = (await host.create(variant="spider1", countdown=0, max_players=2)).race.code
    for code, (c,), _ in running:  # a burst of finishes past the bound
        await c.send(p.Resign(code=code, seq=1))
        await c.expect("finished")
    assert await archiver.queue.backlog() == 4

    # every way in that makes a race is refused, and changes nothing
    fourth = running[-1][1][0]
    redis = Redis.from_url(redis_server.url)
    try:
        before = sorted(redis.scan_iter("{race:*"))
        for ask in (
            p.CreateRace(req=0, variant="spider1", countdown=0),
            p.QuickMatch(req=0, variant="spider1"),
            p.DailyRace(req=0, variant="spider1"),
        ):
            reply = await fourth.request(ask)
            assert reply.type == "error", reply
            assert reply.error == "unavailable"
            assert "cannot be kept now" in reply.message and "try again later" in reply.message
        assert sorted(redis.scan_iter("{race:*")) == before
        assert redis.zcard(keys.ARCHIVE) == 4
    finally:
        redis.close()

    # joining, moving and finishing go on
    guest = await Client.connect(node.url, name="visitor")
    await guest.join(waiting)
    await host.ready(waiting)
    await guest.ready(waiting)
    for c in (host, guest):
        await c.expect("ack", lambda m: m.seq == 0)
        await c.send(p.Resign(code=waiting, seq=1))
        assert (await c.expect(("ack", "error"), lambda m: m.seq == 1)).type == "ack"
    await host.expect("finished")
    status, body = await asyncio.to_thread(_get, node.http_url + "/readyz")
    assert status == 200 and ", backlog 5, oldest waiting " in body

    pg_database.server.restart()
    await archive_all(archiver)
    assert len(await archived(pg_database.url)) == 5
    joined = await fourth.create(variant="spider1", countdown=0)
    assert joined.race.code
    for c in (host, guest, *(r[1][0] for r in running)):
        await c.close()


async def _newer_schema(url: str) -> None:
    """The database's schema moved past what this node knows (a newer node migrated it)."""
    conn = await asyncpg.connect(url)
    try:
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY,"
            " name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
        )
        await conn.execute(
            "INSERT INTO schema_migrations (version, name) VALUES (9999, 'from_the_future')"
        )
    finally:
        await conn.close()


async def test_a_schema_newer_than_the_node_is_refused_at_start(
    redis_server, pg_database, tmp_path
) -> None:
    from spider_server.node import Node
    from spider_server.settings import Settings

    await _newer_schema(pg_database.url)
    settings = Settings(
        host="127.0.0.1",
        port=0,
        redis_url=redis_server.url,
        database_url=pg_database.url,
        data_dir=tmp_path / "data",
        secret="s" * 32,
    )
    node = Node(settings, redis_url=redis_server.url, secret=b"s" * 32)
    try:
        with pytest.raises(ArchiveError, match="version 9999, newer than this node knows"):
            await node.start()
    finally:
        await node.close()

    # as a process: it exits at once, naming the version, and serves nothing
    done = await asyncio.to_thread(
        subprocess.run,
        [
            sys.executable,
            "-m",
            "spider_server",
            "--port",
            "0",
            "--redis",
            redis_server.url,
            "--database",
            pg_database.url,
            "--data-dir",
            str(tmp_path / "process"),
        ],
        capture_output=True,
        text=True,
        timeout=BOUND,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("SPIDER_RACE_")},
            "SPIDER_RACE_SECRET": "s" * 32,
        },
    )
    assert done.returncode == 6, done.stderr  # EXIT_DATABASE: the database refuses it
    assert "the database refuses this node" in done.stderr
    assert "version 9999, newer than this node knows" in done.stderr
    assert "serving" not in done.stdout
