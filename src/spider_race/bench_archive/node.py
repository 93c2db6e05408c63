"""The node of the CPU rounds: ``python -m spider_race.bench_archive node PORT REDIS [DB]``.

The node as ``spider-race serve`` runs it, but for the database: with a URL it archives into
that PostgreSQL, without one it keeps no archive (``serve`` would start an embedded
PostgreSQL). Both sides of a comparison start this same way.

With ``SPIDER_RACE_BENCH_HOLD_ARCHIVE=1`` in its environment the node's archive step waits
for SIGUSR1 before its first step: the races finished meanwhile wait in Redis, and the bench
measures the node's CPU while it writes them all at once (the archive's cost per race)."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from typing import Any

__all__ = ["node_args", "serve_node"]


def node_args(port: int, redis_url: str, database_url: str | None) -> list[str]:
    """The command line of a round's node."""
    args = [sys.executable, "-m", "spider_race.bench_archive", "node", str(port), redis_url]
    return args + ([database_url] if database_url else [])


async def serve_node(port: int, redis_url: str, database_url: str | None) -> None:
    """Run a node until SIGTERM, its other settings from the environment."""
    from spider_server.main import quiet_garbage_collector
    from spider_server.node import Node
    from spider_server.settings import Settings
    from spider_server.tokens import load_secret

    settings = Settings.from_env().replace(
        port=port, redis_url=redis_url, database_url=database_url
    )
    secret = load_secret(settings.secret, settings.data_dir)
    node = Node(settings, redis_url=redis_url, secret=secret)
    if os.environ.get("SPIDER_RACE_BENCH_HOLD_ARCHIVE") == "1":
        _hold_archive(node.archiver)
    await node.start()
    quiet_garbage_collector()
    print(f"spider-race serving ws://{settings.host}:{node.port}/ws", flush=True)
    await node.serve_until_signalled()


def _hold_archive(archiver: Any) -> None:
    """The archive step waits for SIGUSR1 (once released, it steps as the server's does)."""
    released = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGUSR1, released.set)
    step = archiver.step

    async def held(limit: int = 32) -> int:
        await released.wait()
        return int(await step(limit))

    archiver.step = held


def main(argv: list[str]) -> int:
    if len(argv) in (3, 4) and argv[0] == "node":
        asyncio.run(serve_node(int(argv[1]), argv[2], argv[3] if len(argv) == 4 else None))
        return 0
    print(
        "usage: python -m spider_race.bench_archive node PORT REDIS_URL [DATABASE_URL]",
        file=sys.stderr,
    )
    return 2
