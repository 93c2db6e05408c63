"""``spider-race bench signin`` runs with tiny numbers and prints every figure, each sane
(never judged on speed: no figure is compared with a time)."""

from __future__ import annotations

import os
import subprocess
import sys


def test_bench_signin_tiny() -> None:
    done = subprocess.run(
        [
            sys.executable, "-m", "spider_race.cli", "bench", "signin",
            "--hashes", "2", "--accounts", "3", "--signins", "6", "--clients", "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        # quick parameters: the figures' meaning, not their size, is checked here
        env={**os.environ, "SPIDER_RACE_ARGON2_MEMORY": "1024", "SPIDER_RACE_ARGON2_TIME_COST": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    figures = dict(line.split(": ", 1) for line in done.stdout.splitlines() if ": " in line)
    assert figures["argon2id"].startswith("time_cost 1, memory 1024 KiB"), figures
    assert figures["signups"] == "3 of 3" and figures["signins_ok"] == "6 of 6", figures
    # every wrong password refused as such (401), none let through, none backed off
    assert figures["failed_signins_refused"] == "6 of 6", figures
    for key in (
        "hash_cpu_ms", "verify_cpu_ms", "node_cpu_ms_per_signup", "node_cpu_ms_per_signin",
        "node_cpu_ms_per_failed_signin", "signins_per_s",
    ):  # fmt: skip
        assert float(figures[key]) >= 0, (key, figures)
    assert float(figures["hash_cpu_ms"]) > 0 and float(figures["signins_per_s"]) > 0
