"""The engine's commands: ``deal``, ``moves``, ``apply``, ``solve`` and ``par``.

Each prints one line per answer on standard output. Bad input prints one line on standard
error naming what is wrong and exits with status 2; never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TextIO

from spider_engine import Board, EngineError, Move

__all__ = ["run"]


def run(
    args: argparse.Namespace, *, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    out = stdout or sys.stdout
    try:
        if args.command == "deal":
            print(Board.deal(args.variant, args.seed).text(), file=out)
        elif args.command == "apply":
            board = Board.from_text(args.position)
            for i, text in enumerate(args.moves, start=1):
                try:
                    board.push(Move.from_text(text))
                except EngineError as exc:
                    raise EngineError(f"move {i} ({text}): {exc}") from None
            print(board.text(), file=out)
        elif args.command == "solve":
            return _solve(args, out)
        elif args.command == "par":
            return _par(args, out)
        elif args.command == "moves":
            if args.position is not None:
                print(" ".join(Board.from_text(args.position).legal_moves.texts()), file=out)
            else:
                source = stdin or sys.stdin
                for number, line in enumerate(source, start=1):
                    text = line.rstrip("\r\n")
                    try:
                        moves = Board.from_text(text).legal_moves.texts()
                    except EngineError as exc:
                        raise EngineError(f"line {number}: {exc}") from None
                    print(" ".join(moves), file=out)
                    out.flush()
        else:  # pragma: no cover
            raise AssertionError(args.command)
    except EngineError as exc:
        print(f"spider-race {args.command}: {exc}", file=sys.stderr)
        return 2
    return 0


def _solve(args: argparse.Namespace, out: TextIO) -> int:
    """First line the verdict, then ``positions: N``, then for a win ``line: `` and the
    moves; progress goes to standard error on long searches."""
    from spider_engine.solver import solve

    if args.position is not None:
        if args.variant is not None:
            raise EngineError("give either VARIANT SEED or --position, not both")
        board = Board.from_text(args.position)
    elif args.variant is None or args.seed is None:
        raise EngineError("give VARIANT SEED, or --position POSITION")
    else:
        board = Board.deal(args.variant, args.seed)
    if args.budget < 1:
        raise EngineError("--budget must be at least 1")
    progress, done = _progress(args.budget)
    if args.shortest:
        from spider_engine.par import par

        found = par(board, budget=args.budget, progress=progress)
        verdict, positions, texts = found.verdict, found.positions, found.texts()
    else:
        solution = solve(board, budget=args.budget, progress=progress)
        verdict, positions, texts = solution.verdict, solution.positions, solution.texts()
    done(positions)
    print(verdict, file=out)
    print(f"positions: {positions}", file=out)
    if verdict == "won":
        print("line: " + " ".join(texts), file=out)
    return 0


def _par(args: argparse.Namespace, out: TextIO) -> int:
    """Like ``solve --shortest`` for a deal, then ``par: N`` (the par line's length) and
    ``first: N`` (the length of the solver's first line); a deal without a win prints its
    verdict and positions only."""
    from spider_engine.par import par

    board = Board.deal(args.variant, args.seed)
    if args.budget < 1:
        raise EngineError("--budget must be at least 1")
    progress, done = _progress(args.budget)
    found = par(board, budget=args.budget, progress=progress)
    done(found.positions)
    print(found.verdict, file=out)
    print(f"positions: {found.positions}", file=out)
    if found.verdict == "won":
        print("line: " + " ".join(found.texts()), file=out)
        print(f"par: {found.length}", file=out)
        print(f"first: {found.first_length}", file=out)
    return 0


def _progress(budget: int) -> tuple[Callable[[int], None], Callable[[int], None]]:
    """A progress callback that shows the positions counted on a terminal's standard
    error, and what ends its line once the search is over."""
    show = sys.stderr.isatty()

    def progress(positions: int) -> None:
        if show:
            print(f"\rsearching: {positions:,} of {budget:,} positions", end="", file=sys.stderr)

    def done(positions: int) -> None:
        if show and positions >= 10_000:
            print(file=sys.stderr)

    return progress, done
