"""``spider-race bench versus``: this tree's server against a reference commit's, in turns.

The machine's speed moves from hour to hour, so a figure measured today says nothing beside
one measured yesterday; two servers measured in turns, in one sitting, under the same
clients, do. This bench checks the reference commit (named in ``bench/reference``, or
``--reference``) out into a temporary worktree and runs ``spider-race bench server`` with
the given arguments ``--rounds`` times for each side, alternating (the reference first in
the first round, then each round in the other order: ABBA, so that a drift of the
machine's speed through the sitting weighs on both sides alike). The
bench's clients, the baseline and the engine are this checkout's in every run: only the server
node's code (``server/`` and ``client/``, the protocol it speaks) changes sides, through
the node's ``PYTHONPATH``.

``--this-env NAME=VALUE`` (repeatable) gives this tree's node a ``SPIDER_RACE_*`` setting
the reference's runs without; with ``--reference HEAD`` both sides run the same code, and
the comparison is the setting's alone.

It prints each run's figures, then each side's median (``…_pair_ratio``: the node's and
its Redis's CPU per move over the echo baseline's pair per message, measured in the same
run) and ``server_cpu_ratio`` (this tree's median node CPU per move over the
reference's), and exits 1 when the ratio is over
``1 + --tolerance`` (0.15: the node's CPU per move grew more than 15 %). ``make
acceptance`` runs it as a guard (``tests/server/test_move_cpu_guard.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = [
    "run",
    "reference_commit",
    "turn_order",
    "this_env",
    "env_line",
    "bench_server",
    "terminated",
    "SERVER_PATH_ENV",
]

SERVER_PATH_ENV = "SPIDER_BENCH_SERVER_PATH"
"""The bench's server node runs with this ``PYTHONPATH`` when set (the other side's code)."""

REFERENCE_FILE = Path("bench") / "reference"

FIGURES = (
    "server_cpu_ms_per_move",
    "redis_cpu_ms_per_move",
    "ack_p99_ms",
    "moves_per_s",
    "baseline_server_cpu_ms_per_message",
    "baseline_redis_cpu_ms_per_message",
    "baseline_ack_p99_ms",
    "pair_ratio",
)


def _root() -> Path:
    """The checkout this bench runs from (it needs git and the project's sources)."""
    here = Path(__file__).resolve().parent
    done = subprocess.run(
        ["git", "-C", str(here), "rev-parse", "--show-toplevel"],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit("spider-race bench versus: runs in a git checkout of the project")
    return Path(done.stdout.strip())


def reference_commit(root: Path) -> str:
    """The commit named in ``bench/reference`` (its first line that is not a comment)."""
    path = root / REFERENCE_FILE
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            return line.split()[0]
    raise SystemExit(f"spider-race bench versus: no commit in {REFERENCE_FILE}")


def _server_path(tree: Path) -> str:
    """The node's ``PYTHONPATH`` for a tree's server; the engine is the one this bench
    imports (built, compiled or not, as ``make`` left it) on both sides."""
    import spider_engine

    engine = Path(spider_engine.__file__).resolve().parent.parent
    return os.pathsep.join(str(p) for p in (tree / "server", tree / "client", engine))


def _where(path: str) -> str:
    """Where the node's code is imported from under ``path`` (checked before measuring)."""
    done = subprocess.run(
        [sys.executable, "-c", "import spider_server; print(spider_server.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": path},
    )
    return done.stdout.strip()


def this_env(given: list[str], command: str = "versus") -> dict[str, str]:
    """The ``--this-env`` settings, checked: each ``SPIDER_RACE_<NAME>=<value>``."""
    out: dict[str, str] = {}
    for item in given:
        name, sep, value = item.partition("=")
        if not sep or not name.startswith("SPIDER_RACE_") or name == "SPIDER_RACE_":
            raise SystemExit(
                f"spider-race bench {command}: --this-env {item!r}: give SPIDER_RACE_<NAME>=<value>"
            )
        out[name] = value
    return out


def env_line(settings: dict[str, str]) -> str:
    """The ``this_env`` line a bench prints: its ``--this-env`` settings, or none."""
    shown = " ".join(f"{k}={v}" for k, v in settings.items())
    return f"this_env: {shown or 'none'}"


def bench_server(
    bench_args: list[str],
    server_path: str | None = None,
    settings: dict[str, str] | None = None,
    *,
    command: str = "versus",
) -> dict[str, str]:
    """One ``bench server`` run (with the node on ``server_path`` when given, and
    ``settings`` in its environment); its printed figures. Stopped (Ctrl-C, SIGTERM), it
    stops the run, which stops its own server and Redis."""
    env = {**os.environ, **(settings or {})}
    if server_path is not None:
        env[SERVER_PATH_ENV] = server_path
    child = subprocess.Popen(
        [sys.executable, "-m", "spider_race.cli", "bench", "server", *bench_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        out, err = child.communicate()
    except BaseException:  # stopped: the run stops its own server and Redis on SIGTERM
        child.terminate()
        try:
            child.wait(15)
        except subprocess.TimeoutExpired:
            child.kill()
        raise
    if child.returncode != 0:
        raise SystemExit(f"spider-race bench {command}: a run failed:\n{out}{err}")
    return dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)


def _median(runs: list[dict[str, str]], key: str) -> float | None:
    values = []
    for figures in runs:
        try:
            values.append(float(figures.get(key, "n/a")))
        except ValueError:
            return None
    return statistics.median(values) if values else None


def turn_order(sides: list[str], k: int) -> list[str]:
    """The sides in the order round ``k`` (from 0) runs them: as given in even rounds,
    the other way in odd ones (ABBA), so that a machine that slows down or speeds up
    through the sitting favours neither side."""
    return list(sides) if k % 2 == 0 else list(reversed(sides))


def terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def run(args: argparse.Namespace, bench_args: list[str]) -> int:
    """Alternate the two servers ``args.rounds`` times each; print; 1 when over tolerance."""
    # SIGTERM ends the bench as Ctrl-C does: the run under way is killed and the
    # worktree removed (the ``finally`` below)
    signal.signal(signal.SIGTERM, terminated)
    settings = this_env(args.this_env)
    root = _root()
    commit = args.reference or reference_commit(root)
    rounds = max(1, int(args.rounds))
    folder = Path(tempfile.mkdtemp(prefix="spider-versus-"))
    tree = folder / "reference"
    try:
        added = subprocess.run(
            ["git", "-C", str(root), "worktree", "add", "--detach", str(tree), commit],
            capture_output=True,
            text=True,
            check=False,
        )
        if added.returncode != 0:
            raise SystemExit(
                f"spider-race bench versus: cannot check out {commit}: {added.stderr.strip()}"
            )
        sides = {"reference": _server_path(tree), "this": _server_path(root)}
        print(f"reference: {commit}")
        for side, path in sides.items():
            print(f"{side}_server: {_where(path)}")
        print(env_line(settings))
        runs: dict[str, list[dict[str, str]]] = {side: [] for side in sides}
        for k in range(rounds):
            for side in turn_order(list(sides), k):
                path = sides[side]
                figures = bench_server(bench_args, path, settings if side == "this" else None)
                runs[side].append(figures)
                shown = " ".join(f"{key}={figures.get(key, 'n/a')}" for key in FIGURES)
                print(f"round {k + 1} {side}: {shown} errors={figures.get('errors')}")
                sys.stdout.flush()
        for side in sides:
            for key in FIGURES:
                value = _median(runs[side], key)
                print(f"{side}_{key}: {'n/a' if value is None else f'{value:.3f}'}")
        errors = sum(int(f.get("errors", "1")) for side in runs.values() for f in side)
        print(f"errors: {errors}")
        old = _median(runs["reference"], "server_cpu_ms_per_move")
        new = _median(runs["this"], "server_cpu_ms_per_move")
        if not old or new is None:
            print("server_cpu_ratio: n/a")
            return 1
        ratio = new / old
        print(f"server_cpu_ratio: {ratio:.3f}")
        limit = 1.0 + float(args.tolerance)
        print(f"server_cpu_limit: {limit:.3f}")
        if errors:
            return 1
        return 0 if ratio <= limit else 1
    finally:
        subprocess.run(
            ["git", "-C", str(root), "worktree", "remove", "--force", str(tree)],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(folder, ignore_errors=True)
