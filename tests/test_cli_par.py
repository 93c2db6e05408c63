"""``spider-race par``, ``solve --shortest`` and ``bench par``: output, and bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spider_engine import Board
from spider_race.cli import main


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spider_race.cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )


def wins(variant: str, seed: str, texts: list[str]) -> bool:
    board = Board.deal(variant, seed)
    for text in texts:
        board.push_text(text)
    return board.is_won()


def test_par_prints_the_line_and_its_length_against_the_first(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["par", "spider1", "par-1", "--budget", "8000"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "won"
    assert 0 < int(lines[1].removeprefix("positions: ")) <= 8000
    texts = lines[2].removeprefix("line: ").split(" ")
    assert wins("spider1", "par-1", texts)
    assert lines[3] == f"par: {len(texts)}"
    first = int(lines[4].removeprefix("first: "))
    assert len(texts) < first


def test_solve_shortest_prints_the_par_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "spider1", "par-1", "--budget", "8000"]) == 0
    first = capsys.readouterr().out.splitlines()[2].removeprefix("line: ").split(" ")
    assert main(["solve", "spider1", "par-1", "--budget", "8000", "--shortest"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "won" and lines[1].startswith("positions: ")
    shortest = lines[2].removeprefix("line: ").split(" ")
    assert wins("spider1", "par-1", shortest) and len(shortest) < len(first)
    assert len(lines) == 3


def test_par_of_a_deal_the_solver_does_not_settle(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par", "spider4", "1", "--budget", "50"]) == 0
    assert capsys.readouterr().out.splitlines() == ["unknown", "positions: 50"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["par", "spider9", "1"], "unknown variant"),
        (["par", "spider4", "1", "--budget", "0"], "at least 1"),
        (
            ["solve", "--position", Board.deal("spider4", "1").view_text(), "--shortest"],
            "full position",
        ),
    ],
)
def test_bad_input_is_one_line_and_status_2(argv: list[str], needle: str) -> None:
    proc = run(*argv)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_par_needs_variant_and_seed() -> None:
    proc = run("par", "spider4")
    assert proc.returncode == 2 and "seed" in proc.stderr and "Traceback" not in proc.stderr


def test_every_argument_has_help() -> None:
    for command in ("par", "solve"):
        proc = run(command, "--help")
        assert proc.returncode == 0
        for name in ("variant", "seed", "--budget"):
            line = next(x for x in proc.stdout.splitlines() if x.strip().startswith(name))
            assert len(line.split()) > 1, line
    assert "--shortest" in run("solve", "--help").stdout


def test_bench_par_prints_a_row_per_variant(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "par", "--deals", "2", "--variant", "spider1", "--budget", "5000"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    figures = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert figures["budget"] == "5000"
    assert figures["spider1_with_par"] == "2/2"
    assert figures["spider1_without_par"] == "0/2"
    assert float(figures["spider1_mean_par"]) <= float(figures["spider1_mean_first"])
    assert 0 < int(figures["spider1_positions"]) <= 10_000
    assert "| spider1 | 2/2 | 0/2 |" in out
    assert "spider1 par-0: won par=" in err
