"""``spider-race bench growth``: how a move's cost grows with the load, one row after another.

The README's table "How cost grows" in one command: each row is one
``spider-race bench server`` run (players and races at one move a second, as fast as acks
come, races of 2, 10 and 16, spectators on one race, idle connections beside the racers),
each with its own echo baseline measured right after it on the same clients, all in one
sitting. Rows run in the order given and print as they finish, as a Markdown table; a
line on standard error tells which row is under way. ``--row NAME`` (repeatable) runs
those rows only; ``--seconds`` is each run's measured time (15 unless told).

The node's settings come from the environment (``SPIDER_RACE_*``), and ``--this-env``
adds some for this bench's nodes. A run that fails stops the bench with its output.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass

from .bench_versus import this_env

__all__ = ["ROWS", "Row", "run", "table_line", "HEADER"]


@dataclass(frozen=True)
class Row:
    name: str
    label: str
    args: tuple[str, ...]


def _load(players: int, races: int, rate: str = "1", *more: str) -> tuple[str, ...]:
    return ("--players", str(players), "--races", str(races), "--rate", rate, *more)


ROWS = (
    Row("p100", "100 players, races of 10, 1 move/s", _load(100, 10)),
    Row("p1000", "1,000 players, races of 10, 1 move/s", _load(1000, 100)),
    Row("p2000", "2,000 players, races of 10, 1 move/s", _load(2000, 200)),
    Row("max", "1,000 players, races of 10, as fast as acks come", _load(1000, 100, "max")),
    Row("races2", "races of 2", _load(1000, 500)),
    Row("races16", "races of 16", _load(1008, 63)),
    Row("one", "one race of 10, no spectators", _load(10, 1)),
    Row("watch100", "the same with 100 spectators", _load(10, 1, "1", "--spectators", "100")),
    Row("watch1000", "the same with 1,000 spectators", _load(10, 1, "1", "--spectators", "1000")),
    Row(
        "idle",
        "10,000 idle connections beside 1,000 racing",
        _load(1000, 100, "1", "--idle-beside", "10000"),
    ),
    Row(
        "fast",
        "200 players, races of 10, 20 spectators, as fast as acks come",
        _load(200, 20, "max", "--spectators", "20"),
    ),
)
"""The rows, in the order they run."""

HEADER = (
    "| load | moves/s | node ms/move | Valkey ms/move | ack p50 / p99 ms "
    "| echo: server + Redis ms/message | echo ack p99 ms | pair |\n"
    "|---|---|---|---|---|---|---|---|"
)


def _num(figures: dict[str, str], key: str, digits: int) -> str:
    value = figures.get(key, "n/a")
    try:
        return f"{float(value):,.{digits}f}"
    except ValueError:
        return value


def table_line(row: Row, figures: dict[str, str]) -> str:
    """The row's line of the table, from its run's printed figures."""
    moves = _num(figures, "moves_per_s", 0)
    if row.args[row.args.index("--rate") + 1] == "max":
        moves += f" (echo {_num(figures, 'baseline_per_s', 0)})"
    acks = f"{_num(figures, 'ack_p50_ms', 1)} / {_num(figures, 'ack_p99_ms', 1)}"
    if figures.get("event_p99_ms", "n/a") != "n/a":
        acks += f"; event p99 {_num(figures, 'event_p99_ms', 1)}"
    echo = (
        f"{_num(figures, 'baseline_server_cpu_ms_per_message', 3)} + "
        f"{_num(figures, 'baseline_redis_cpu_ms_per_message', 3)}"
    )
    cells = [
        f"{row.label} (`{' '.join(row.args)}`)",
        moves,
        _num(figures, "server_cpu_ms_per_move", 3),
        _num(figures, "redis_cpu_ms_per_move", 3),
        acks,
        echo,
        _num(figures, "baseline_ack_p99_ms", 1),
        _num(figures, "pair_ratio", 2),
    ]
    return "| " + " | ".join(cells) + " |"


def _bench(args: list[str], settings: dict[str, str]) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "bench", "server", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **settings},
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"spider-race bench growth: a run failed:\n{done.stdout}{done.stderr}")
    return dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)


def run(args: argparse.Namespace) -> int:
    """Run the rows asked for, one after another; print the table; 1 when a run had errors
    or lost an acked move."""
    settings = this_env(args.this_env)
    names = [r.name for r in ROWS]
    unknown = [n for n in args.row if n not in names]
    if unknown:
        raise SystemExit(
            f"spider-race bench growth: no row {unknown[0]!r}; the rows: {', '.join(names)}"
        )
    rows = [r for r in ROWS if not args.row or r.name in args.row]
    seconds = str(args.seconds or 15.0)
    shown_env = " ".join(f"{k}={v}" for k, v in settings.items())
    print(f"this_env: {shown_env or 'none'}")
    print(HEADER)
    sys.stdout.flush()
    failed = 0
    for k, row in enumerate(rows, 1):
        print(f"row {k} of {len(rows)}: {row.name} ({' '.join(row.args)})", file=sys.stderr)
        figures = _bench([*row.args, "--seconds", seconds, "--warmup", str(args.warmup)], settings)
        print(table_line(row, figures))
        sys.stdout.flush()
        acked = int(figures.get("moves", "0")) + int(figures.get("warmup_moves", "0"))
        if figures.get("errors") != "0" or int(figures.get("moves_in_redis", "-1")) < acked:
            print(f"row {row.name}: errors {figures.get('errors')}, acked {acked}, "
                  f"in Redis {figures.get('moves_in_redis')}", file=sys.stderr)  # fmt: skip
            failed += 1
    print(f"rows: {len(rows)}")
    print(f"rows_failed: {failed}")
    return 1 if failed else 0
