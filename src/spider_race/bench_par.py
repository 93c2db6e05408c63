"""``spider-race bench par``: the par of fresh deals against the solver's first line.

For each variant — by default the three Spiders and the four other decks (as ``bench
solver``); ``--variant`` names one, options included (``wizard+weave``) — it computes the
par (:func:`spider_engine.par.par`) of ``--deals`` fresh seeded deals (seeds ``par-0``,
``par-1``, …) within ``--budget`` positions each. Every par line is replayed to a win from
the deal before it counts; a deal whose par line would not win, or would be longer than the
solver's first line, stops the run with an error. Each variant prints the same ``key: value``
lines, prefixed with its id (lengths in moves; ``n/a`` without a deal with par), and the run
ends with a Markdown table of them.
"""

from __future__ import annotations

import argparse
import sys
import time

from spider_engine import Board
from spider_engine.par import ParResult, par

from .bench_solver import VARIANTS

__all__ = ["run", "replays_to_a_win", "DEFAULT_BUDGET"]

DEFAULT_BUDGET = 200_000


def replays_to_a_win(deal: Board, found: ParResult) -> bool:
    """Whether the par line, replayed with the board's own rules, wins from ``deal``."""
    board = deal.copy()
    for move in found.line:
        board.push(move)  # raises on an illegal move
    return board.is_won()


def _mean(values: list[int]) -> str:
    return f"{sum(values) / len(values):.1f}" if values else "n/a"


def run(args: argparse.Namespace) -> int:
    variants = [args.variant] if args.variant else list(VARIANTS)
    budget = args.budget or DEFAULT_BUDGET
    deals = args.deals
    print(f"deals_per_variant: {deals}")
    print(f"budget: {budget}")
    rows = []
    for variant in variants:
        pars: list[int] = []
        firsts: list[int] = []
        shorter = positions = 0
        seconds = 0.0
        for n in range(deals):
            seed = f"par-{n}"
            deal = Board.deal(variant, seed)
            start = time.perf_counter()
            found = par(deal, budget=budget)
            elapsed = time.perf_counter() - start
            seconds += elapsed
            positions += found.positions
            if found.verdict == "won":
                first = found.first_length or 0
                if not replays_to_a_win(deal, found) or len(found.line) > first:
                    print(f"error: the par line of {variant} {seed} is wrong", file=sys.stderr)
                    return 1
                pars.append(len(found.line))
                firsts.append(first)
                shorter += len(found.line) < first
            detail = (
                f" par={found.length} first={found.first_length}"
                if found.length is not None
                else ""
            )
            print(
                f"  {variant} {seed}: {found.verdict}{detail} positions={found.positions}"
                f" seconds={elapsed:.1f}",
                file=sys.stderr,
                flush=True,
            )
        row = {
            "with_par": f"{len(pars)}/{deals}",
            "without_par": f"{deals - len(pars)}/{deals}",
            "shorter": f"{shorter}/{len(pars)}",
            "mean_par": _mean(pars),
            "mean_first": _mean(firsts),
            "positions": f"{positions}",
            "seconds": f"{seconds:.0f}",
        }
        for name, value in row.items():
            print(f"{variant}_{name}: {value}")
        rows.append((variant, row))
        sys.stdout.flush()
    print()
    print(
        "| variant | with par | without par | shorter | mean par | mean first line | positions | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for variant, row in rows:
        print(f"| {variant} | " + " | ".join(row.values()) + " |")
    return 0
