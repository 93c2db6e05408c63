"""``spider-race bench capacity``: costs measured on a three-shard cluster and two node
processes on loopback, and the paper model built from them.

Three Valkey masters in cluster mode (:mod:`.cluster`) and two node processes on them; CPU
seconds of every process from ``/proc/<pid>/stat`` (not throughput, which two shared cores
cannot show). Three parts, each on new connections:

1. **Moves**: ``--players N`` bots in races of ten (every member of a race on one node, as
   race affinity gives) send ``--rate R`` moves a second for ``--seconds T``: CPU
   milliseconds per move of each node and each shard, the ``PUBLISH``/``SPUBLISH`` calls
   per move, and the bytes the shards' keys take per race set up and per move
   (``MEMORY USAGE``).
2. **Fan-out**: one show race of ten players at ``--rate`` with ``--spectators S`` (200 by
   default) over both nodes, for T / 2 seconds: the nodes' CPU beyond what part 1's moves
   cost, per spectator and move of the show race (each spectator gets every move's
   ``progress``), and the shard's publish calls per move (each event once per node).
3. **Connections**: ``--idle C`` (1,000 by default) connections that said hello, held on
   one node for 5 s: its resident memory and its CPU per connection and second.

Then the model: node processes, shards and memory for 1,000,000 racers in races of ten at
one move a second, and for 100,000 spectators of one show race, with each core kept below
60 % busy.
"""

from __future__ import annotations

import argparse
import asyncio

from spider_client import Client

from .affinity import per_move
from .cluster import start_shards
from .multinode import place_races, play_races, read_all, start_nodes, stored_bytes
from .processes import Processes
from .tools import bounded, close_all, shares

__all__ = ["bench_capacity", "model"]

BUSY = 0.6
"""The share of a core the model lets each process use."""


def model(
    *,
    node_ms_per_move: float,
    shard_ms_per_move: float,
    spectator_us_per_event: float,
    kib_per_connection: float,
    bytes_per_move: float,
    bytes_per_race: float,
    racers: int = 1_000_000,
    spectators: int = 100_000,
    show_moves_per_s: float = 10.0,
    race_minutes: float = 10.0,
) -> dict[str, float]:
    """The paper model from the measured costs (see the module's docstring)."""
    moves_per_s = float(racers)  # one move a second each
    nodes = moves_per_s * node_ms_per_move / 1000 / BUSY
    shards = moves_per_s * shard_ms_per_move / 1000 / BUSY
    races = racers / 10
    stored = races * bytes_per_race + moves_per_s * race_minutes * 60 * bytes_per_move
    fan_out_cores = spectators * show_moves_per_s * spectator_us_per_event / 1e6
    show_nodes = fan_out_cores / BUSY
    return {
        "racers": racers,
        "moves_per_s": moves_per_s,
        "node_processes": nodes,
        "racers_per_node": racers / max(nodes, 1e-9),
        "node_connection_memory_gib": racers * kib_per_connection / 2**20,
        "shards": shards,
        "moves_per_s_per_shard": moves_per_s / max(shards, 1e-9),
        "redis_memory_gib": stored / 2**30,
        "redis_gib_per_hour_kept": moves_per_s * 3600 * bytes_per_move / 2**30,
        "show_spectators": spectators,
        "show_fan_out_cores": fan_out_cores,
        "show_node_processes": show_nodes,
        "show_connection_memory_gib": spectators * kib_per_connection / 2**20,
        "show_shard_messages_per_s": show_moves_per_s * max(show_nodes, 1.0),
    }


async def _idle(url: str, count: int) -> list[Client]:
    """``count`` connections that said hello to ``url``."""
    made = await bounded(
        [f"idle{i}" for i in range(count)],
        lambda name: Client.connect(url, name=name, affinity=False),
        concurrency=200,
    )
    return [c for c in made if isinstance(c, Client)]


