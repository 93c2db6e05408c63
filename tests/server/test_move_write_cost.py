"""The measure of a move's write against leaner layouts (scripts/move_write_cost.py) runs
the node's own action script with the arguments a node sends, and counts each layout's
commands from the server's statistics."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "move_write_cost.py"


def _measure(*args: str) -> str:
    """What the script prints with ``args`` (it fails the test when it fails)."""
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout


def test_each_layout_commits_every_move_and_its_commands_are_counted() -> None:
    out = _measure("--races", "5", "--moves", "200", "--batch", "4", "--rounds", "2")
    # every move of every call was applied (the program asserts each reply), in turns
    rounds = re.findall(r"^round (\d): (\w+) +[\d.]+ us of Valkey CPU a move$", out, re.M)
    names = ["now", "layout2", "compact", "log", "floor", "echo"]
    assert rounds == [("1", n) for n in names] + [("2", n) for n in reversed(names)]
    found = {
        name: (float(ratio), float(commands))
        for name, ratio, commands in re.findall(
            r"^(\w+) +median +[\d.]+ us a move \(([\d.]+) of now\), ([\d.]+) commands a move$",
            out,
            re.M,
        )
    }
    assert set(found) == set(names)
    assert found["now"][0] == 1.0
    # the node's script: the race's state and watchers read and its version written once a
    # call (four moves, each of another race), the game read and written, the action, its
    # time, ack and entry, the standing move, the depth's copy, the event (12 a move; a
    # mark's position every 32nd standing move, none in 40 moves a player)
    assert found["now"][1] == 12.0
    assert found["layout2"][1] == 10.0  # the time in the action's entry; no depth's copy
    assert found["compact"][1] == 8.0
    assert found["log"][1] == 6.0
    assert found["floor"][1] == 2.0  # the game read and written, nothing else
    assert found["echo"][1] == 3.0  # MULTI, INCR, EXEC a move, each move alone


def test_with_and_without_the_append_only_file_each_layout_runs_the_same_commands() -> None:
    out = _measure(
        "--races", "5", "--moves", "120", "--batch", "4", "--rounds", "1", "--aof", "both"
    )
    rounds = re.findall(r"^round 1: ([\w/-]+) +[\d.]+ us of Valkey CPU a move$", out, re.M)
    assert rounds == [
        "now", "now/no-aof", "layout2", "layout2/no-aof", "compact", "compact/no-aof", "log",
        "log/no-aof", "floor", "floor/no-aof", "echo", "echo/no-aof",
    ]  # fmt: skip
    commands = dict(
        re.findall(
            r"^([\w/-]+) +median +[\d.]+ us a move \([\d.]+ of now\), ([\d.]+) commands", out, re.M
        )
    )
    assert commands == {
        "now": "12.0", "now/no-aof": "12.0", "layout2": "10.0", "layout2/no-aof": "10.0",
        "compact": "8.0", "compact/no-aof": "8.0",
        "log": "6.0", "log/no-aof": "6.0", "floor": "2.0", "floor/no-aof": "2.0",
        "echo": "3.0", "echo/no-aof": "3.0",
    }  # fmt: skip
