"""The server bench runs with tiny numbers and prints its figures (never judged on speed)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def _figures(*args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "bench", "server", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=None if env is None else {**os.environ, **env},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)


def test_bench_server_players() -> None:
    figures = _figures(
        "--players", "4", "--races", "2", "--spectators", "2", "--stalled", "1",
        "--rate", "max", "--seconds", "1", "--warmup", "0.5",
    )  # fmt: skip
    for key in (
        "moves_per_s", "ack_p50_ms", "ack_p99_ms", "event_p99_ms", "connections",
        "server_rss_mb", "errors", "moves_in_redis", "baseline_per_s", "ratio", "pair_ratio",
    ):  # fmt: skip
        assert key in figures, (key, figures)
    assert figures["errors"] == "0"
    assert figures["connections"] == "7"
    assert int(figures["moves"]) > 0 and int(figures["warmup_moves"]) > 0
    # every move acked, measured or in the warm-up, is in Redis once
    assert int(figures["moves_in_redis"]) == int(figures["moves"]) + int(figures["warmup_moves"])
    assert float(figures["baseline_per_s"]) > 0
    assert float(figures["pair_ratio"]) > 0  # a figure, whatever the machine
    # the spectators (in a worker process) got progress of moves of the measured time
    assert int(figures["events_measured"]) > 0
    # what a one-second run can promise: the stalled spectator was backlogged on the server
    # when the measured time began, frames queued for it, and the others' deliveries in its
    # race went on meanwhile. Whether each slice followed the plan (the slowdown trusted)
    # is judged by the long run below, in `make acceptance`: slices of a few hundredths of
    # a second on a busy machine are not.
    assert figures["stalled_backlogged_at_start"] == "1"
    assert int(figures["stalled_backlog_frames"]) > 0
    seen = int(figures["events_stalled_away"]) + int(figures["events_stalled_watching"])
    assert seen > 0, figures
    assert "/" in figures["stalled_slices_as_planned"]  # printed, judged in the long run


@pytest.mark.slow
def test_bench_server_stalled_spectator_follows_its_plan() -> None:
    """The long run: slices of about two seconds, each as planned, the slowdown trusted."""
    figures = _figures(
        "--players", "8", "--races", "2", "--spectators", "2", "--stalled", "1",
        "--rate", "20", "--seconds", "16", "--warmup", "1",
    )  # fmt: skip
    assert figures["errors"] == "0", figures
    assert figures["stalled_backlogged_at_start"] == "1"
    assert figures["stalled_backlogged_watching"] == "1"
    assert figures["stalled_slices_as_planned"] == "8/8", figures
    for key in ("event_p99_ms_stalled_away", "event_p99_ms_stalled_watching"):
        assert float(figures[key]) > 0, (key, figures)
    for key in ("events_stalled_away", "events_stalled_watching"):
        assert int(figures[key]) > 0, (key, figures)
    assert figures["stalled_slowdown_pct"] != "n/a", figures  # the run is trusted
    float(figures["stalled_slowdown_pct"])
    for key in ("server_cpu_ms_per_move_stalled_away", "server_cpu_ms_per_move_stalled_watching"):
        assert float(figures[key]) > 0, (key, figures)


def test_bench_server_idle() -> None:
    figures = _figures("--idle", "30", "--seconds", "0.5")
    assert figures["connections"] == "30" and figures["errors"] == "0"
    assert float(figures["server_rss_mb"]) > 0


def test_bench_server_solver_load() -> None:
    figures = _figures(
        "--players", "2", "--races", "1", "--rate", "20", "--seconds", "4",
        "--warmup", "0.5", "--hint-spam", "1", "--pool-refill",
    )  # fmt: skip
    assert figures["errors"] == "0" and figures["solver_load_errors"] == "0", figures
    assert figures["hint_spammers"] == "1" and figures["pool_refill"] == "yes"
    assert int(figures["hints_answered"]) >= 0 and int(figures["hints_refused"]) >= 0
    assert figures["connections"] == "4"  # the players, the spammer, the honest hinter
    # both halves measured, and the solver was at work in the second one
    assert int(figures["acks_quiet"]) > 0 and int(figures["acks_loaded"]) > 0
    # (a count over the half, not one instant: the job running at its end may have just
    # finished on a busy machine)
    at_work = sum(
        int(figures[key])
        for key in (
            "solver_jobs_completed_loaded",
            "solver_jobs_running_at_end",
            "solver_jobs_preempted_loaded",
        )
    )
    assert at_work >= 1, figures
    for key in ("ack_p99_ms_quiet", "ack_p99_ms_loaded", "solver_load_ratio"):
        assert float(figures[key]) > 0, (key, figures)
    # the honest player's hints: timed in the quiet half (the loaded half may be too short
    # for the spammer's first hints and one of its own: printed, judged in the long run)
    assert int(figures["honest_hints_quiet"]) >= 1, figures
    assert float(figures["honest_hint_ms_p50_quiet"]) > 0, figures
    assert figures["honest_hint_errors"] == "0", figures
    for key in ("honest_hints_loaded", "honest_hint_ms_p50_loaded", "honest_hint_ratio"):
        assert key in figures, (key, figures)


@pytest.mark.slow
def test_bench_server_honest_hint_keeps_its_pace_beside_four_spammers() -> None:
    """The long run: four players spam hints at new positions; the honest player's hint,
    asked every few seconds after a move, within 2x its quiet time (medians, one run)."""
    figures = _figures(
        "--players", "4", "--races", "2", "--rate", "5", "--seconds", "60",
        "--warmup", "1", "--hint-spam", "4",
    )  # fmt: skip
    assert figures["errors"] == "0" and figures["solver_load_errors"] == "0", figures
    assert figures["honest_hint_errors"] == "0", figures
    assert int(figures["honest_hints_quiet"]) >= 3, figures
    assert int(figures["honest_hints_loaded"]) >= 3, figures
    assert int(figures["solver_jobs_running_at_end"]) >= 1, figures  # the spam ran on
    assert float(figures["honest_hint_ratio"]) <= 2.0, figures


def test_bench_server_pars() -> None:
    """Two races finished one after another, each waited for until its par lands (a small
    par budget: the figures, not the search, are what is checked here)."""
    figures = _figures(
        "--players", "2", "--races", "1", "--rate", "20", "--seconds", "2",
        "--warmup", "0.5", "--pars", "2",
        env={"SPIDER_RACE_PAR_BUDGET": "2000"},
    )  # fmt: skip
    assert figures["errors"] == "0" and figures["solver_load_errors"] == "0", figures
    assert figures["pars_asked"] == "2" and figures["pars_landed"] == "2", figures
    assert float(figures["par_cpu_s_total"]) > 0, figures  # the workers searched them
    assert float(figures["par_wait_s_total"]) > 0, figures
    assert float(figures["par_wait_to_cpu_ratio"]) > 0, figures


def test_bench_server_players_beside_idle_connections() -> None:
    figures = _figures(
        "--players", "4", "--races", "2", "--rate", "10", "--seconds", "1", "--warmup", "0.5",
        "--idle-beside", "50",
    )  # fmt: skip
    assert figures["errors"] == "0", figures
    assert figures["idle_beside"] == "50", figures  # every idle client said hello
    assert figures["idle_beside_lost"] == "0", figures  # and was still there at the end
    assert int(figures["moves"]) > 0, figures
