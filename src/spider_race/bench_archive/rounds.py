"""The node's CPU per move with the archive off and on, in the same run.

Each round starts a node process (:mod:`.node`) on the bench's Redis (emptied first), without a database
(off) or with the bench's PostgreSQL (on), rounds alternating off, on, off, on…; in each,
the load of ``spider-race bench server`` (:func:`..bench_server.players.race_players`:
bots in races playing the ping-pong deal at ``rate`` moves a second) and beside it
``finishers`` pairs of bots that race short races to their end, one after another: create,
join, ready, ``finish_moves`` moves each at full speed, both resign. Every finished race is
queued for the archive and, with it on, written to PostgreSQL by the node's archive step
during the round. A real race finishes once in thousands of moves; here one does every
``2 × finish_moves`` moves or so, so the archive's share is overstated, not hidden.

The node's CPU time (``/proc``) is read at the start and the end of the measured time, and
divided by every move acked in it (the racers' and the finishers')."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from spider_client import SpiderClientError

from ..bench_server.deal import PingPong, find_ping_pong
from ..bench_server.meter import CpuMeter
from ..bench_server.players import race_players
from ..bench_server.processes import SECRET, Processes
from ..bench_server.tools import connect_client, free_port
from .node import node_args

__all__ = ["Round", "cpu_rounds"]

Counter = Callable[[], Awaitable[int]]
"""Races in the archive now."""


@dataclass
class Round:
    archive: bool
    cpu_ms_per_move: float = 0.0
    moves: int = 0
    finished: int = 0
    """Races the finishers finished in the round (each pair at least one)."""
    archived: int = 0
    """Races written to the archive in the round (waited for: every one finished)."""
    errors: int = 0


class _Meter(CpuMeter):
    """The bench server's meter, noting when the measured time begins and ends."""

    began = 0.0
    ended = 0.0

    async def begin(self) -> None:
        self.began = asyncio.get_running_loop().time()
        await super().begin()

    async def end(self) -> None:
        self.ended = asyncio.get_running_loop().time()
        await super().end()


@dataclass
class _Finishers:
    url: str
    line: PingPong
    pairs: int
    moves: int
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    acks: list[float] = field(default_factory=list)
    finishes: list[float] = field(default_factory=list)
    errors: int = 0

    async def run(self) -> None:
        await asyncio.gather(*(self._pair(i) for i in range(self.pairs)))

    async def _pair(self, index: int) -> None:
        loop = asyncio.get_running_loop()
        a = await connect_client(self.url, f"fin{index}a", max_unread=16, bot=True)
        b = await connect_client(self.url, f"fin{index}b", max_unread=16, bot=True)
        plays = list(self.line.opening)
        while len(plays) < self.moves:
            plays += [self.line.there, self.line.back]
        try:
            while not self.stop.is_set():
                try:
                    code = await a.create_race(
                        variant=self.line.variant, seed=self.line.seed, max_players=2,
                        time_limit=600, undo=False, countdown=0,
                    )  # fmt: skip
                    await b.join(code)
                    for c in (a, b):
                        await c.ready()
                    for c in (a, b):
                        await c.wait_until(lambda x: x.view is not None, timeout=120)
                    for move in plays[: self.moves]:
                        for c in (a, b):
                            await c.move(move)
                            self.acks.append(loop.time())
                    for c in (a, b):
                        await c.resign()
                    for c in (a, b):
                        await c.wait_until(lambda x: x.finished, timeout=120)
                    self.finishes.append(loop.time())
                except (SpiderClientError, TimeoutError):
                    self.errors += 1
                    await asyncio.sleep(0.1)
        finally:
            for c in (a, b):
                with contextlib.suppress(Exception):
                    await c.close()


