"""``spider-race bench growth``: the README's table "How cost grows" from one command.

The short run measures one small row for a second (the whole table is ``spider-race bench
growth``, about ten minutes); the rest checks how a run's figures become the row's line,
which runs fail their row, and that bad row names are refused before anything runs."""

from __future__ import annotations

import re
import subprocess
import sys

from spider_race.bench_growth import HEADER, ROW_NAMES, ROWS, Row, row_failed, table_line


def _growth(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "bench", "growth", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _row(name: str) -> Row:
    return next(r for r in ROWS if r.name == name)


def _cells(line: str) -> list[str]:
    assert line.startswith("| ") and line.endswith(" |"), line
    return [c.strip() for c in line[2:-2].split(" | ")]


def test_a_row_runs_and_prints_its_line() -> None:
    done = _growth(
        "--row", "one", "--seconds", "1", "--warmup", "0.5",
        "--this-env", "SPIDER_RACE_STORE_LAYOUT=2",
        timeout=300,
    )  # fmt: skip
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    lines = done.stdout.splitlines()
    assert "this_env: SPIDER_RACE_STORE_LAYOUT=2" in lines, out
    header = HEADER.splitlines()
    at = lines.index(header[0])
    assert lines[at + 1] == header[1], out
    cells = _cells(lines[at + 2])
    assert cells[0].startswith("one race of 10, no spectators (`--players 10 --races 1"), out
    assert len(cells) == len(_cells(header[0])), out
    assert float(cells[1]) > 0  # moves a second
    assert float(cells[2]) > 0 and float(cells[3]) > 0  # the node's and Valkey's CPU a move
    p50, p99 = (float(x) for x in cells[4].split(" / "))
    assert 0 < p50 <= p99
    assert float(cells[7]) > 0  # the pair against its own run's echo
    assert "rows: 1" in lines and "rows_failed: 0" in lines, out
    assert "row 1 of 1: one (--players 10 --races 1 --rate 1)" in done.stderr, out


def test_a_line_is_its_runs_figures() -> None:
    fast = _row("fast")
    figures = {
        "moves_per_s": "2767.4",
        "baseline_per_s": "4051.2",
        "server_cpu_ms_per_move": "0.2712",
        "redis_cpu_ms_per_move": "0.0931",
        "ack_p50_ms": "69.04",
        "ack_p99_ms": "126.3",
        "event_p99_ms": "100.26",
        "baseline_server_cpu_ms_per_message": "0.241",
        "baseline_redis_cpu_ms_per_message": "0.0204",
        "baseline_ack_p99_ms": "105.0",
        "pair_ratio": "1.3789",
    }
    cells = _cells(table_line(fast, figures))
    assert cells == [
        "200 players, races of 10, 20 spectators, as fast as acks come "
        "(`--players 200 --races 20 --rate max --spectators 20`)",
        "2,767 (echo 4,051)",
        "0.271",
        "0.093",
        "69.0 / 126.3; event p99 100.3",
        "0.241 + 0.020",
        "105.0",
        "1.38",
    ]
    one = _row("one")
    cells = _cells(table_line(one, {**figures, "event_p99_ms": "n/a", "pair_ratio": "n/a"}))
    assert cells[1] == "2,767"  # at one move a second the echo's rate is the same
    assert cells[4] == "69.0 / 126.3"  # no spectators: no event p99
    assert cells[7] == "n/a"


def test_every_row_is_named_in_the_help_and_unknown_ones_are_refused() -> None:
    assert tuple(r.name for r in ROWS) == ROW_NAMES
    assert len(set(ROW_NAMES)) == len(ROW_NAMES)
    shown = subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "bench", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    found = re.search(
        r"growth: this row only \(repeatable\): ([\w, ]+?) --", " ".join(shown.split())
    )
    assert found is not None, shown
    assert [n.strip() for n in found[1].split(",")] == list(ROW_NAMES)
    done = _growth("--row", "one", "--row", "nosuch", timeout=60)
    assert done.returncode != 0
    assert f"no row 'nosuch'; the rows: {', '.join(ROW_NAMES)}" in done.stderr
    assert "row 1 of" not in done.stderr  # refused before anything ran
    done = _growth("--row", "one", "--this-env", "STORE_LAYOUT=2", timeout=60)
    assert done.returncode != 0
    assert "spider-race bench growth: --this-env 'STORE_LAYOUT=2'" in done.stderr


def test_a_row_fails_on_errors_lost_moves_or_idle_connections_missing() -> None:
    one = _row("one")
    idle = _row("idle")
    healthy = {
        "errors": "0",
        "baseline_errors": "0",
        "moves": "150",
        "warmup_moves": "20",
        "moves_in_redis": "170",
    }
    assert row_failed(one, healthy) is None
    assert row_failed(one, {**healthy, "errors": "2"}) == "errors 2"
    assert row_failed(one, {**healthy, "baseline_errors": "1"}) == "baseline_errors 1"
    assert row_failed(one, {**healthy, "moves_in_redis": "169"}) == "acked 170, in Redis 169"
    assert row_failed(one, {**healthy, "moves_in_redis": "n/a"}) == "acked 170, in Redis n/a"
    no_count = {k: v for k, v in healthy.items() if k != "moves"}
    assert row_failed(one, no_count) == "acked n/a, in Redis 170"  # what was acked unknown
    del healthy["errors"]
    assert row_failed(one, healthy) == "errors n/a"  # a run that printed no count
    healthy["errors"] = "0"
    assert row_failed(idle, healthy) == "idle connections held None of 10000, lost None"
    held = {**healthy, "idle_beside": "10000", "idle_beside_lost": "0"}
    assert row_failed(idle, held) is None
    assert row_failed(idle, {**held, "idle_beside": "9998"}) is not None
    assert row_failed(idle, {**held, "idle_beside_lost": "3"}) is not None
