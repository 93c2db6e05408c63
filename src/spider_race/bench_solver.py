"""``spider-race bench solver``: how many fresh deals the solver settles, and how fast.

For each variant — by default the three Spiders (spider1, spider2, spider4) and the four
alternative decks (myrmex, wizard, sparrow, starfish); ``--variant`` names one, options
included (``wizard+weave``) — it solves ``--deals`` fresh seeded deals (seeds ``solver-0``,
``solver-1``, …) with the larger budget and reads the smaller budget's figures from the same
runs: the search is deterministic and a budget only cuts it short, so a deal settled within
167,000 positions is settled by a run with that budget. Every winning line is replayed to a
win before it counts. Each variant prints the same ``key: value`` lines, prefixed with its
id.

It also counts the deals won within 1, 4 and 20 CPU-seconds each (``time.process_time`` of
the solve, in the process that solves it) and the positions per CPU-second. Deals are solved
one at a time in this process, or ``--jobs N`` at a time in N worker processes (one a core:
a deal's CPU-seconds are its own either way). Without
``--budget`` a deal's search goes on until it is settled or both 1,000,000 positions and
20 CPU-seconds have passed, so that every figure is what that limit alone gives; with
``--budget`` no search goes past it (a deal it cuts short is not won within the
CPU-seconds either).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple

from spider_engine import Board
from spider_engine.solver import Solution, solve

__all__ = ["run"]

SMALL_BUDGET = 167_000
LARGE_BUDGET = 1_000_000
UNCAPPED = 1_000_000_000
"""The budget of a search without ``--budget`` (it stops past both limits first)."""
ANCHOR = "a well-known online Spider game's solver settled 17 of 100 fresh spider4 deals at 167,000"
CPU_LIMITS = (1, 4, 20)
"""CPU-seconds per deal: the figures ``won_within_<N>_cpu_s``."""
VARIANTS = ("spider1", "spider2", "spider4", "myrmex", "wizard", "sparrow", "starfish")
"""The variants measured without ``--variant``."""


class _Enough(Exception):
    """Raised from a search's progress callback: both limits have passed."""


def _solve(board: Board, budget: int | None) -> tuple[Solution | None, float, int]:
    """The solution (None when stopped past both limits), its CPU-seconds and positions."""
    start = time.process_time()
    counted = 0

    def progress(positions: int) -> None:
        nonlocal counted
        counted = positions
        if positions >= LARGE_BUDGET and time.process_time() - start > CPU_LIMITS[-1]:
            raise _Enough

    try:
        solution = solve(board, budget=budget or UNCAPPED, progress=progress)
    except _Enough:
        return None, time.process_time() - start, counted
    return solution, time.process_time() - start, solution.positions


class _Deal(NamedTuple):
    """One deal's result: its verdict, positions, wall and CPU seconds, and whether the
    winning line (if any) replayed to a win."""

    verdict: str
    positions: int
    seconds: float
    cpu_seconds: float
    replays: bool


def _deal(variant: str, n: int, budget: int | None) -> _Deal:
    """Solve the fresh deal ``solver-<n>`` and replay its line."""
    board = Board.deal(variant, f"solver-{n}")
    start = time.perf_counter()
    stopped, cpu, counted = _solve(board, budget)
    elapsed = time.perf_counter() - start
    solution = stopped or Solution("unknown", counted)
    replays = True
    if solution.verdict == "won":
        replay = board.copy()
        for move in solution.line:
            replay.push(move)
        replays = replay.is_won()
    return _Deal(solution.verdict, solution.positions, elapsed, cpu, replays)


def _deals(variant: str, deals: int, budget: int | None, jobs: int) -> Iterator[_Deal]:
    """Each deal's result in the order of the seeds."""
    if jobs <= 1:
        for n in range(deals):
            yield _deal(variant, n, budget)
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(_deal, variant, n, budget) for n in range(deals)]
        for future in futures:
            yield future.result()


def run(args: argparse.Namespace) -> int:
    variants = [args.variant] if args.variant else list(VARIANTS)
    large = args.budget or LARGE_BUDGET
    small = min(SMALL_BUDGET, large)
    deals = args.deals
    jobs = max(1, getattr(args, "jobs", 1) or 1)
    print(f"deals_per_variant: {deals}")
    print(f"budgets: {small} {large}")
    print(f"jobs: {jobs}")
    print(f"anchor: {ANCHOR}")
    for variant in variants:
        settled_small = won_small = settled_large = won_large = 0
        positions = 0
        times: list[float] = []
        cpu_times: list[float] = []
        won_within = dict.fromkeys(CPU_LIMITS, 0)
        for n, solution in enumerate(_deals(variant, deals, args.budget, jobs)):
            if not solution.replays:  # pragma: no cover - would be a solver bug
                print(f"error: the line for {variant} solver-{n} does not win", file=sys.stderr)
                return 1
            cpu = solution.cpu_seconds
            times.append(solution.seconds)
            cpu_times.append(cpu)
            positions += solution.positions
            for limit in CPU_LIMITS:
                won_within[limit] += solution.verdict == "won" and cpu <= limit
            settled = solution.verdict in ("won", "lost") and solution.positions <= large
            settled_large += settled
            won_large += settled and solution.verdict == "won"
            if settled and solution.positions <= small:
                settled_small += 1
                won_small += solution.verdict == "won"
            print(
                f"  {variant} solver-{n}: {solution.verdict} positions={solution.positions}"
                f" seconds={solution.seconds:.1f} cpu_seconds={cpu:.1f}",
                file=sys.stderr,
                flush=True,
            )
        total = sum(times)
        print(f"{variant}_settled_at_{small}: {settled_small}/{deals}")
        print(f"{variant}_won_at_{small}: {won_small}/{deals}")
        print(f"{variant}_settled_at_{large}: {settled_large}/{deals}")
        print(f"{variant}_won_at_{large}: {won_large}/{deals}")
        print(f"{variant}_positions_per_s: {positions / total:,.0f}")
        for limit in CPU_LIMITS:
            print(f"{variant}_won_within_{limit}_cpu_s: {won_within[limit]}/{deals}")
        print(f"{variant}_positions_per_cpu_s: {positions / max(sum(cpu_times), 1e-9):,.0f}")
        print(f"{variant}_median_cpu_s_per_deal: {statistics.median(cpu_times):.2f}")
        print(f"{variant}_median_s_per_deal: {statistics.median(times):.2f}")
        print(f"{variant}_slowest_s_per_deal: {max(times):.2f}")
        sys.stdout.flush()
    return 0
