"""``spider-race bench hint``: how long a hint takes on positions of real games.

It answers, in this one process, the hint the server answers
(:func:`spider_engine.solver.suggest`, with the player's view and the full position) on
every position of the hint corpus (``--corpus``, by default the committed one: spider4
positions from greedy-bot games, see :mod:`spider_race.hint_corpus`) within ``--budget``
positions (by default the server's ``hint_budget`` default), and prints ``key: value``
lines: the CPU time of one hint (``time.process_time``, the primary figure, since the
machine may be shared) at the 50th, 90th, 95th and 99th percentiles and its maximum, the
same for the wall time, positions searched per CPU second, and how many hints were the
first move of a winning line (``solver_won``) rather than the players' ranking, split by
the solver's verdict (``fallback_lost``: no line wins; ``fallback_unknown``: the budget ran
out first). One line per position goes to standard error as it is answered.

The search is deterministic and a budget only cuts it short, so the hints won within a
smaller budget are read from the same run: ``solver_won_at_<b>`` for a half and a quarter
of the budget.

With ``--think S`` it measures instead what a player who thinks sees, as the server
answers (``spider_race.bench_think``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from spider_engine.solver import suggest

from .hint_corpus import default_corpus, read_corpus

__all__ = ["percentile", "run", "server_hint_budget"]

PERCENTILES = (50, 90, 95, 99)


def percentile(values: list[float], p: float) -> float:
    """The ``p``-th percentile of ``values`` (nearest rank: the smallest value that at
    least ``p`` percent of the values do not exceed)."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil(n * p / 100), at least 1
    return ordered[int(rank) - 1]


def server_hint_budget() -> int:
    """The budget measured without ``--budget``: the server's ``hint_budget`` default."""
    from spider_server.settings import Settings

    return Settings().hint_budget


def run(args: argparse.Namespace) -> int:
    path = Path(args.corpus) if args.corpus else default_corpus()
    try:
        positions = read_corpus(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"error: {path}: {exc}", file=sys.stderr)
        return 2
    if not positions:
        print(f"error: {path}: no positions", file=sys.stderr)
        return 2
    budget = args.budget or server_hint_budget()
    cpu: list[float] = []
    wall: list[float] = []
    searched: list[int] = []  # positions searched by the hints the solver won
    verdicts = {"won": 0, "lost": 0, "unknown": 0}
    total_positions = 0
    for entry in positions:
        full = entry.board
        view = full.view()
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        hint = suggest(view, full=full, budget=budget)
        cpu.append(time.process_time() - start_cpu)
        wall.append(time.perf_counter() - start_wall)
        total_positions += hint.positions
        verdict = "won" if hint.won else hint.verdict
        verdicts[verdict] = verdicts.get(verdict, 0) + 1
        if hint.won:
            searched.append(hint.positions)
        move = hint.move.text() if hint.move is not None else "-"
        print(
            f"  {entry.seed} {entry.actions}: {verdict} {move} positions={hint.positions}"
            f" cpu_s={cpu[-1]:.3f}",
            file=sys.stderr,
            flush=True,
        )
    n = len(positions)
    print(f"corpus: {path.name}")
    print(f"positions: {n}")
    print(f"budget: {budget}")
    for name, values in (("cpu", cpu), ("wall", wall)):
        figures = [f"p{p}={percentile(values, p):.3f}" for p in PERCENTILES]
        print(f"{name}_s_per_hint: {' '.join(figures)} max={max(values):.3f}")
    print(f"positions_per_cpu_s: {total_positions / max(sum(cpu), 1e-9):,.0f}")
    print(f"solver_won: {verdicts['won']}/{n}")
    print(f"fallback_lost: {verdicts['lost']}/{n}")
    print(f"fallback_unknown: {verdicts['unknown']}/{n}")
    for smaller in (budget // 2, budget // 4):
        won = sum(1 for s in searched if s <= smaller)
        print(f"solver_won_at_{smaller}: {won}/{n}")
    return 0
