"""A solver worker process: it reads jobs from its pipe and answers each on the same pipe.

This module runs in the worker (started by :mod:`.pool` with the ``spawn`` method). A
worker imports the standard library, the engine and this package (its policy, errors and
settings come with it), nothing of the node: no Redis client, no websockets, no protocol. The messages
(pickled by :class:`multiprocessing.connection.Connection`):

- worker → node, once, when the engine is imported: ``("ready", pid)``;
- node → worker: ``(job_id, kind, args, share)``; the worker answers
  ``(job_id, ok, value, cpu_seconds)``: ``ok`` True with the job's result, or False with
  the text of the exception the solver raised; ``cpu_seconds`` is the CPU time the job
  took in the worker. With ``share`` below 1 (the pool's refills: the node's
  ``refill_share``) the job computes that share of the wall time and sleeps in between:
  every :data:`PACE_EVERY` positions it sleeps until its CPU time is at most ``share`` of
  the time since it began (a par, every 10,000).

Kinds: ``hint`` (view text, full text, budget → the move's text or None), ``suggest``
(view text, full text, budget → a :class:`Suggested`), ``prefetch`` (full text,
budget, quick budget → a :class:`Suggested`; see below), ``prove`` (variant, seed,
budget → the winning line that proves the deal, or None), ``solve`` (position text, budget → a
:class:`Solved`), ``par`` (variant and seed, or a position text and None, budget → a
:class:`ParSolved`: :func:`spider_engine.par.par`'s result).

A ``prefetch`` is a ``suggest`` that says early what a search of the quick budget would
answer: once its search has counted more than the quick budget of positions without a
win, the worker sends ``("passed", job_id, suggested)`` (the players' ranking, verdict
``unknown``: the search is deterministic and a budget only cuts it short) and goes on.

Every job but a ``hint`` can be stopped without killing the worker: the node sends
``("cancel", job_id, None)``, which the search reads every :data:`POLL_EVERY` positions
(a resting job's every :data:`PACE_EVERY`, a par's every 10,000); the worker then answers
``(job_id, False, "cancelled", cpu_seconds)`` and waits for the next job (a cancel that
comes after the job ended is ignored).

The worker exits when its pipe closes (the node closed it or died), ignores SIGINT (the
node decides when it stops) and runs at a higher niceness than the node (the setting
``solver_nice``); at the highest niceness (19, the default) it also asks for the idle
scheduling policy where the system has one (Linux's ``SCHED_IDLE``: the worker runs only on
a core that nothing else wants, and a waking event loop takes the core from it at once
instead of after a slice). During a search it checks as often as it reads its pipe
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

__all__ = [
    "CANCELLED",
    "PACE_EVERY",
    "POLL_EVERY",
    "SUGGESTIONS",
    "ParSolved",
    "Solved",
    "Suggested",
    "run_job",
    "serve",
]

POLL_EVERY = 250
"""Positions a prefetch searches between two looks at its pipe (a cancel, the quick
budget passed)."""
PACE_EVERY = 500
"""Positions a job that rests (a share below 1) searches between two looks at its clock:
about 15 ms of a four-suit search, so that it rests in short pieces."""
SUGGESTIONS = 3
"""Moves a suggestion lists at most."""
CANCELLED = "cancelled"
"""The failure text of a job stopped by a cancel."""


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


@dataclass(frozen=True)
class Suggested:
    """A hint with its alternatives: ``moves`` (at most :data:`SUGGESTIONS`, best first:
    the first move of the winning line when the solver found one, then the players'
    ranking's other moves; empty when no move is legal), the solver's ``verdict`` on the
    full position (``won``, ``lost``, ``unknown``) and the positions it counted; ``line``
    the solver's winning line from the position when it found one (empty otherwise)."""

    verdict: str
    moves: tuple[str, ...]
    positions: int
    line: tuple[str, ...] = ()


class Cancelled(BaseException):
    """The node cancelled the running prefetch (a BaseException: no ``except Exception``
    on the way stops it)."""


IDLE_FROM = 19
"""The niceness from which a worker also asks for the idle scheduling policy."""


def idle_priority() -> bool:
    """Put this process under the idle scheduling policy (``SCHED_IDLE``) where the system
    has it; whether it did."""
    policy = getattr(os, "SCHED_IDLE", None)
    if policy is None or not hasattr(os, "sched_setscheduler"):
        return False
    try:
        os.sched_setscheduler(0, policy, os.sched_param(0))
    except OSError:
        return False
    return True


def serve(conn: Connection, nice: int = 0) -> None:
    """The worker's main loop (the target of the worker process); ``nice`` is added to the
    process's niceness, so that the node's event loop wins a contended core."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    if nice >= IDLE_FROM:
        idle_priority()
    parent = os.getppid()

    def check_parent(_: int) -> None:
        if os.getppid() != parent:
            os._exit(0)  # the node is gone: nobody reads the answer

    import spider_engine.solver  # noqa: F401  (imported before saying ready)

    try:
        conn.send(("ready", os.getpid()))
        while True:
            try:
                message = conn.recv()
            except EOFError:
                return
            if message[0] == "cancel":
                continue  # for a job that ended before the cancel came
            job_id, kind, args, share = message
            started = time.process_time()
            reply: tuple[Any, bool, Any]
            look = watch(conn, job_id, check_parent)
            try:
                if kind == "prefetch":
                    result = _prefetch(conn, job_id, args, look)
                elif share < 1:
                    result = run_job(kind, args, paced(share, look, conn.poll), PACE_EVERY)
                else:
                    result = run_job(kind, args, look, POLL_EVERY)
                reply = (job_id, True, result)
            except Cancelled:
                reply = (job_id, False, CANCELLED)
            except Exception as e:  # the solver's failure is the job's answer
                reply = (job_id, False, f"{type(e).__name__}: {e}")
            conn.send((*reply, time.process_time() - started))
    except (BrokenPipeError, ConnectionResetError, EOFError):
        return
    finally:
        conn.close()


def watch(conn: Connection, job_id: int, check: Any) -> Any:
    """A progress callback that calls ``check`` and raises :class:`Cancelled` when the node
    sent a cancel of job ``job_id`` (a cancel of an earlier job is dropped)."""

    def look(count: int) -> None:
        check(count)
        while conn.poll():
            message = conn.recv()
            if message[0] == "cancel" and message[1] == job_id:
                raise Cancelled

    return look


def paced(share: float, inner: Any, rest: Any = time.sleep) -> Any:
    """A progress callback that calls ``inner`` and then rests (``rest(seconds)``: the
    worker waits on its pipe, so that a cancel ends the rest) until this process's CPU
    time since now is at most ``share`` of the wall time since now."""
    cpu, wall = time.process_time(), time.monotonic()

    def progress(count: int) -> None:
        inner(count)
        ahead = (time.process_time() - cpu) / share - (time.monotonic() - wall)
        if ahead > 0:
            rest(ahead)

    return progress


def run_job(kind: str, args: tuple[Any, ...], progress: Any = None, every: int = 10_000) -> Any:
    """Run one job in this process (see the module for the kinds), ``progress`` called
    every ``every`` positions (a par's, every 10,000); ValueError for an unknown kind."""
    from spider_engine import Board
    from spider_engine.solver import hint, solve

    if kind == "hint":
        view_text, full_text, budget = args
        view, full = Board.from_text(view_text), Board.from_text(full_text)
        move = hint(view, full=full, budget=budget)
        return None if move is None else move.text()
    if kind == "suggest":
        view_text, full_text, budget = args
        return suggested(full_text, budget, progress, every)
    if kind == "prove":
        variant, seed, budget = args
        board = Board.deal(variant, seed)
        proof = solve(board, budget=budget, progress=progress, progress_every=every)
        return tuple(proof.texts()) if proof.verdict == "won" else None
    if kind == "solve":
        text, budget = args
        board = Board.from_text(text)
        solution = solve(board, budget=budget, progress=progress, progress_every=every)
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


def suggested(full_text: str, budget: int, progress: Any = None, every: int = 10_000) -> Suggested:
    """The :class:`Suggested` of a full position within ``budget`` positions (the hint of
    :func:`spider_engine.solver.suggest`, and the players' ranking's other moves)."""
    from spider_engine import Board
    from spider_engine.solver import WON, rank_moves, solve

    full = Board.from_text(full_text)
    solution = solve(full, budget=budget, progress=progress, progress_every=every)
    ranked = [m.text() for m in rank_moves(full)]
    if solution.verdict == WON and solution.line:
        first = solution.line[0].text()
        ranked = [first, *(m for m in ranked if m != first)]
    line = tuple(m.text() for m in solution.line) if solution.verdict == WON else ()
    return Suggested(solution.verdict, tuple(ranked[:SUGGESTIONS]), solution.positions, line)


def ranking(full_text: str, positions: int) -> Suggested:
    """What a search that ran out of its budget of ``positions`` suggests: the players'
    ranking, verdict ``unknown``."""
    from spider_engine import Board
    from spider_engine.solver import UNKNOWN_VERDICT, rank_moves

    ranked = [m.text() for m in rank_moves(Board.from_text(full_text))]
    return Suggested(UNKNOWN_VERDICT, tuple(ranked[:SUGGESTIONS]), positions)


def _prefetch(conn: Connection, job_id: int, args: tuple[Any, ...], watched: Any) -> Suggested:
    """A ``prefetch`` job (see the module): a suggestion that says when it passed the quick
    budget (``watched`` stops it when cancelled)."""
    full_text, budget, quick = args
    passed = quick >= budget

    def look(count: int) -> None:
        nonlocal passed
        watched(count)
        if not passed and count > quick:
            passed = True
            conn.send(("passed", job_id, ranking(full_text, quick)))

    return suggested(full_text, budget, look, POLL_EVERY)
