#!/usr/bin/env python3
"""Race a recorded bot run as a ghost, and print how close to its recorded times it ran.

Usage::

    python scripts/ghost_timing.py [--actions N] [--pause S] [--kill] [--max-p99 MS]

Starts a Redis (the embedded server's binary) and two server nodes (``python -m
spider_server``), then:

1. a greedy bot plays a race alone on node 1 (``--actions`` actions ``--pause`` seconds
   apart, then resigns): its recorded run, with each action's time;
2. another bot creates a race on the same deal with that run as a ghost
   (``create_race(ghosts=[...])``) and plays it slowly; a spectator notes when each of the
   ghost's progress events arrives, against the race's start plus the recorded time;
3. with ``--kill``, both connect to node 1 alone and node 1 is SIGKILLed halfway through
   the ghost's run: they reconnect to node 2, which goes on emitting the ghost's actions.

Prints the lateness of the ghost's progress events (p50, p99, max; actions due inside the
takeover window are left out of these), checks that every recorded action arrived once
and in order (and, from the finished race, that the ghost's replay is the recorded one),
and with ``--kill`` prints the takeover window: from the SIGKILL to the first ghost
action committed by node 2. Exit status 0 when every check passes (and p99 is within
``--max-p99`` ms, when given), 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from spider_client import Client, SpiderClientError
from spider_client import protocol as p
from spider_client.bots import make_bot, play_race
from spider_server.embedded import RedisProcess, free_port
from spider_server.pgembedded import PostgresProcess

VARIANT = "spider2"
OPTIONS = {"variant": VARIANT, "countdown": 0, "time_limit": 900, "max_players": 1}


def start_node(
    redis_url: str, database_url: str, folder: Path, n: int
) -> tuple[subprocess.Popen[bytes], str]:
    """A server node process; its websocket URL once it answers /healthz."""
    port = free_port()
    env = {**os.environ, "SPIDER_RACE_SECRET": "ghost-timing", "SPIDER_RACE_NODE": f"node{n}"}
    env["SPIDER_RACE_DATABASE_URL"] = database_url  # the nodes share one database
    args = [sys.executable, "-m", "spider_server", "--port", str(port)]
    args += ["--data-dir", str(folder / f"node{n}"), "--redis", redis_url]
    log = open(folder / f"node{n}.log", "wb")  # noqa: SIM115 - kept open for the process
    proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
    for _ in range(400):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1):
                return proc, f"ws://127.0.0.1:{port}/ws"
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError((folder / f"node{n}.log").read_text()) from None
            time.sleep(0.05)
    raise RuntimeError("the node did not start")


async def record(url: str, actions: int, pause: float) -> tuple[str, str, list[int]]:
    """A bot's run alone: (race code, player id, recorded times in ms)."""
    async with await Client.connect(url, name="recorded bot") as bot:
        code = await bot.create_race(**OPTIONS)
        await play_race(bot, make_bot("greedy", seed=1), max_actions=actions, delay=pause)
        await bot.wait_until(lambda c: c.finished)
        player = bot.me.player if bot.me else ""
    async with await Client.connect(url, name="reader") as reader:
        race = (await reader.join(code, "spectator")).race
    times = (race.replay_times or {}).get(player, [])
    return code, player, times


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


