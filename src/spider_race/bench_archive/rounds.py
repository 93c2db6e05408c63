"""The node's CPU per move with the archive off and on, in the same run.

Each round starts a node process (:mod:`.node`) on the bench's Redis (emptied first), without a database
(off) or with the bench's PostgreSQL (on), rounds alternating off, on, off, on…; in each,
the load of ``spider-race bench server`` (:func:`..bench_server.players.race_players`:
bots in races playing the ping-pong deal at ``rate`` moves a second) and beside it
``finishers`` pairs of bots that race short races to their end, one after another: create,
join, ready, ``finish_moves`` moves each at ``finish_rate`` moves a second a pair (0: each as
soon as the last is acked), both resign. Every finished race is queued for the archive and,
with it on, written to PostgreSQL by the node's archive step during the round. A real race
finishes once in thousands of moves; here one does every few hundred, so the archive's
share is overstated, not hidden.

The finishers are paced so that both sides get the same moves to do: at full speed each
pair's moves follow the node's latency, and a round whose node (or machine: PostgreSQL runs
beside it) is a little slower does fewer moves, over which the node's fixed costs (its
timers, sweeps and lobby) are spread thinner; the ratio then measures the machine.

The node's CPU time (``/proc``) is read at the start and the end of the measured time, and
divided by every move acked in it (the racers' and the finishers')."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from spider_client import SpiderClientError

from ..bench_server.deal import PingPong, find_ping_pong
from ..bench_server.meter import CpuMeter
from ..bench_server.players import race_players
from ..bench_server.processes import SECRET, Processes
from ..bench_server.tools import connect_client, free_port, process_cpu
from .node import node_args

__all__ = ["Load", "Round", "cpu_rounds"]

Counter = Callable[[], Awaitable[int]]
"""Races in the archive now."""


@dataclass(frozen=True)
class Load:
    """What every round runs: ``players`` bots in ``races`` at ``rate`` moves a second,
    measured ``seconds`` after ``warmup``, beside ``finishers`` pairs racing races of
    ``finish_moves`` moves each at ``finish_rate`` moves a second a pair."""

    players: int
    races: int
    rate: float
    seconds: float
    warmup: float
    finishers: int
    finish_moves: int
    finish_rate: float


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
    held: bool = False
    """The archive step held to the round's end (:func:`_drain`)."""
    drained: int = 0
    """Races the held step wrote after the round."""
    cpu_ms_per_race: float | None = None
    """The node's CPU per race while the held step wrote them, its idle rate taken off."""


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
    rate: float = 0.0
    """Moves a second of each pair, both players' (0: each move as soon as the last is
    acked)."""
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
                    due = loop.time()
                    for move in plays[: self.moves]:
                        for c in (a, b):
                            if self.rate > 0:  # paced: behind by more than 0.1 s, not caught up
                                due = max(due + 1 / self.rate, loop.time() - 0.1)
                                await asyncio.sleep(max(0.0, due - loop.time()))
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
    procs: Processes,
    redis_url: str,
    database_url: str | None,
    name: str,
    max_players: int,
    hold: bool = False,
) -> tuple[str, subprocess.Popen[bytes]]:
    port = free_port()
    env = {
        **os.environ,
        "SPIDER_RACE_BENCH_HOLD_ARCHIVE": "1" if hold else "0",
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
    load: Load,
    *,
    archived_before: int,
    count_archived: Counter,
    hold: bool = False,
) -> Round:
    on = database_url is not None
    name = f"round{index}-{'held' if hold else 'on' if on else 'off'}"
    await _empty(redis_url)
    url, child = await _start_node(procs, redis_url, database_url, name, load.players, hold)
    result = Round(archive=on, held=hold)
    finishing = _Finishers(
        url, find_ping_pong(), load.finishers, load.finish_moves, load.finish_rate
    )
    task = asyncio.create_task(finishing.run())
    try:
        meter = _Meter(child.pid, None)
        async with meter:
            tally, _, _, _ = await race_players(
                url, players=load.players, races=load.races, spectators=0, stalled=0,
                rate=load.rate, seconds=load.seconds, meter=meter, warmup=load.warmup,
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
    if hold:
        result.drained, result.cpu_ms_per_race = await _drain(child, redis_url, count_archived)
    if on:  # the node's archive step catches up with every race finished in the round
        for _ in range(1200):
            result.archived = await count_archived() - archived_before
            if result.archived >= result.finished:
                break
            await asyncio.sleep(0.1)
    procs.stop(child)
    return result


async def _drain(
    child: subprocess.Popen[bytes], redis_url: str, count_archived: Counter
) -> tuple[int, float | None]:
    """Release the held archive step once the load is gone; the races it wrote and its CPU
    milliseconds per race (the node's CPU while it wrote them, less its idle rate measured
    just before over two seconds)."""
    from spider_server.store import keys
    from spider_server.store.redisconn import connect

    loop = asyncio.get_running_loop()
    redis = connect(redis_url)
    try:
        await asyncio.sleep(1.0)  # the bots' departures handled
        idle_from, idle_at = process_cpu(child.pid), loop.time()
        await asyncio.sleep(2.0)
        idle_to, idle_end = process_cpu(child.pid), loop.time()
        before = await count_archived()
        began, cpu_from = loop.time(), process_cpu(child.pid)
        child.send_signal(signal.SIGUSR1)
        for _ in range(6000):
            if not await redis.zcard(keys.ARCHIVE):
                break
            await asyncio.sleep(0.02)
        ended, cpu_to = loop.time(), process_cpu(child.pid)
        drained = await count_archived() - before
    finally:
        await redis.aclose()
    if None in (idle_from, idle_to, cpu_from, cpu_to) or not drained:
        return drained, None
    assert idle_from is not None and idle_to is not None
    assert cpu_from is not None and cpu_to is not None
    idle_rate = (idle_to - idle_from) / (idle_end - idle_at)
    spent = cpu_to - cpu_from - idle_rate * (ended - began)
    return drained, max(0.0, spent) * 1000 / drained


async def cpu_rounds(
    procs: Processes,
    redis_url: str,
    database_url: str,
    count_archived: Counter,
    load: Load,
    rounds: int,
) -> list[Round]:
    """``rounds`` of each side, alternating off and on, then one on with its archive step
    held to the end (:func:`_drain`); each round's figures."""
    out: list[Round] = []
    for i in range(2 * rounds + 1):
        on = i % 2 == 1 or i == 2 * rounds
        before = await count_archived() if on else 0
        out.append(
            await one_round(
                procs, redis_url, database_url if on else None, i, load,
                archived_before=before, count_archived=count_archived,
                hold=i == 2 * rounds,
            )
        )  # fmt: skip
    return out