def _healthy(http_url: str) -> bool:
    try:
        with urllib.request.urlopen(http_url + "/healthz", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


async def _start_node(
    procs: Processes, redis_url: str, database_url: str | None, name: str, max_players: int
) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    env = {
        **os.environ,
        "SPIDER_RACE_SECRET": SECRET,
        "SPIDER_RACE_NODE": name,
        "SPIDER_RACE_DATA_DIR": str(procs.folder / name),
        "SPIDER_RACE_RATE": "100000",
        "SPIDER_RACE_BURST": "100000",
        "SPIDER_RACE_ADDRESS_CONNECTIONS": "1000000",
        "SPIDER_RACE_ADDRESS_NEW_PLAYERS": "1000000",
        "SPIDER_RACE_ADDRESS_CREATIONS": "1000000",
        "SPIDER_RACE_PLAYER_CREATIONS": "1000000",
        "SPIDER_RACE_PLAYER_OPEN_RACES": "1000",
        "SPIDER_RACE_ADDRESS_OPEN_RACES": "1000",
        "SPIDER_RACE_ADDRESS_WRONG_JOINS": "1000000",
        "SPIDER_RACE_MAX_PLAYERS": str(max(16, max_players)),
        "SPIDER_RACE_DRAIN": "0",
    }
    log = f"{name}.log"
    child = procs.spawn(node_args(port, redis_url, database_url), env=env, log=log)
    http = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if child.poll() is not None:
            raise RuntimeError((procs.folder / log).read_text())
        if await asyncio.to_thread(_healthy, http):
            return f"ws://127.0.0.1:{port}/ws", child
        await asyncio.sleep(0.05)
    raise RuntimeError(f"the node of round {name} did not become healthy")


async def _empty(redis_url: str) -> None:
    """Every round starts on an empty Redis (a node with the archive on would otherwise
    archive the races that earlier rounds finished there, as it does a Redis's old races)."""
    from spider_server.store.redisconn import connect

    redis = connect(redis_url)
    try:
        await redis.flushall()
    finally:
        await redis.aclose()


async def one_round(
    procs: Processes,
    redis_url: str,
    database_url: str | None,
    index: int,
    *,
    players: int,
    races: int,
    rate: float,
    seconds: float,
    warmup: float,
    finishers: int,
    finish_moves: int,
    archived_before: int,
    count_archived: Counter,
) -> Round:
    on = database_url is not None
    name = f"round{index}-{'on' if on else 'off'}"
    await _empty(redis_url)
    url, child = await _start_node(procs, redis_url, database_url, name, players)
    result = Round(archive=on)
    finishing = _Finishers(url, find_ping_pong(), finishers, finish_moves)
    task = asyncio.create_task(finishing.run())
    try:
        meter = _Meter(child.pid, None)
        async with meter:
            tally, _, _, _ = await race_players(
                url, players=players, races=races, spectators=0, stalled=0, rate=rate,
                seconds=seconds, meter=meter, warmup=warmup,
            )  # fmt: skip
    finally:
        finishing.stop.set()
        await task
    inside = [t for t in finishing.acks if meter.began <= t <= meter.ended]
    result.moves = tally.moves + len(inside)
    spent = meter.spent.get("server")
    result.cpu_ms_per_move = (spent or 0.0) * 1000 / max(result.moves, 1)
    result.finished = len(finishing.finishes)
    result.errors = tally.errors + finishing.errors
    if on:  # the node's archive step catches up with every race finished in the round
        for _ in range(1200):
            result.archived = await count_archived() - archived_before
            if result.archived >= result.finished:
                break
            await asyncio.sleep(0.1)
    procs.stop(child)
    return result


async def cpu_rounds(
    procs: Processes,
    redis_url: str,
    database_url: str,
    count_archived: Counter,
    *,
    rounds: int,
    players: int,
    races: int,
    rate: float,
    seconds: float,
    warmup: float,
    finishers: int,
    finish_moves: int,
) -> list[Round]:
    """``rounds`` of each side, alternating off and on; each round's figures."""
    out: list[Round] = []
    for i in range(2 * rounds):
        on = i % 2 == 1
        before = await count_archived() if on else 0
        out.append(
            await one_round(
                procs, redis_url, database_url if on else None, i,
                players=players, races=races, rate=rate, seconds=seconds, warmup=warmup,
                finishers=finishers, finish_moves=finish_moves,
                archived_before=before, count_archived=count_archived,
            )
        )  # fmt: skip
    return out
