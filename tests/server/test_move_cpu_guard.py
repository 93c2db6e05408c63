"""The guard on a move's CPU: this tree's server against the commit in ``bench/reference``,
measured in turns in one sitting (``spider-race bench versus``).

The long run (``make acceptance``) fails when the node's CPU per move is more than 15 %
above the reference's; the short one (``make test``) runs both sides with tiny numbers and
checks the bench measured each from its own code, and that it fails when told to hold a
limit no server can meet (so the guard can fail)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spider_race.bench_versus import this_env, turn_order


def _versus(*args: str, timeout: float) -> tuple[int, dict[str, str], str]:
    done = subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "bench", "versus", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    out = done.stdout + done.stderr
    figures = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    return done.returncode, figures, out


def test_versus_measures_both_sides_and_can_fail() -> None:
    status, figures, out = _versus(
        "--players", "4", "--races", "2", "--rate", "20", "--seconds", "1", "--warmup", "0.5",
        "--rounds", "1", "--tolerance", "-0.99", "--this-env", "SPIDER_RACE_STORE_LAYOUT=2",
        timeout=240,
    )  # fmt: skip
    # each side's node ran from its own tree: the reference's from the worktree
    assert figures["reference_server"] != figures["this_server"], out
    assert "reference" in figures["reference_server"], out
    assert figures["errors"] == "0", out
    assert figures["this_env"] == "SPIDER_RACE_STORE_LAYOUT=2", out  # this side's only
    for side in ("reference", "this"):
        assert float(figures[f"{side}_server_cpu_ms_per_move"]) > 0, out
        assert float(figures[f"{side}_moves_per_s"]) > 0, out
        assert float(figures[f"{side}_pair_ratio"]) > 0, out  # against its own run's echo
    # a limit of 1 % of the reference's CPU cannot be met: the guard fails
    assert float(figures["server_cpu_ratio"]) > float(figures["server_cpu_limit"]), out
    assert status == 1, out


def test_a_setting_for_this_side_is_checked_before_anything_runs() -> None:
    assert this_env(["SPIDER_RACE_STORE_LAYOUT=2", "SPIDER_RACE_RATE=5"]) == {
        "SPIDER_RACE_STORE_LAYOUT": "2",
        "SPIDER_RACE_RATE": "5",
    }
    for bad in ("STORE_LAYOUT=2", "SPIDER_RACE_STORE_LAYOUT", "SPIDER_RACE_=1"):
        status, _, out = _versus("--this-env", bad, timeout=60)
        assert status != 0 and f"--this-env {bad!r}: give SPIDER_RACE_<NAME>=<value>" in out


def test_rounds_take_the_sides_in_turns_abba() -> None:
    """A drift of the machine's speed through a sitting weighs on both sides alike."""
    sides = ["reference", "this"]
    runs = [side for k in range(4) for side in turn_order(sides, k)]
    assert runs == ["reference", "this", "this", "reference"] * 2
    assert sides == ["reference", "this"]  # the caller's list is left as it was


@pytest.mark.slow
def test_a_move_costs_the_node_no_more_than_the_reference() -> None:
    status, figures, out = _versus(
        "--players", "200", "--races", "20", "--rate", "5", "--seconds", "10",
        "--rounds", "3",
        timeout=1200,
    )  # fmt: skip
    print(out)
    assert figures["errors"] == "0", out
    assert float(figures["server_cpu_ratio"]) <= 1.15, out
    assert status == 0, out