async def race_ghost(
    urls: list[str],
    code: str,
    player: str,
    times: list[int],
    pause: float,
    kill: Callable[[], None] | None,
) -> tuple[int, float]:
    """Race the ghost and report: the number of failed checks, and the p99 lateness."""
    racer = await Client.connect(urls, name="racing bot", backoff_max=0.2)
    watcher = await Client.connect(urls[::-1] if kill is None else urls, name="watcher")
    ghost_code = await racer.create_race(**OPTIONS, ghosts=[{"race": code, "player": player}])
    await watcher.join(ghost_code, "spectator")
    seen: list[tuple[int, float]] = []
    killed_at: float | None = None
    resumed_at: float | None = None
    started_at = 0.0

    async def watch() -> None:
        nonlocal killed_at, resumed_at, started_at
        async for event in watcher.events():
            now = time.time()
            if isinstance(event, p.Started):
                started_at = event.started_at
            elif isinstance(event, p.Progress) and event.player.ghost:
                seen.append((event.player.moves if event.player.status != "resigned" else -1, now))
                if killed_at is not None and resumed_at is None:
                    resumed_at = now
                if kill is not None and killed_at is None and len(seen) == len(times) // 2:
                    kill()
                    killed_at = time.time()
            elif isinstance(event, p.Finished):
                return

    watching = asyncio.create_task(watch())
    await racer.ready()
    bot = make_bot("greedy", seed=2)
    while len(seen) < len(times) and not watching.done():  # the racer outlasts the ghost
        await asyncio.sleep(pause * 1.5)
        view = racer.view
        move = bot(view) if view is not None and racer.status == "playing" else None
        if move is not None:
            # a reconnect, or a move the game no longer takes: the next one
            with contextlib.suppress(SpiderClientError):
                await racer.move(move)
    if racer.status == "playing":
        await racer.resign()
    await asyncio.wait_for(watching, 60)
    finished = watcher.race
    await racer.close()
    await watcher.close()
    failures = 0
    expected = [*range(1, len(times)), -1]
    order_ok = [m for m, _ in seen] == expected
    print(f"ghost actions seen: {len(seen)} of {len(times)}, each once and in order: {order_ok}")
    failures += not order_ok
    replay_ok = finished is not None and len((finished.replays or {}).get("ghost1", [])) == len(
        times
    )
    print(f"the finished race's ghost replay is the recorded run: {replay_ok}")
    failures += not replay_ok
    window = (killed_at or 0.0, resumed_at or 0.0)
    late = [
        (at - (started_at + t / 1000)) * 1000
        for (_, at), t in zip(seen, times, strict=False)
        if not (killed_at is not None and killed_at - 0.001 <= started_at + t / 1000 <= window[1])
    ]
    print(
        f"lateness of the ghost's progress: p50 {percentile(late, 0.5):.1f} ms, "
        f"p99 {percentile(late, 0.99):.1f} ms, max {max(late, default=0):.1f} ms "
        f"over {len(late)} actions"
    )
    if killed_at is not None:
        print(
            f"takeover window: {(window[1] - window[0]) * 1000:.0f} ms "
            "(from the SIGKILL to the ghost's next progress, from the other node)"
        )
    return failures, percentile(late, 0.99)


async def main_async(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as folder:
        Path(folder).chmod(0o711)  # as root, PostgreSQL's own user passes through to its data
        redis = RedisProcess(Path(folder) / "redis")
        redis.start()
        database = PostgresProcess(Path(folder) / "postgres")
        nodes = []
        try:
            database.start()
            nodes = [start_node(redis.url, database.url, Path(folder), n) for n in (1, 2)]
            urls = [url for _, url in nodes]
            code, player, times = await record(urls[0], args.actions, args.pause)
            span = (times[-1] - times[0]) / 1000 if times else 0.0
            print(f"recorded run: {len(times)} actions over {span:.2f} s (race {code})")
            kill = (lambda: nodes[0][0].send_signal(signal.SIGKILL)) if args.kill else None
            failures, p99 = await race_ghost(urls, code, player, times, args.pause, kill)
            if args.max_p99 is not None and p99 > args.max_p99:
                print(f"FAIL p99 {p99:.1f} ms is over {args.max_p99:g} ms")
                failures += 1
            return 1 if failures else 0
        finally:
            for proc, _ in nodes:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
            redis.kill()
            database.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--actions", type=int, default=60, help="actions of the recorded run")
    parser.add_argument("--pause", type=float, default=0.1, help="seconds between them")
    parser.add_argument("--kill", action="store_true", help="SIGKILL node 1 halfway")
    parser.add_argument("--max-p99", type=float, help="fail when p99 lateness exceeds it (ms)")
    args = parser.parse_args(argv)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
