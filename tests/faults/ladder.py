"""The quick-match ladder: bot processes (``spider-race bot --quick``) of several
strengths queue for quick matches against server nodes; afterwards the checks read Redis.

``run_ladder`` starts the bots and stops them after some seconds; ``check_ladder`` asserts
what must hold whatever happened: every group taken from a queue made exactly one race
(a count in Redis equals the races), no race was made twice, and no player was ever in
two games at once (each player's game in a race was over before their next race was
made). Ratings will add their own checks here.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

__all__ = ["LadderReport", "check_ladder", "run_ladder"]

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class LadderReport:
    """What a ladder run left: the races made, by code, and each bot's output lines."""

    races: dict[str, list[str]] = field(default_factory=dict)
    lines: dict[str, list[str]] = field(default_factory=dict)


async def run_ladder(
    urls: list[str], strengths: dict[str, int], *, variant: str, seconds: float
) -> dict[str, list[str]]:
    """Run ``strengths`` (strategy -> bot processes) for ``seconds``, spread over
    ``urls``; each bot's output lines by its name (the games it finished)."""
    procs: list[tuple[str, asyncio.subprocess.Process]] = []
    n = 0
    for strategy, count in strengths.items():
        for i in range(count):
            name = f"{strategy}-{i}"
            url = urls[n % len(urls)]
            n += 1
            argv = [sys.executable, "-m", "spider_race", "bot", "--quick", variant]
            argv += ["--strategy", strategy, "--games", "0", "--name", name, "--url", url]
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
            procs.append((name, proc))
    await asyncio.sleep(seconds)
    out: dict[str, list[str]] = {}
    for _, proc in procs:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
    for name, proc in procs:
        try:
            data, _ = await asyncio.wait_for(proc.communicate(), 20)
        except TimeoutError:
            proc.kill()
            data, _ = await proc.communicate()
        out[name] = data.decode().splitlines()
    return out


def _s(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


async def check_ladder(redis_url: str) -> dict[str, list[str]]:
    """Assert the ladder's invariants on Redis; the races made: code -> players."""
    r = aioredis.from_url(redis_url)
    try:
        groups = int(await r.get("{match}:groups") or 0)
        created = int(await r.get("{match}:created") or 0)
        recent = [_s(x).split("|") for x in await r.lrange("{match}:recent", 0, -1)]
        assert groups == created, (groups, created)  # every group taken made one race
        assert len(recent) == min(created, 1000)
        codes = [code for code, _, _ in recent]
        assert len(set(codes)) == len(codes), "a race was made twice"
        races: dict[str, list[str]] = {}
        by_player: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for code, players, made in recent:
            members = players.split(",")
            races[code] = members
            meta = {_s(k): _s(v) for k, v in (await r.hgetall(f"{{race:{code}}}:meta")).items()}
            assert meta.get("quick") == "1", code
            entries = await r.hkeys(f"{{race:{code}}}:players")
            assert sorted(_s(e) for e in entries) == sorted(members), code
            for player in members:
                by_player[player].append((float(made), code))
        for player, made in by_player.items():
            made.sort()
            for (_, first), (then, _) in zip(made, made[1:], strict=False):
                meta = {
                    _s(k): _s(v) for k, v in (await r.hgetall(f"{{race:{first}}}:meta")).items()
                }
                game = {
                    _s(k): _s(v)
                    for k, v in (await r.hgetall(f"{{race:{first}}}:game:{player}")).items()
                }
                assert game.get("status") not in (None, "", "playing"), (player, first)
                if game.get("time") and meta.get("started_at"):
                    over = float(meta["started_at"]) + float(game["time"])
                    assert over <= then + 0.5, (player, first, over, then)
        return races
    finally:
        await r.aclose()
