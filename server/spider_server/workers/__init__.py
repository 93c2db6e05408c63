"""Solver work in worker processes: hints, proofs of deals, general searches.

The node's own process never runs the solver: a search is pure Python and holds the GIL,
so a search in a thread of the node delays every frame of every race on it. Here a bounded
pool of processes (:class:`SolverWorkers`) runs them; the node's event loop only writes
jobs to pipes and reads answers when the pipes say they are ready. The parts:

- :mod:`.policy` — :class:`JobPolicy`, pure and synchronous: priorities (hint, then a
  race's proof, then a par, then a daily deal's proof, then the seed pool's refills, then
  prefetches), turns by owner within a priority with the least served first, the quotas
  (one hint at a time per player, a cap of proofs per identity and per address, a bound
  per queue), which running job to preempt;
- :mod:`.pool` — :class:`SolverWorkers`, the processes: deadlines, cancellation, crashes,
  start and stop; :mod:`.jobs` — the jobs it takes (hint, suggestion, prefetch, proof,
  search); :mod:`.worker` — one worker as the node sees it, a prefetch's handle;
- :mod:`.child` — what runs in a worker (imports only the standard library and the
  engine);
- :mod:`.settings` — :class:`WorkerSettings`; :mod:`.errors` — the named errors.

Why not ``concurrent.futures.ProcessPoolExecutor``, which once hung the test suite when
a node closed (the history does not keep that code; this is what the executor does, read
in CPython 3.11's ``concurrent/futures/process.py`` and ``multiprocessing``):

- A running call cannot be cancelled: ``Future.cancel()``, and cancelling the awaiting
  asyncio task of ``loop.run_in_executor``, leave the call running, and the executor has
  no way to kill one worker. ``shutdown(wait=True)`` — ``cancel_futures=True`` included —
  joins the executor's manager thread, which returns only when no work item is pending:
  it waits for every running proof (a full-budget spider4 proof takes many seconds, and
  the pool kept submitting them). Called from a coroutine, that join also blocks the
  event loop.
- ``shutdown(wait=False)`` does not help at exit: the module registers
  ``threading._register_atexit(_python_exit)``, which joins every manager thread without
  a timeout before the interpreter exits, so the pytest process waited for all queued and
  running proofs. The workers are not daemonic either, and ``multiprocessing``'s own exit
  handler joins non-daemonic children without a timeout.
- On Linux the default start method of Python 3.11 is ``fork``. Forking a process that
  has threads (asyncio's default executor, where ``to_thread`` runs) can leave a lock held
  forever in the child (cpython#90622, #105464); such a worker never starts, the manager
  thread waits for it, and so do the joins above.

So here: the ``spawn`` start method (a fresh interpreter, no inherited locks or
threads); one pipe per worker, written to and read from the event loop only
(``loop.add_reader`` on the pipe and on each dying worker's sentinel, no feeder or
manager thread, no queue to join); a deadline per job after which its worker is killed;
daemonic workers (the interpreter's exit terminates any left); and :meth:`SolverWorkers.
stop`, which fails what waits, closes idle workers' pipes, sends SIGTERM to busy ones, then
SIGKILL after a short grace, waits with ``asyncio.sleep`` (never a blocking join) and
returns within about ``solver_stop_grace`` + 2 seconds whatever the workers do. The
``spawn`` method starts ``multiprocessing``'s resource tracker once per node process; it
exits with the node.

Typical use in the node::

    workers = SolverWorkers(WorkerSettings.from_settings(settings))
    workers.start()                      # in the running loop
    move = await workers.hint(view_text, full_text, budget, player=player)
    line = await workers.prove(variant, seed, budget, priority=Priority.REFILL)  # or None
    await workers.stop()
"""

from __future__ import annotations

from .child import Suggested
from .errors import (
    HintPending,
    JobRefused,
    ProofCapReached,
    QueueFull,
    SolverTimeout,
    WorkerCrashed,
    WorkerError,
    WorkersClosed,
)
from .policy import Job, JobPolicy, JobState, Priority
from .pool import ParSolved, PoolState, Solved, SolverWorkers
from .settings import WorkerSettings, default_workers
from .worker import Prefetch

__all__ = [
    "HintPending",
    "Job",
    "JobPolicy",
    "JobRefused",
    "JobState",
    "ParSolved",
    "PoolState",
    "Prefetch",
    "Priority",
    "ProofCapReached",
    "QueueFull",
    "Solved",
    "SolverTimeout",
    "SolverWorkers",
    "Suggested",
    "WorkerCrashed",
    "WorkerError",
    "WorkerSettings",
    "WorkersClosed",
    "default_workers",
]
