"""``spider-race bot`` and ``demo`` against real servers (the guide's programs:
test_docs_client.py)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

from spider_client import Client
from spider_race import cli
from tests.client.client_helpers import FAST


async def _host_then_resign(url: str, seed: str) -> tuple[Client, str]:
    host = await Client.connect(url, name="host")
    code = await host.create_race(variant="spider1", seed=seed, countdown=0)
    return host, code


async def _resign_when_started(host: Client) -> None:
    """Once the other player has joined: ready, and resign at the start."""
    await host.wait_until(lambda c: c.race is not None and len(c.race.players) == 2, timeout=30)
    await host.ready()
    await host.wait_until(lambda c: c.view is not None, timeout=30)
    await host.resign()


async def test_bot_command_plays_a_race_and_prints_its_result(
    redis_server, server_node, capsys
) -> None:
    node = await server_node(redis_server.url, **FAST)
    host, code = await _host_then_resign(node.url, "bot-command")
    async with host:
        command = asyncio.create_task(
            asyncio.to_thread(cli.main, ["bot", code.lower(), "--url", node.url, "--name", "gus"])
        )
        await _resign_when_started(host)
        assert await asyncio.wait_for(command, 90) == 0
    out = capsys.readouterr().out
    assert re.search(r"gus: (won|resigned|stuck) — (1 run|\d+ runs), ", out)
    assert not re.search(r"\b1 (runs|cards|moves)\b", out)


async def test_bot_command_reports_a_missing_race(redis_server, server_node, capsys) -> None:
    node = await server_node(redis_server.url, **FAST)
    status = await asyncio.to_thread(cli.main, ["bot", "ZZZZZ", "--url", node.url])
    assert status == 1
    err = capsys.readouterr().err
    assert "no race" in err
    assert err.count("ZZZZZ") == 1 and "not_found" not in err  # said once, in words


async def test_headless_demo_on_a_given_server(redis_server, server_node, capsys) -> None:
    node = await server_node(redis_server.url, **FAST)
    argv = ["demo", "--headless", "--bots", "3", "--url", node.url, "--seed", "demo-1"]
    status = await asyncio.wait_for(asyncio.to_thread(cli.main, argv), 120)
    out = capsys.readouterr().out
    assert status == 0, out
    assert "live boards on" in out
    assert "started — commitment" in out
    assert "finished — seed 'demo-1' revealed" in out
    ranking = out[out.index("rank  player") :].splitlines()[1:]
    assert len(ranking) == 3
    assert [line.split()[0] for line in ranking] == ["1", "2", "3"]


def test_headless_demo_starts_its_own_server(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "demo", "--headless", "--bots", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "starting a local server" in done.stdout
    assert "rank  player" in done.stdout
