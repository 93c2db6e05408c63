"""``spider-race export CODE --url URL`` as a process against a real node: the record on
standard output (which the checker script passes), and a clear line on standard error
with its exit status for every refusal."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from spider_server.embedded import free_port
from tests.server.server_helpers import start_race
from tests.server.test_export import VERIFY, played_race


def export(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "export", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


async def run(*args: str) -> subprocess.CompletedProcess[str]:
    return await asyncio.to_thread(export, *args)  # the node serves meanwhile


async def test_export_prints_the_record(
    redis_server: Any, server_node: Any, tmp_path: Path
) -> None:
    node = await server_node(redis_server.url)
    code, finished = await played_race(node)
    done = await run(code.lower(), "--url", node.url)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["code"] == code and record["seed"] == finished["seed"]
    assert [x["player"] for x in record["players"]] == [r.player for r in finished["results"]]
    path = tmp_path / f"spider-race-{code}.json"
    path.write_text(done.stdout)
    checked = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(VERIFY), str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "ok   the seed and salt give the commitment" in checked.stdout


async def _kept(r: Any) -> set[bytes]:
    """Redis's keys but the limits' buckets (each record asked for takes one export)."""
    return {k for k in await r.keys("*") if not k.startswith(b"{limit:")}


async def test_export_refusals(redis_server: Any, server_node: Any) -> None:
    node = await server_node(redis_server.url)
    code, _, _ = await start_race(node.url, players=1)
    keys_before = await _kept(node.node.redis)
    done = await run(code, "--url", node.url)
    assert (done.returncode, done.stdout) == (1, "")
    assert f"race {code} is running" in done.stderr and "once it is finished" in done.stderr
    other = "ZZZZZ" if code != "ZZZZZ" else "YYYYY"
    done = await run(other, "--url", node.url)
    assert (done.returncode, done.stdout) == (1, "")
    assert f"no race {other}" in done.stderr
    done = await run("K7Q!", "--url", node.url)
    assert (done.returncode, done.stdout) == (2, "")
    assert "'K7Q!' is not a race code" in done.stderr
    done = await run(code, "--url", "ftp://example")
    assert done.returncode == 2 and "is not a server's URL" in done.stderr
    assert await _kept(node.node.redis) == keys_before
    nobody = f"ws://127.0.0.1:{free_port()}/ws"
    done = await run(code, "--url", nobody)
    assert (done.returncode, done.stdout) == (3, "")
    assert f"the server at {nobody} does not answer" in done.stderr
