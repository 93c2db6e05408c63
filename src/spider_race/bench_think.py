"""``spider-race bench hint --think S``: how long a player who thinks waits for a hint.

The server's own hints (:class:`spider_server.runners.hints.Hints`, with the server's default
settings: prefetches of ``hint_budget`` positions, a quick search of ``hint_quick_budget``)
run in this process with one real solver worker process
(:class:`spider_server.workers.SolverWorkers`, at niceness 0: the node is idle here). For each position of the hint corpus, in
turn, as one player of one race: the position's prefetch starts (as after the player's
move), the player thinks ``S`` seconds, then asks; the answer's latency is the time from
asking to the answer (a prefetch finished: about 0; one under way: until it is done or
past the quick budget; else the quick search). Then the next position (the player's
newer position cancels what is left of the older prefetch).

It prints ``key: value`` lines: the answer's wall latency at the 50th, 95th and 99th
percentiles and its maximum; the CPU time the worker spent while the player waited
(read from ``/proc``, where there is one) at the same percentiles; how the answers were
found (``from_finished_prefetch``: the cache; ``from_prefetch_under_way``; ``quick``:
searched when asked); how many were the first move of a winning line; and the worker's
CPU time in all. One line per position goes to standard error.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from .bench_hint import percentile
from .hint_corpus import CorpusPosition, default_corpus, read_corpus

__all__ = ["run"]

RACE, PLAYER = "BENCH", "p-bench"


def _cpu(pid: int) -> float:
    """CPU seconds (user and system) process ``pid`` used, 0 where ``/proc`` is missing."""
    import os

    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _measure(positions: list[CorpusPosition], think: float, budget: int | None) -> int:
    from spider_server.metrics import Metrics
    from spider_server.runners.hints import Hints
    from spider_server.settings import Settings
    from spider_server.workers import SolverWorkers, WorkerSettings

    # the node's process is idle here: the worker need not yield the core to it
    settings = Settings(solver_workers=1, solver_warm=1, solver_nice=0, prefetch_per_race=10**8)
    if budget:
        settings = settings.replace(hint_budget=budget)
    metrics = Metrics(process=False)
    async with SolverWorkers(WorkerSettings.from_settings(settings)) as workers:
        hints = Hints(workers, settings, metrics)
        first = positions[0].board
        await workers.suggest(first.view_text(), first.text(), 1, player="warm-up")
        wall: list[float] = []
        cpu: list[float] = []
        won = 0
        for entry in positions:
            full = entry.board
            position, view = full.text(), full.view_text()
            hints.prefetch(RACE, PLAYER, position)
            await asyncio.sleep(think)
            [pid] = workers.pids() or [0]
            before_cpu, before = _cpu(pid), time.perf_counter()
            found = await hints.answer(RACE, PLAYER, view, position)
            wall.append(time.perf_counter() - before)
            cpu.append(max(0.0, _cpu(pid) - before_cpu) if workers.pids() == [pid] else 0.0)
            won += found.verdict == "won"
            print(
                f"  {entry.seed} {entry.actions}: {found.verdict} {' '.join(found.moves) or '-'}"
                f" wall_s={wall[-1]:.3f}",
                file=sys.stderr,
                flush=True,
            )
        hints.forget(RACE, PLAYER)
        n = len(positions)
        how = metrics.hints_total
        print(f"positions: {n}")
        print(f"think_s: {think:g}")
        print(f"budget: {settings.hint_budget} (quick {hints.quick})")
        for name, values in (("wall", wall), ("worker_cpu", cpu)):
            figures = [f"p{p}={percentile(values, p):.3f}" for p in (50, 95, 99)]
            print(f"answer_{name}_s: {' '.join(figures)} max={max(values):.3f}")
        print(f"from_finished_prefetch: {how['cache']}/{n}")
        print(f"from_prefetch_under_way: {how['prefetch']}/{n}")
        print(f"quick: {how['quick']}/{n}")
        print(f"solver_won: {won}/{n}")
        print(f"worker_cpu_s_total: {workers.cpu_seconds:.1f}")
    return 0


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
    if args.think < 0:
        print("error: --think: 0 or more seconds", file=sys.stderr)
        return 2
    print(f"corpus: {path.name}")
    return asyncio.run(_measure(positions, args.think, args.budget))
