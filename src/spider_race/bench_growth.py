"""``spider-race bench growth``: how a move's cost grows with the load, one row after another.

The README's table "How cost grows" in one command: each row is one
``spider-race bench server`` run (players and races at one move a second, as fast as acks
come, races of 2, 10 and 16, spectators on one race, idle connections beside the racers),
each with its own echo baseline measured right after it on the same clients, all in one
sitting. Rows run in the table's order and print as they finish, as a Markdown table; a
line on standard error tells which row is under way. ``--row NAME`` (repeatable) runs
those rows only; ``--seconds`` is each run's measured time (15 unless told).

The node's settings come from the environment (``SPIDER_RACE_*``), and ``--this-env``
adds some for every run (the echo baseline reads the same settings). A run that fails
stops the bench with its output; a row whose run had errors (the echo's too), lost an
acked move, or held fewer idle connections than asked, counts in ``rows_failed``, and the
bench exits 1.
"""

from __future__ import annotations

import argparse
import signal
import sys
from dataclasses import dataclass

from .bench_versus import bench_server, env_line, terminated, this_env

__all__ = ["ROWS", "ROW_NAMES", "Row", "run", "table_line", "row_failed", "HEADER"]


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

ROW_NAMES = tuple(r.name for r in ROWS)

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


def _count(figures: dict[str, str], key: str) -> int | None:
    try:
        return int(figures.get(key, "n/a"))
    except ValueError:
        return None


def row_failed(row: Row, figures: dict[str, str]) -> str | None:
    """Why the row's run does not stand (None: it does): errors in it or in its echo
    baseline, fewer moves in Redis than were acked (the warm-up's and the measured ones),
    fewer idle connections held than asked or some lost."""
    for key in ("errors", "baseline_errors"):
        if figures.get(key) != "0":
            return f"{key} {figures.get(key, 'n/a')}"
    moves, warmup = _count(figures, "moves"), _count(figures, "warmup_moves")
    stored = _count(figures, "moves_in_redis")
    if moves is None or warmup is None or stored is None or stored < moves + warmup:
        acked = "n/a" if moves is None or warmup is None else moves + warmup
        return f"acked {acked}, in Redis {figures.get('moves_in_redis', 'n/a')}"
    if "--idle-beside" in row.args:
        asked = int(row.args[row.args.index("--idle-beside") + 1])
        held, lost = _count(figures, "idle_beside"), _count(figures, "idle_beside_lost")
        if held != asked or lost != 0:
            return f"idle connections held {held} of {asked}, lost {lost}"
    return None


def run(args: argparse.Namespace) -> int:
    """Run the rows asked for, one after another; print the table; 1 when a row failed
    (:func:`row_failed`)."""
    # SIGTERM ends the bench as Ctrl-C does: the run under way is stopped
    signal.signal(signal.SIGTERM, terminated)
    settings = this_env(args.this_env, "growth")
    unknown = [n for n in args.row if n not in ROW_NAMES]
    if unknown:
        raise SystemExit(
            f"spider-race bench growth: no row {unknown[0]!r}; the rows: {', '.join(ROW_NAMES)}"
        )
    rows = [r for r in ROWS if not args.row or r.name in args.row]
    seconds = str(args.seconds or 15.0)
    print(env_line(settings))
    print(HEADER)
    sys.stdout.flush()
    failed = 0
    for k, row in enumerate(rows, 1):
        print(f"row {k} of {len(rows)}: {row.name} ({' '.join(row.args)})", file=sys.stderr)
        bench_args = [*row.args, "--seconds", seconds, "--warmup", str(args.warmup)]
        figures = bench_server(bench_args, settings=settings, command="growth")
        print(table_line(row, figures))
        sys.stdout.flush()
        why = row_failed(row, figures)
        if why is not None:
            print(f"row {row.name} failed: {why}", file=sys.stderr)
            failed += 1
    print(f"rows: {len(rows)}")
    print(f"rows_failed: {failed}")
    return 1 if failed else 0
