"""Races over two node processes: where each member connects, the races played on a
schedule, and what the processes spent meanwhile (``spider-race bench affinity`` and
``bench capacity``).

Every client connects without race affinity (``affinity=False``) straight to the node the
bench picks for it, so the placement is the bench's: ``together`` puts every member of a
race on one node (the races alternate between the nodes), as a load balancer hashing on
``?race=CODE`` does; ``spread`` alternates the members of each race between the nodes.
The figures count what Redis did (``INFO commandstats``: the ``PUBLISH`` and ``SPUBLISH``
calls, which the commit scripts make only for races another node watches; ``INFO cpu``;
``MEMORY USAGE`` of the keys) and what each node process did (its CPU seconds from
``/proc/<pid>/stat``, its resident memory).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from spider_client import Client

from .deal import PingPong, find_ping_pong
from .processes import Processes
from .sending import Tally, Timing, drive
from .tools import bounded, close_all, collector_paused, connect_client, process_cpu, rss_mb

__all__ = [
    "Nodes",
    "Placed",
    "Reading",
    "place_races",
    "play_races",
    "read_all",
    "start_nodes",
    "stored_bytes",
]


@dataclass
class Nodes:
    """The node processes of a run and the Redis servers (their ports) behind them."""

    urls: list[str]
    pids: list[int]
    redis_ports: list[int]


async def start_nodes(
    procs: Processes, redis_url: str, redis_ports: list[int], count: int, max_players: int
) -> Nodes:
    """``count`` node processes (``bench1``, ``bench2``, …) on ``redis_url``."""
    urls, pids = [], []
    for i in range(count):
        url, pid = await procs.start_server(
            redis_url, max_players=max_players, settings={"SPIDER_RACE_NODE": f"bench{i + 1}"}
        )
        urls.append(url)
        pids.append(pid)
    return Nodes(urls, pids, redis_ports)


@dataclass
class Reading:
    """CPU seconds, Redis counters and memory at one moment."""

    node_cpu: list[float]
    redis_cpu: list[float]
    published: int
    node_rss_mb: list[float]

    def minus(self, before: Reading) -> Reading:
        return Reading(
            [a - b for a, b in zip(self.node_cpu, before.node_cpu, strict=True)],
            [a - b for a, b in zip(self.redis_cpu, before.redis_cpu, strict=True)],
            self.published - before.published,
            [a - b for a, b in zip(self.node_rss_mb, before.node_rss_mb, strict=True)],
        )


async def read_all(nodes: Nodes) -> Reading:
    """Read every process's CPU time, memory and the publish calls now."""
    from redis.asyncio import Redis

    redis_cpu, published = [], 0
    for port in nodes.redis_ports:
        r = Redis(port=port)
        try:
            cpu = await r.info("cpu")
            stats = await r.info("commandstats")
        finally:
            await r.aclose()
        redis_cpu.append(float(cpu["used_cpu_user"]) + float(cpu["used_cpu_sys"]))
        for name in ("cmdstat_publish", "cmdstat_spublish"):
            published += int(stats.get(name, {}).get("calls", 0))
    return Reading(
        [process_cpu(pid) or 0.0 for pid in nodes.pids],
        redis_cpu,
        published,
        [rss_mb(pid) or 0.0 for pid in nodes.pids],
    )


async def stored_bytes(nodes: Nodes) -> int:
    """The bytes the keys of every Redis take (``MEMORY USAGE`` of each key, by
    ``SCAN``): what the data costs, without the servers' buffers and overheads. Slow on
    many keys; not to be called while CPU is measured."""
    from redis.asyncio import Redis

    total = 0
    for port in nodes.redis_ports:
        r = Redis(port=port)
        try:
            async for key in r.scan_iter(count=1000):
                total += int(await r.memory_usage(key, samples=0) or 0)
        finally:
            await r.aclose()
    return total


