"""``spider-race bench``: benchmarks are programs that print figures.

``bench server`` is in :mod:`.bench_server`, ``bench solver`` in :mod:`.bench_solver`,
``bench hint`` in :mod:`.bench_hint` (with ``--think``, :mod:`.bench_think`); ``bench par`` in
:mod:`.bench_par`; ``bench affinity`` and ``bench capacity`` (two node processes) in
:mod:`.bench_server.affinity` and :mod:`.bench_server.capacity`; ``bench archive`` in
:mod:`.bench_archive`.

``bench engine`` plays random games from seeded ``spider4`` deals (at least 100 deals, with
play after stock deals), keeps the positions met on the way, and measures on them, on one
core:

- legal move generations per second, with a checksum of the moves generated;
- push+pop pairs per second;
- the same two figures for a baseline measured in the same run: brute force (every
  candidate move tried with ``is_legal``) for generation, and copy-then-push (a fresh
  copy of the position for each move, no undo) for push+pop; ``ratio`` lines compare.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import time
from collections.abc import Callable

from spider_engine import Board, Move

__all__ = ["run", "engine_positions"]


def engine_positions(deals: int, *, variant: str = "spider4", seed: int = 2026) -> list[Board]:
    """Positions from random play of ``deals`` seeded deals: a random number of steps
    (0-150) each, deals included whenever the random choice takes one."""
    rng = random.Random(seed)
    boards = []
    for n in range(deals):
        board = Board.deal(variant, f"bench-{n}")
        steps = rng.randrange(0, 151)
        for _ in range(steps):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        boards.append(board)
    return boards


def _measure(fn: Callable[[], int], seconds: float) -> tuple[float, int]:
    """Run ``fn`` (which returns a count of operations) repeatedly for about ``seconds``;
    operations per second and the total count."""
    total = 0
    start = time.perf_counter()
    elapsed = 0.0
    while elapsed < seconds:
        total += fn()
        elapsed = time.perf_counter() - start
    return total / elapsed, total


def _brute_force_moves(board: Board) -> list[Move]:
    n = len(board.cols)
    moves = [Move.deal()] if board.is_legal(Move.deal()) else []
    for src in range(n):
        for count in range(1, len(board.cols[src]) + 1):
            for dst in range(n):
                move = Move.column_move(src, count, dst)
                if src != dst and board.is_legal(move):
                    moves.append(move)
    return moves


def bench_engine(args: argparse.Namespace) -> int:
    deals = max(100, args.deals)
    seconds = 2.0 if args.seconds is None else args.seconds
    boards = engine_positions(deals)
    after_deal = sum(1 for b in boards if b.deals_left() < 5)
    move_lists = [list(b.legal_moves) for b in boards]
    checksum = hashlib.sha256(
        "\n".join(" ".join(sorted(m.text() for m in ms)) for ms in move_lists).encode()
    ).hexdigest()[:16]
    assert all(
        sorted(_brute_force_moves(b)) == sorted(ms)
        for b, ms in zip(boards, move_lists, strict=True)
    )

    def generate() -> int:
        for b in boards:
            for _ in b.generate_moves():
                pass
        return len(boards)

    def brute() -> int:
        for b in boards:
            _brute_force_moves(b)
        return len(boards)

    def push_pop() -> int:
        count = 0
        for b, ms in zip(boards, move_lists, strict=True):
            for m in ms:
                b.push_unchecked(m)
                b.pop()
            count += len(ms)
        return count

    def copy_push() -> int:
        count = 0
        for b, ms in zip(boards, move_lists, strict=True):
            for m in ms:
                b.copy().push_unchecked(m)
            count += len(ms)
        return count

    gen_rate, _ = _measure(generate, seconds)
    brute_rate, _ = _measure(brute, seconds / 2)
    pp_rate, _ = _measure(push_pop, seconds)
    copy_rate, _ = _measure(copy_push, seconds / 2)
    print("variant: spider4")
    print(f"deals: {deals}")
    print(f"positions: {len(boards)}")
    print(f"positions_after_a_stock_deal: {after_deal}")
    print(f"moves_per_position: {sum(map(len, move_lists)) / len(boards):.1f}")
    print(f"moves_checksum: {checksum}")
    print(f"generations_per_s: {gen_rate:,.0f}")
    print(f"baseline_brute_force_generations_per_s: {brute_rate:,.0f}")
    print(f"ratio_generations: {gen_rate / brute_rate:.1f}")
    print(f"push_pop_per_s: {pp_rate:,.0f}")
    print(f"baseline_copy_push_per_s: {copy_rate:,.0f}")
    print(f"ratio_push_pop: {pp_rate / copy_rate:.1f}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.what == "engine":
        return bench_engine(args)
    if args.what == "server":
        from .bench_server import run as bench_server

        if args.seconds is None:
            # a p99 over halves of a few seconds is one stray pause: the solver load's
            # halves are 30 seconds each unless told
            loaded = (
                getattr(args, "hint_spam", 0)
                or getattr(args, "pool_refill", False)
                or getattr(args, "pars", 0)
            )
            args.seconds = 60.0 if loaded else 10.0
        return bench_server(args)
    if args.what == "versus":
        from .bench_versus import run as bench_versus

        bench_args = ["--players", str(args.players), "--races", str(args.races)]
        bench_args += ["--spectators", str(args.spectators), "--rate", str(args.rate)]
        bench_args += ["--seconds", str(args.seconds or 10.0), "--warmup", str(args.warmup)]
        if args.idle:
            bench_args += ["--idle", str(args.idle)]
        return bench_versus(args, bench_args)
    if args.what == "growth":
        from .bench_growth import run as bench_growth

        return bench_growth(args)
    if args.what in ("affinity", "capacity"):
        from .bench_server.modes import run_nodes

        if args.seconds is None:
            args.seconds = 10.0
        return run_nodes(args)
    if args.what == "signin":
        from .bench_signin import run as bench_signin

        return bench_signin(args)
    if args.what == "archive":
        from .bench_archive import run as bench_archive

        if args.seconds is None:
            args.seconds = 10.0
        return bench_archive(args)
    if args.what == "solver":
        from .bench_solver import run as bench_solver

        return bench_solver(args)
    if args.what == "hint" and getattr(args, "think", None) is not None:
        from .bench_think import run as bench_think

        return bench_think(args)
    if args.what == "hint":
        from .bench_hint import run as bench_hint

        return bench_hint(args)
    if args.what == "par":
        from .bench_par import run as bench_par

        return bench_par(args)
    raise AssertionError(args.what)  # pragma: no cover
