"""Acceptance: a recorded bot run raced as a ghost by another bot (scripts/ghost_timing.py),
its progress on the recorded times, and on through a node's SIGKILL from the other node."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "ghost_timing.py"


def run(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=240
    )
    print(done.stdout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def check(out: str, actions: int) -> None:
    # every recorded action (the bot's moves, at most ``actions``, then its resign) once
    # and in order
    found = re.search(r"recorded run: ([0-9]+) actions", out)
    assert found is not None
    recorded = int(found.group(1))
    assert min(actions, 10) < recorded <= actions + 1
    assert f"ghost actions seen: {recorded} of {recorded}, each once and in order: True" in out
    assert "the finished race's ghost replay is the recorded run: True" in out
    p99 = float(re.search(r"p99 (-?[0-9.]+) ms", out).group(1))  # type: ignore[union-attr]
    assert p99 < 2000  # a bound no machine misses; the figure itself is printed


def test_a_ghost_runs_on_its_recorded_times() -> None:
    check(run("--actions", "16", "--pause", "0.04"), 16)


def test_a_ghost_goes_on_from_another_node_after_sigkill() -> None:
    out = run("--actions", "16", "--pause", "0.04", "--kill")
    check(out, 16)
    assert re.search(r"takeover window: [0-9]+ ms", out)


@pytest.mark.slow
def test_the_full_ghost_demonstration() -> None:
    check(run("--actions", "120", "--pause", "0.05"), 120)
    check(run("--actions", "120", "--pause", "0.05", "--kill"), 120)