@dataclass
class Placed:
    """Races set up over the nodes: their players (in races) and spectators."""

    line: PingPong
    races: list[list[Client]]
    spectators: list[Client] = field(default_factory=list)

    @property
    def players(self) -> list[Client]:
        return [c for race in self.races for c in race]

    async def close(self) -> None:
        await close_all([*self.players, *self.spectators])


def _node_of(placement: str, race: int, member: int, nodes: int) -> int:
    """The node index of a race's member: the race's own (together) or in turn (spread)."""
    return race % nodes if placement == "together" else member % nodes


async def place_races(
    nodes: Nodes,
    placement: str,
    sizes: Sequence[int],
    *,
    spectators: int = 0,
    tag: str = "",
) -> Placed:
    """Races of ``sizes`` players placed on the nodes (``together`` or ``spread``), each
    started, its opening played; ``spectators`` watch the first race, on the nodes in
    turn."""
    line = find_ping_pong()
    count = len(nodes.urls)
    wanted = [
        (r, m, nodes.urls[_node_of(placement, r, m, count)])
        for r, size in enumerate(sizes)
        for m in range(size)
    ]

    def connect(item: tuple[int, int, str]) -> Any:
        r, m, url = item
        name = f"{tag}r{r}p{m}"
        return connect_client(url, name, resend_after=20.0, max_unread=16, bot=True, affinity=False)

    made = await bounded(wanted, connect, concurrency=100)
    clients = [c for c in made if isinstance(c, Client)]
    if len(clients) != len(wanted):
        raise RuntimeError(
            f"could not connect: {next(c for c in made if not isinstance(c, Client))!r}"
        )
    races: list[list[Client]] = []
    at = 0
    for size in sizes:
        races.append(clients[at : at + size])
        at += size

    async def make(group: list[Client]) -> str:
        code = await group[0].create_race(
            variant=line.variant,
            seed=line.seed,
            max_players=len(group),
            time_limit=3600,
            undo=False,
            countdown=0,
        )
        for c in group[1:]:
            await c.join(code)
        return code

    codes = await bounded(races, make, concurrency=50)
    if not all(isinstance(c, str) for c in codes):
        raise RuntimeError(f"could not set up the races: {codes!r}")
    placed = Placed(line, races)
    watchers = await bounded(
        [nodes.urls[i % count] for i in range(spectators)],
        lambda url: Client.connect(url, name="watcher", affinity=False, max_unread=16),
        concurrency=100,
    )
    placed.spectators = [w for w in watchers if isinstance(w, Client)]
    await bounded(placed.spectators, lambda w: w.join(str(codes[0]), "spectator"), concurrency=100)
    players = placed.players
    await bounded(players, lambda c: c.ready(), concurrency=100)
    await bounded(
        players, lambda c: c.wait_until(lambda x: x.view is not None, timeout=60), concurrency=1000
    )

    async def opening(c: Client) -> None:
        for move in line.opening:
            await c.move(move)

    await bounded(players, opening, concurrency=200)
    return placed


async def play_races(
    placed: Placed, nodes: Nodes, rate: float, seconds: float, warmup: float = 1.0
) -> tuple[Tally, Reading]:
    """Every player sends ``rate`` moves a second (the ping-pong move and back) for
    ``warmup`` + ``seconds``; what was spent in the measured ``seconds``."""
    line, tally = placed.line, Tally()
    readings: list[Reading] = []

    class Meter:
        async def begin(self) -> None:
            readings.append(await read_all(nodes))

        async def end(self) -> None:
            readings.append(await read_all(nodes))

    def sender(c: Client) -> Any:
        async def send(k: int) -> None:
            await c.move(line.there if k % 2 == 0 else line.back)

        return send

    timing = Timing.from_now(warmup, seconds)
    with collector_paused():
        await drive([sender(c) for c in placed.players], rate, timing, tally, meter=Meter())  # type: ignore[arg-type]
    await asyncio.sleep(0)
    return tally, readings[1].minus(readings[0])
