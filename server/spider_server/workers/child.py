"""A solver worker process: it reads jobs from its pipe and answers each on the same pipe.

This module runs in the worker (started by :mod:`.pool` with the ``spawn`` method). A
worker imports the standard library, the engine and this package (its policy, errors and
settings come with it), nothing of the node: no Redis client, no websockets, no protocol. The messages
(pickled by :class:`multiprocessing.connection.Connection`):

- worker → node, once, when the engine is imported: ``("ready", pid)``;
- node → worker: ``(job_id, kind, args)``; the worker answers
  ``(job_id, ok, value, cpu_seconds)``: ``ok`` True with the job's result, or False with
  the text of the exception the solver raised; ``cpu_seconds`` is the CPU time the job
  took in the worker.

Kinds: ``hint`` (view text, full text, budget → the move's text or None), ``prove``
(variant, seed, budget → whether the deal is proven winnable), ``solve`` (position text,
budget → a :class:`Solved`), ``par`` (variant and seed, or a position text and None,
budget → a :class:`ParSolved`: :func:`spider_engine.par.par`'s result).

The worker exits when its pipe closes (the node closed it or died), ignores SIGINT (the
node decides when it stops) and runs at a higher niceness than the node (the setting
``solver_nice``). During a long search it checks every 10,000 positions
that the node that started it is still its parent, and exits if not.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["ParSolved", "Solved", "run_job", "serve"]


@dataclass(frozen=True)
class Solved:
    """What a general search found: the solver's verdict (``won``, ``lost``,
    ``unknown``), the positions it counted, the winning line's moves in notation."""

    verdict: str
    positions: int
    line: tuple[str, ...]


@dataclass(frozen=True)
class ParSolved:
    """A deal's par (:func:`spider_engine.par.par`): the solver's verdict, the positions
    counted, the par line's moves in notation (for ``won`` only) and the length of the
    solver's first line (None without a win)."""

    verdict: str
    positions: int
    line: tuple[str, ...]
    first_length: int | None


def serve(conn: Connection, nice: int = 0) -> None:
    """The worker's main loop (the target of the worker process); ``nice`` is added to the
    process's niceness, so that the node's event loop wins a contended core."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    parent = os.getppid()

    def check_parent(_: int) -> None:
        if os.getppid() != parent:
            os._exit(0)  # the node is gone: nobody reads the answer

    import spider_engine.solver  # noqa: F401  (imported before saying ready)

    try:
        conn.send(("ready", os.getpid()))
        while True:
            try:
                job_id, kind, args = conn.recv()
            except EOFError:
                return
            started = time.process_time()
            try:
                reply = (job_id, True, run_job(kind, args, check_parent))
            except Exception as e:  # the solver's failure is the job's answer
                reply = (job_id, False, f"{type(e).__name__}: {e}")
            conn.send((*reply, time.process_time() - started))
    except (BrokenPipeError, ConnectionResetError, EOFError):
        return
    finally:
        conn.close()


def run_job(kind: str, args: tuple[Any, ...], progress: Any = None) -> Any:
    """Run one job in this process (see the module for the kinds); ValueError for an
    unknown kind."""
    from spider_engine import Board
    from spider_engine.solver import hint, solve

    if kind == "hint":
        view_text, full_text, budget = args
        view, full = Board.from_text(view_text), Board.from_text(full_text)
        move = hint(view, full=full, budget=budget)
        return None if move is None else move.text()
    if kind == "prove":
        variant, seed, budget = args
        return solve(Board.deal(variant, seed), budget=budget, progress=progress).verdict == "won"
    if kind == "solve":
        text, budget = args
        solution = solve(Board.from_text(text), budget=budget, progress=progress)
        return Solved(solution.verdict, solution.positions, tuple(solution.texts()))
    if kind == "par":
        from spider_engine.par import par

        source, seed, budget = args
        board = Board.from_text(source) if seed is None else Board.deal(source, seed)
        result = par(board, budget=budget, progress=progress)
        return ParSolved(
            result.verdict, result.positions, tuple(result.texts()), result.first_length
        )
    raise ValueError(f"no such solver job: {kind!r}")
