"""``spider-race serve`` with no Redis address: its own redis-server, kept in a folder."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

from tests.server.server_helpers import Client


def _embedded_port(log: Path) -> int:
    for line in log.read_text().splitlines():
        if "embedded redis-server on port" in line:
            return int(line.split("on port ")[1].split()[0].rstrip(","))
    raise AssertionError("no embedded redis-server in the log")


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_serve_with_embedded_redis_keeps_races(server_process, tmp_path: Path) -> None:
    folder = tmp_path / "data"
    proc = await server_process(None, data_dir=folder, cli=True, SPIDER_RACE_SECRET="")
    a = await Client.connect(proc.url, name="alice")
    code = (await a.create(variant="spider1")).race.code
    token = a.token
    assert (folder / "token-secret").exists()
    assert (folder / "redis" / "spider-race.aof").exists()
    redis_port = _embedded_port(tmp_path / "proc1.log")
    assert _port_open(redis_port)
    assert await asyncio.to_thread(proc.terminate) == 0
    assert await a.closed_with() == 1012
    assert not _port_open(redis_port)
    # the embedded redis-server stopped with it, and a new start finds the race again
    proc2 = await server_process(None, data_dir=folder, cli=True, SPIDER_RACE_SECRET="")
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
