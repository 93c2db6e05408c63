"""``spider-race bench solver``: how many fresh deals the solver settles, and how fast.

For each variant — by default the three Spiders (spider1, spider2, spider4) and the four
alternative decks (myrmex, wizard, sparrow, starfish); ``--variant`` names one, options
included (``wizard+weave``) — it solves ``--deals`` fresh seeded deals (seeds ``solver-0``,
``solver-1``, …) with the larger budget and reads the smaller budget's figures from the same
runs: the search is deterministic and a budget only cuts it short, so a deal settled within
167,000 positions is settled by a run with that budget. Every winning line is replayed to a
win before it counts. Each variant prints the same ``key: value`` lines, prefixed with its
id.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from spider_engine import Board
from spider_engine.solver import solve

__all__ = ["run"]

SMALL_BUDGET = 167_000
LARGE_BUDGET = 1_000_000
ANCHOR = "a well-known online Spider game's solver settled 17 of 100 fresh spider4 deals at 167,000"
VARIANTS = ("spider1", "spider2", "spider4", "myrmex", "wizard", "sparrow", "starfish")
"""The variants measured without ``--variant``."""


def run(args: argparse.Namespace) -> int:
    variants = [args.variant] if args.variant else list(VARIANTS)
    large = args.budget or LARGE_BUDGET
    small = min(SMALL_BUDGET, large)
    deals = args.deals
    print(f"deals_per_variant: {deals}")
    print(f"budgets: {small} {large}")
    print(f"anchor: {ANCHOR}")
    for variant in variants:
        settled_small = won_small = settled_large = won_large = 0
        positions = 0
        times: list[float] = []
        for n in range(deals):
            board = Board.deal(variant, f"solver-{n}")
            start = time.perf_counter()
            solution = solve(board, budget=large)
            elapsed = time.perf_counter() - start
            times.append(elapsed)
            positions += solution.positions
            if solution.verdict == "won":
                replay = board.copy()
                for move in solution.line:
                    replay.push(move)
                if not replay.is_won():  # pragma: no cover - would be a solver bug
                    print(f"error: the line for {variant} solver-{n} does not win", file=sys.stderr)
                    return 1
            settled = solution.verdict in ("won", "lost")
            settled_large += settled
            won_large += solution.verdict == "won"
            if settled and solution.positions <= small:
                settled_small += 1
                won_small += solution.verdict == "won"
            print(
                f"  {variant} solver-{n}: {solution.verdict} positions={solution.positions}"
                f" seconds={elapsed:.1f}",
                file=sys.stderr,
                flush=True,
            )
        total = sum(times)
        print(f"{variant}_settled_at_{small}: {settled_small}/{deals}")
        print(f"{variant}_won_at_{small}: {won_small}/{deals}")
        print(f"{variant}_settled_at_{large}: {settled_large}/{deals}")
        print(f"{variant}_won_at_{large}: {won_large}/{deals}")
        print(f"{variant}_positions_per_s: {positions / total:,.0f}")
        print(f"{variant}_median_s_per_deal: {statistics.median(times):.2f}")
        print(f"{variant}_slowest_s_per_deal: {max(times):.2f}")
        sys.stdout.flush()
    return 0
