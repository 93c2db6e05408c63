"""``spider-race bench affinity``: pub/sub messages per move with and without race
affinity, on two node processes and one Redis.

``--players N`` bots in ``--races M`` races send ``--rate R`` moves a second each for
``--seconds T`` (after a second of warm-up), twice, on new races each time: first with
every member of a race on one node (``together``: what a load balancer hashing on
``?race=CODE`` gives), then with the members of each race alternating between the two
nodes (``spread``). It prints, for each, the moves acked, the ``PUBLISH`` calls Redis made
in the measured time (``INFO commandstats``) and their number per move, and the CPU
milliseconds per move of the two nodes together and of Redis. A race watched from one
node only publishes nothing (the commit script publishes only for a race another node
watches), so ``together`` should publish about nothing and ``spread`` about one message
per event.
"""

from __future__ import annotations

import argparse
import urllib.parse

from .multinode import place_races, play_races, start_nodes
from .processes import Processes
from .tools import shares

__all__ = ["bench_affinity", "per_move"]


def per_move(value: float, moves: int, scale: float = 1.0) -> str:
    """``value`` × ``scale`` per move, as printed (``n/a`` without moves)."""
    return "n/a" if not moves else f"{value * scale / moves:.3f}"


async def bench_affinity(args: argparse.Namespace, procs: Processes) -> int:
    """Run both placements and print the figures."""
    rate = 1.0 if args.rate == "max" else float(args.rate)
    players, races = args.players, max(1, min(args.races, args.players))
    sizes = [s for s in shares(players, races) if s > 0]
    redis_url = args.redis or procs.start_redis()
    port = urllib.parse.urlsplit(redis_url).port or 6379
    nodes = await start_nodes(procs, redis_url, [port], 2, max(sizes))
    print(f"players: {players}")
    print(f"races: {len(sizes)}")
    print(f"rate: {rate:g}")
    for placement in ("together", "spread"):
        placed = await place_races(nodes, placement, sizes, tag=placement[0])
        try:
            tally, spent = await play_races(placed, nodes, rate, args.seconds)
        finally:
            await placed.close()
        moves = tally.moves
        print(f"{placement}_moves: {moves}")
        print(f"{placement}_errors: {tally.errors}")
        print(f"{placement}_published: {spent.published}")
        print(f"{placement}_published_per_move: {per_move(spent.published, moves)}")
        print(f"{placement}_nodes_cpu_ms_per_move: {per_move(sum(spent.node_cpu), moves, 1000)}")
        print(f"{placement}_redis_cpu_ms_per_move: {per_move(sum(spent.redis_cpu), moves, 1000)}")
    return 0
