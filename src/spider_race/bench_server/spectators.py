"""The spectators: a crowd spread over worker processes, each reading its share's
frames through the client library and noting when every ``progress`` arrived."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Mapping, Sequence

import msgpack

from spider_client import Client, SpiderClientError
from spider_client import protocol as p

from .processes import WORKER_MODULE
from .tools import bounded, close_all, collector_paused, connect_client, shares

__all__ = ["Crowd", "spectators_worker"]


class Crowd:
    """The spectators, spread over worker processes (``python -m spider_race.bench_server
    spectators …``) so that reading their frames does not wait on one process's loop:
    each worker connects its share through the client library, joins the races in turn
    and notes when each ``progress`` reaches each of its spectators (the system-wide
    monotonic clock, the same as this process's loop time); :meth:`deliveries` collects
    the notes at the end."""

    PER_PROCESS = 250
    """Spectators a worker takes by default."""

    def __init__(self, workers: list[asyncio.subprocess.Process]) -> None:
        self.workers = workers

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self.workers]

    @classmethod
    async def start(
        cls, url: str, codes: Sequence[str], count: int, *, processes: int | None = None
    ) -> Crowd:
        """Start the workers (``processes`` of them; by default one per 250 spectators,
        at most one per core) and wait until every spectator watches its race."""
        if count <= 0:
            return cls([])
        if processes is None:
            processes = min(-(-count // cls.PER_PROCESS), os.cpu_count() or 1)
        processes = max(1, min(processes, count))
        crowd = cls([])
        first = 0
        try:
            for share in shares(count, processes):
                worker = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", WORKER_MODULE, "spectators",
                    url, str(first), str(share), *codes,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                )  # fmt: skip
                crowd.workers.append(worker)
                first += share
            for worker in crowd.workers:
                assert worker.stdout is not None
                line = await worker.stdout.readline()
                if line.strip() != b"ready":
                    raise RuntimeError(f"a spectators' worker failed: {line!r}")
        except BaseException:
            await crowd.close()
            raise
        return crowd

    async def deliveries(
        self, last: Mapping[str, int], *, wait: float = 10.0
    ) -> tuple[list[tuple[str, int, float]], dict[str, int]]:
        """Every ``progress`` each spectator got, (player, moves, when), once each has
        seen every player's last move (``last``: player -> moves), or after ``wait``
        seconds; and what went wrong, by kind (spectators still behind then, reconnects,
        events dropped). The workers close their spectators and stop."""
        notes: list[tuple[str, int, float]] = []
        trouble: dict[str, int] = {}
        order = json.dumps({"last": dict(last), "wait": wait}).encode() + b"\n"
        for worker in self.workers:
            assert worker.stdin is not None
            worker.stdin.write(order)
            await worker.stdin.drain()
        for worker in self.workers:
            assert worker.stdout is not None
            data = await worker.stdout.read()
            if await worker.wait() != 0:
                raise RuntimeError("a spectators' worker failed")
            report = msgpack.unpackb(data)
            notes += [(str(a), int(b), float(c)) for a, b, c in report["notes"]]
            for kind, count in report["trouble"].items():
                if count:
                    trouble[kind] = trouble.get(kind, 0) + int(count)
        return notes, trouble

    async def close(self) -> None:
        """Kill the workers still running (idempotent)."""
        for worker in self.workers:
            if worker.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    worker.kill()
                await worker.wait()


async def spectators_worker(url: str, first: int, count: int, codes: Sequence[str]) -> None:
    """A :class:`Crowd` worker: ``count`` spectators (``watcher{first}``, …) join the
    races in turn; "ready" on stdout; their ``progress`` deliveries noted until "stop"
    on stdin; then the notes, packed with msgpack, on stdout."""
    loop = asyncio.get_running_loop()
    made = await bounded(
        [f"watcher{first + i}" for i in range(count)],
        lambda name: connect_client(url, name, max_unread=10_000),
        concurrency=100,
    )
    clients = [c for c in made if isinstance(c, Client)]
    if len(clients) != count:
        raise RuntimeError(f"could not connect every spectator: {made!r}")
    joined = await bounded(
        list(enumerate(clients)),
        lambda ic: ic[1].join(codes[(first + ic[0]) % len(codes)], "spectator"),
        concurrency=100,
    )
    failed = [e for e in joined if isinstance(e, Exception)]
    if failed:
        raise RuntimeError(f"{len(failed)} spectators could not join: {failed[0]!r}")
    notes: list[tuple[str, int, float]] = []

    async def watch(c: Client) -> None:
        async for event in c.events():
            if isinstance(event, p.Progress):
                notes.append((event.player.player, event.player.moves, loop.time()))

    readers = [loop.create_task(watch(c)) for c in clients]
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    with collector_paused():
        line = await asyncio.to_thread(sys.stdin.buffer.readline)
        order = json.loads(line or b'{"last": {}, "wait": 0}')
        last: dict[str, int] = order["last"]

        def caught_up(c: Client) -> bool:
            players = c.race.players if c.race is not None else []
            return all(i.moves >= last[i.player] for i in players if i.player in last)

        async def wait(c: Client) -> bool:
            try:
                await c.wait_until(caught_up, timeout=order["wait"])
            except (TimeoutError, SpiderClientError):
                return False
            return True

        done = await asyncio.gather(*(wait(c) for c in clients))
        await asyncio.sleep(0.05)  # the last events reach the readers
    for task in readers:
        task.cancel()
    trouble = {
        "spectators_behind": sum(1 for ok in done if not ok),
        "spectator_reconnects": sum(c.reconnects for c in clients),
        "spectator_events_dropped": sum(c.dropped_events for c in clients),
    }
    await close_all(clients)
    out.write(msgpack.packb({"notes": notes, "trouble": trouble}))
    out.flush()
