"""The hint corpus: spider4 positions from greedy-bot games, where players ask for hints.

Each game deals a fresh seed (``hint-0``, ``hint-1``, …) and is played by the client
library's :class:`~spider_client.strategies.GreedyBot` (no seed: ties go to the move text,
so a game is the same every time) on the player's view, its moves pushed on the full
position, until the bot gives up, the game is won or :data:`MAX_ACTIONS` actions are made.
Three positions of each game are kept, at a quarter, a half and three quarters of the
actions it lasted: the start of a game, its middle, and its end, where greedy play is
stuck. Every kept position has a legal move (the bot played one from it).

A corpus line is ``<seed> <actions played> <full position>`` in the spec's notation (the
player's view is the position's :meth:`~spider_engine.Board.view`); lines starting with
``#`` are comments. The same seeds give the same text: ``python -m spider_race.hint_corpus
[--games N] [--out FILE]`` writes it (by default the corpus the benchmark reads,
``spider_race/corpus/hints.txt``, from 100 games).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import NamedTuple

from spider_client.strategies import GreedyBot
from spider_engine import Board

__all__ = [
    "GAMES",
    "MAX_ACTIONS",
    "STAGES",
    "VARIANT",
    "CorpusPosition",
    "corpus_lines",
    "default_corpus",
    "game_positions",
    "main",
    "read_corpus",
]

VARIANT = "spider4"
GAMES = 100
"""Games (and fresh seeds) in the committed corpus."""
MAX_ACTIONS = 2_000
"""A game stops after this many actions even if the bot has not given up."""
STAGES = (1, 2, 3)
"""The positions kept from a game of ``n`` actions: after ``n * stage // 4`` actions."""
HEADER = (
    "# spider4 positions from greedy-bot games for the hint benchmark:"
    " seed, actions played, full position",
    "# written by: python -m spider_race.hint_corpus",
)


class CorpusPosition(NamedTuple):
    """One position of the corpus: the game's seed, the actions played to reach it, and
    the full position (what the server knows)."""

    seed: str
    actions: int
    board: Board

    def line(self) -> str:
        """The corpus line of this position."""
        return f"{self.seed} {self.actions} {self.board.text()}"


def game_positions(seed: str, *, variant: str = VARIANT) -> list[CorpusPosition]:
    """The kept positions of the greedy-bot game dealt from ``seed``, earliest first (one
    per stage; fewer when a stage falls on the same action as another or on the game's
    end)."""
    board = Board.deal(variant, seed)
    bot = GreedyBot()
    texts = [board.text()]
    while len(texts) <= MAX_ACTIONS and not board.is_won():
        move = bot(board.view())
        if move is None:
            break
        board.push_text(move)
        texts.append(board.text())
    played = len(texts) - 1
    kept: list[CorpusPosition] = []
    for stage in STAGES:
        actions = played * stage // 4
        if actions < played and (not kept or kept[-1].actions != actions):
            kept.append(CorpusPosition(seed, actions, Board.from_text(texts[actions])))
    return kept


def corpus_lines(games: int = GAMES, *, variant: str = VARIANT) -> Iterator[str]:
    """The corpus's text, line by line (the header comment first): the kept positions of
    the games dealt from seeds ``hint-0`` to ``hint-<games - 1>``."""
    yield from HEADER
    for n in range(games):
        for position in game_positions(f"hint-{n}", variant=variant):
            yield position.line()


def read_corpus(text: str) -> list[CorpusPosition]:
    """The positions of a corpus's text (comment and blank lines skipped). Raises
    :class:`ValueError` (a :class:`~spider_engine.NotationError` for a bad position)
    naming the line that is not a corpus line."""
    positions = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(" ", 2)
        if len(parts) != 3 or not parts[1].isdigit():
            raise ValueError(f"line {number}: not '<seed> <actions> <position>'")
        positions.append(CorpusPosition(parts[0], int(parts[1]), Board.from_text(parts[2])))
    return positions


def default_corpus() -> Path:
    """The committed corpus's file."""
    return Path(str(resources.files("spider_race") / "corpus" / "hints.txt"))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spider_race.hint_corpus",
        description="Write the hint corpus: positions from greedy-bot games on fresh seeds.",
    )
    parser.add_argument("--games", type=int, default=GAMES, help=f"games (default {GAMES})")
    parser.add_argument(
        "--out", default=None, help="file to write (default: the committed corpus; - for stdout)"
    )
    args = parser.parse_args(argv)
    text = "".join(line + "\n" for line in corpus_lines(args.games))
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out or default_corpus()).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
