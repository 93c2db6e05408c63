"""Idle connections held beside the racing players (``--idle-beside N``), in a worker
process of their own so that their pings and pongs load neither the bots' process nor its
figures: what the node pays for connections that only stay."""

from __future__ import annotations

import asyncio
import gc
import signal
import subprocess
import sys
from pathlib import Path

from spider_client import Client

from .processes import WORKER_MODULE, Processes
from .tools import bounded, close_all, raise_open_files

__all__ = ["Idlers", "idlers_worker"]

READY = "idle connections held: "


async def idlers_worker(url: str, count: int) -> None:
    """``python -m spider_race.bench_server idle URL COUNT``: COUNT clients that said
    hello, held until SIGTERM; prints ``idle connections held: N`` (and ``lost: N`` at
    the end) on standard output."""
    raise_open_files(count + 1024)
    made = await bounded(
        [f"idle{i}" for i in range(count)],
        lambda name: Client.connect(url, name=name, reconnect_timeout=60.0),
        concurrency=200,
    )
    clients = [c for c in made if isinstance(c, Client)]
    gc.collect()
    gc.freeze()
    print(f"{READY}{len(clients)}", flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    print(f"lost: {sum(1 for c in clients if not c.connected)}", flush=True)
    await close_all(clients)


class Idlers:
    """The worker holding ``count`` idle connections to ``url`` (see :func:`idlers_worker`)."""

    def __init__(self, procs: Processes, url: str, count: int) -> None:
        self.procs, self.url, self.count = procs, url, count
        self.child: subprocess.Popen[bytes] | None = None
        self.log = procs.folder / "idlers.log"

    async def start(self) -> int:
        """Start the worker and wait until its connections are held; how many are."""
        args = [sys.executable, "-m", WORKER_MODULE, "idle", self.url, str(self.count)]
        child = self.child = self.procs.spawn(args, env=_env(), log=self.log.name)
        for _ in range(12_000):  # 10 minutes at most
            if child.poll() is not None:
                raise RuntimeError(f"the idle connections' worker ended: {_read(self.log)}")
            text = _read(self.log)
            if READY in text:
                return int(text.split(READY, 1)[1].split()[0])
            await asyncio.sleep(0.05)
        raise RuntimeError("the idle connections' worker did not connect in time")

    def stop(self) -> int | None:
        """Stop the worker; how many of its connections it had lost (None: unknown)."""
        if self.child is None:
            return None
        self.procs.stop(self.child)
        text = _read(self.log)
        return int(text.split("lost: ", 1)[1].split()[0]) if "lost: " in text else None


def _env() -> dict[str, str]:
    import os

    return dict(os.environ)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""
