"""The command line itself: help for every argument, ``--version``, ``python -m``."""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import metadata

from spider_race import cli


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1
    return dict(actions[0].choices)


def test_every_argument_of_every_command_has_help() -> None:
    parser = cli.build_parser()
    commands = _subcommands(parser)
    expected = {"deal", "moves", "apply", "solve", "serve", "bot", "play", "watch", "demo"}
    assert expected | {"bench"} <= set(commands)
    missing = []
    for name, sub in [("spider-race", parser), *commands.items()]:
        for action in sub._actions:
            if isinstance(action, argparse._SubParsersAction):
                continue
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}")
    assert missing == []
    # and each command says what it is for in the list of commands
    choices = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert {c.dest for c in choices._choices_actions if c.help} == set(commands)


def test_version_is_the_installed_distributions() -> None:
    expected = metadata.version("spider-race")
    done = subprocess.run(
        [sys.executable, "-m", "spider_race", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"spider-race {expected}\n"
    assert cli.version() == expected


def test_python_m_spider_race_runs_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "spider_race", "deal", "spider1", "1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    from spider_engine import Board

    assert done.stdout == Board.deal("spider1", "1").text() + "\n"