async def bench_capacity(args: argparse.Namespace, procs: Processes) -> int:
    """The three parts and the model; prints ``key: value`` lines."""
    rate = 1.0 if args.rate == "max" else float(args.rate)
    seconds = args.seconds
    players = max(10, args.players)
    sizes = [s for s in shares(players, max(1, players // 10)) if s > 0]
    shards = await start_shards(procs.folder, 3)
    try:
        nodes = await start_nodes(procs, shards.url, shards.ports, 2, 10)
        # 1. moves
        empty = await stored_bytes(nodes)
        placed = await place_races(nodes, "together", sizes, tag="m")
        set_up = await stored_bytes(nodes)
        try:
            tally, spent = await play_races(placed, nodes, rate, seconds)
            after = await stored_bytes(nodes)
        finally:
            await placed.close()
        moves = tally.moves
        stored_moves = moves + tally.warmup_moves
        node_ms = sum(spent.node_cpu) * 1000 / max(moves, 1)
        shard_ms = sum(spent.redis_cpu) * 1000 / max(moves, 1)
        per_race = (set_up - empty) / len(sizes)
        per_move_bytes = (after - set_up) / max(stored_moves, 1)
        print(f"players: {players}")
        print(f"races: {len(sizes)}")
        print(f"moves: {moves}")
        print(f"errors: {tally.errors}")
        for i, cpu in enumerate(spent.node_cpu):
            print(f"node{i + 1}_cpu_ms_per_move: {per_move(cpu, moves, 1000)}")
        for i, cpu in enumerate(spent.redis_cpu):
            print(f"shard{i + 1}_cpu_ms_per_move: {per_move(cpu, moves, 1000)}")
        print(f"nodes_cpu_ms_per_move: {node_ms:.3f}")
        print(f"shards_cpu_ms_per_move: {shard_ms:.3f}")
        print(f"published_per_move: {per_move(spent.published, moves)}")
        print(f"redis_bytes_per_race: {per_race:.0f}")
        print(f"redis_bytes_per_move: {per_move_bytes:.0f}")

        # 2. fan-out: one show race watched from both nodes
        show = await place_races(nodes, "together", [10], spectators=args.spectators, tag="s")
        try:
            show_tally, show_spent = await play_races(show, nodes, rate, seconds / 2)
            watching = len(show.spectators)
        finally:
            await show.close()
        show_moves = show_tally.moves
        beyond = sum(show_spent.node_cpu) - show_moves * node_ms / 1000
        deliveries = show_moves * watching
        spectator_us = beyond * 1e6 / max(deliveries, 1)
        print(f"show_spectators: {watching}")
        print(f"show_moves: {show_moves}")
        print(f"spectator_us_per_event: {spectator_us:.1f}")
        print(f"show_published_per_move: {per_move(show_spent.published, show_moves)}")

        # 3. connections
        before = await read_all(nodes)
        idle = await _idle(nodes.urls[0], args.idle or 1000)
        held = await read_all(nodes)
        await asyncio.sleep(5.0)
        later = await read_all(nodes)
        await close_all(idle)
        count = max(len(idle), 1)
        kib = (held.node_rss_mb[0] - before.node_rss_mb[0]) * 1024 / count
        idle_us = (later.node_cpu[0] - held.node_cpu[0]) * 1e6 / count / 5.0
        print(f"idle_connections: {len(idle)}")
        print(f"kib_per_connection: {kib:.1f}")
        print(f"idle_cpu_us_per_connection_s: {idle_us:.2f}")

        figures = model(
            node_ms_per_move=node_ms,
            shard_ms_per_move=shard_ms,
            spectator_us_per_event=spectator_us,
            kib_per_connection=kib,
            bytes_per_move=per_move_bytes,
            bytes_per_race=per_race,
        )
        for key, value in figures.items():
            print(f"model_{key}: {value:,.1f}")
    finally:
        shards.stop()
    return 0
