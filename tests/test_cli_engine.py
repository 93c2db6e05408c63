"""The engine commands of the command line: output, reading stdin, bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spider_engine import Board
from spider_race.cli import main

DEAL1 = Board.deal("spider4", "1").text()


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spider_race.cli", *argv],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_deal_prints_the_position(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deal", "spider4", "1"]) == 0
    assert capsys.readouterr().out == DEAL1 + "\n"


def test_apply_and_moves(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apply", DEAL1, "d1j", "+"]) == 0
    after = capsys.readouterr().out.strip()
    board = Board.deal("spider4", "1")
    board.push_text("d1j")
    board.push_text("+")
    assert after == board.text()
    assert main(["moves", board.view_text()]) == 0
    assert capsys.readouterr().out == "+ b1d b1f e1d e1f\n"


def test_moves_reads_positions_from_stdin() -> None:
    positions = [Board.deal("spider1", str(s)).text() for s in range(3)]
    proc = subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "moves"],
        input="\n".join(positions) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines == [" ".join(Board.from_text(p).legal_moves.texts()) for p in positions]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["deal", "spider9", "1"], "unknown variant"),
        (["deal", "spider4+relaxed+open", "1"], "alphabetical"),
        (["moves", "spider4 nonsense"], "4 fields"),
        (["apply", DEAL1, "d1j", "zz"], "move 2 (zz): malformed move"),
        (["apply", DEAL1, "a1b"], "illegal move a1b"),
        (["apply", Board.deal("spider4", "1").view_text(), "d1j"], "does not know"),
        (["moves", DEAL1.replace("|Qh/", "|/", 1)], "face-down"),
    ],
)
def test_bad_input_is_one_line_and_status_2(argv: list[str], needle: str) -> None:
    proc = run(*argv)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_bad_line_on_stdin_names_the_line() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "spider_race.cli", "moves"],
        input=DEAL1 + "\nspider4 x\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout.count("\n") == 1
    assert "line 2" in proc.stderr


def test_solve_prints_verdict_positions_and_a_winning_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "spider1", "3", "--budget", "100000"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "won"
    assert lines[1].startswith("positions: ")
    assert 0 < int(lines[1].split(": ")[1]) <= 100_000
    assert lines[2].startswith("line: ")
    board = Board.deal("spider1", "3")
    for text in lines[2].removeprefix("line: ").split(" "):
        board.push_text(text)
    assert board.is_won()


def test_solve_a_position_within_a_small_budget(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "--position", DEAL1, "--budget", "50"]) == 0
    assert capsys.readouterr().out.splitlines() == ["unknown", "positions: 50"]


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["solve"], "give VARIANT SEED"),
        (["solve", "spider4", "1", "--position", DEAL1], "not both"),
        (["solve", "--position", Board.deal("spider4", "1").view_text()], "full position"),
        (["solve", "spider4", "1", "--budget", "0"], "at least 1"),
    ],
)
def test_solve_bad_input(argv: list[str], needle: str) -> None:
    proc = run(*argv)
    assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr
