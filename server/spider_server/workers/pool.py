"""The solver's worker processes, driven from the node's event loop.

:class:`SolverWorkers` keeps ``solver_workers`` processes (``spawn`` start method, target
:func:`.child.serve`), each with one duplex pipe. The event loop watches each pipe's
descriptor (``loop.add_reader``) and each dead worker's sentinel, so that waiting for an
answer or for a worker to exit never blocks the loop and no thread is involved. A worker
runs one job at a time; the queue is :class:`.JobPolicy`'s.

- A job that runs past its deadline fails with :class:`SolverTimeout`; its worker is
  killed (SIGKILL) and a new one started.
- A caller that stops waiting (its task cancelled) drops its queued job, or has the
  worker running it told to stop (:data:`GENTLE`; killed if it has not within
  ``solver_stop_grace``), or, for a hint, killed (replaced only when jobs wait, or below
  ``solver_warm``). A job preempted (:meth:`.JobPolicy.victim`) is stopped the same way.
- A worker that dies fails its job with :class:`WorkerCrashed` and is replaced (after a
  growing pause, up to 10 s, while new workers die before they are ready; after three
  such deaths with no worker ready, the queued jobs fail too).
- ``spawn`` runs the node's main module in each worker, as ``__mp_main__`` (the
  ``if __name__ == "__main__"`` idiom keeps it from starting a node there; the package's
  console scripts and ``python -m`` entry points follow it).
- ``solver_warm`` workers start with the pool, the others (up to ``solver_workers``) when
  jobs wait; a worker is replaced after ``solver_jobs_per_worker`` jobs (its memory
  returned).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import multiprocessing
from multiprocessing.process import BaseProcess
from typing import Any

from .child import ParSolved, Solved, serve
from .errors import JobRefused, SolverTimeout, WorkerCrashed, WorkersClosed
from .jobs import JobsApi
from .policy import Job, JobPolicy, JobState, Priority
from .settings import WorkerSettings
from .worker import PoolState, Worker, WorkerState

__all__ = ["ParSolved", "PoolState", "Solved", "SolverWorkers"]  # PoolState, Solved: as before

log = logging.getLogger(__name__)

GENTLE = frozenset({"prefetch", "suggest", "prove", "solve", "par"})
"""The kinds of job a worker stops when told to (:mod:`.child`): it goes on with the next.
A ``hint`` is stopped by killing its worker."""
KILL_WAIT = 2.0
"""On stop, how long killed workers get to be gone before the node stops waiting."""
MAX_RESTART_PAUSE = 10.0
START_FAILURES = 3
"""Workers in a row that die before they are ready, none ready, before the queued jobs
fail with :class:`WorkerCrashed` (new workers are still started, with pauses)."""


class SolverWorkers(JobsApi):
    """A bounded pool of solver processes with fair queuing (see the module).

    :meth:`start` in the node's event loop, then ``await`` :meth:`hint`, :meth:`prove` or
    :meth:`solve`; :meth:`stop` ends every worker. The counters are plain attributes for
    the node's metrics."""

    def __init__(self, settings: WorkerSettings | None = None) -> None:
        self.settings = s = settings or WorkerSettings()
        self.policy = JobPolicy(
            queue_limit=s.solver_queue,
            proofs_per_identity=s.proofs_per_identity,
            proofs_per_address=s.proofs_per_address,
            yield_after=s.solver_yield_after,
            stoppable=GENTLE,
        )
        self.state = PoolState.NEW
        self._ctx = multiprocessing.get_context("spawn")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._workers: list[Worker] = []
        self._dying: dict[int, BaseProcess] = {}
        """Workers killed or retired, by sentinel, until the loop sees them exit."""
        self._futures: dict[int, asyncio.Future[Any]] = {}
        self._passed: dict[int, asyncio.Future[Any]] = {}
        """Prefetches' early answers, by job id."""
        self._failures = 0
        self._restarts: list[asyncio.TimerHandle] = []
        self._stopped = asyncio.Event()
        # metrics: counts since start (plain ints for the node's metrics): jobs answered;
        # refused by a quota or a full queue; run past their deadline (worker killed);
        # dropped because nobody waited (queued, or worker killed); whose worker died or
        # whose solver raised; jobs stopped (queued again) for a more urgent one;
        # worker processes started; CPU time the workers spent on answered jobs (in all,
        # and by kind of job: ``stopped`` for the jobs a worker was told to stop)
        self.completed = self.refused = self.timed_out = self.cancelled = 0
        self.failed = self.preempted = self.spawned = 0
        self.cpu_seconds = 0.0
        self.cpu_by_kind: collections.defaultdict[str, float] = collections.defaultdict(float)

    @property
    def queued(self) -> int:
        """Jobs waiting for a worker."""
        return self.policy.queued

    @property
    def running(self) -> int:
        """Jobs a worker is running."""
        return self.policy.running

    def pids(self) -> list[int]:
        """The process ids of the workers, dying ones included."""
        procs = [w.process for w in self._workers] + list(self._dying.values())
        return [p.pid for p in procs if p.pid is not None]

    async def _run(self, job: Job) -> Any:
        """Queue ``job`` and wait for its answer; refusals are raised before anything is
        queued. Cancelling the wait drops the job."""
        if self.state is not PoolState.RUNNING:
            raise WorkersClosed("the solver's workers are not running")
        try:
            self.policy.submit(job)
        except JobRefused:
            self.refused += 1
            raise
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._futures[job.id] = future
        self._dispatch()
        try:
            return await future
        except asyncio.CancelledError:
            self._abandon(job)
            raise
        finally:
            self._futures.pop(job.id, None)

    # -- the life of the pool ---------------------------------------------------------------

    def start(self) -> None:
        """Start ``solver_warm`` workers (in the running event loop); the others, up to
        ``solver_workers``, start when jobs wait. Idempotent while running;
        :class:`WorkersClosed` once stopped."""
        if self.state is PoolState.RUNNING:
            return
        if self.state is not PoolState.NEW:
            raise WorkersClosed("the solver's workers were stopped")
        self._loop = asyncio.get_running_loop()
        self.state = PoolState.RUNNING
        for _ in range(min(self.settings.solver_warm, self.settings.solver_workers)):
            self._spawn()

    async def stop(self) -> None:
        """Stop every worker; never blocks the event loop. What waits fails with
        :class:`WorkersClosed`. Idle workers exit when their pipe closes; busy and starting
        ones are sent SIGTERM at once; any still alive after ``solver_stop_grace`` is sent
        SIGKILL and waited for up to 2 s more (then left to the interpreter's exit, which
        terminates daemonic processes). Idempotent; a second caller waits for the first."""
        if self.state is PoolState.NEW:
            self.state = PoolState.STOPPED
            self._stopped.set()
        if self.state is not PoolState.RUNNING:
            await self._stopped.wait()
            return
        self.state = PoolState.STOPPING
        for handle in self._restarts:
            handle.cancel()
        self._restarts.clear()
        for job in self.policy.drain():
            self._fail(job, WorkersClosed("the solver's workers stopped"))
        for worker in list(self._workers):
            busy = worker.state is not WorkerState.IDLE
            worker.job = None
            self._remove(worker)
            if busy:
                with contextlib.suppress(ValueError, OSError):
                    worker.process.terminate()
        loop = asyncio.get_running_loop()
        for wait, last in ((self.settings.solver_stop_grace, False), (KILL_WAIT, True)):
            until = loop.time() + wait
            while self._dying and loop.time() < until:
                await asyncio.sleep(0.02)
            if last or not self._dying:
                break
            for process in self._dying.values():
                with contextlib.suppress(ValueError, OSError):
                    process.kill()
        if self._dying:
            log.warning("solver workers still alive after stop: %s", self.pids())
        self.state = PoolState.STOPPED
        self._stopped.set()

    async def __aenter__(self) -> SolverWorkers:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- workers ----------------------------------------------------------------------------

    def _spawn(self) -> None:
        if self.state is not PoolState.RUNNING:
            return
        loop = self._require_loop()
        mine, theirs = self._ctx.Pipe(duplex=True)
        process = self._ctx.Process(
            target=serve,
            args=(theirs, self.settings.solver_nice),
            name="spider-race-solver",
            daemon=True,
        )
        try:
            process.start()
        except OSError as e:
            mine.close()
            theirs.close()
            log.error("cannot start a solver worker: %s", e)
            self._restart_later()
            return
        finally:
            theirs.close()  # the worker has its own copy: EOF here when it exits
        self.spawned += 1
        worker = Worker(process, mine)
        self._workers.append(worker)
        loop.add_reader(worker.fd, self._readable, worker)

    def _restart_later(self) -> None:
        """Start a worker after a pause that doubles with each worker that died before it
        was ready (0.5 s, 1 s, … up to 10 s)."""
        loop = self._require_loop()
        self._failures += 1
        pause = min(MAX_RESTART_PAUSE, 0.25 * 2**self._failures)
        self._restarts = [h for h in self._restarts if h.when() > loop.time()]
        self._restarts.append(loop.call_later(pause, self._spawn))

    def _readable(self, worker: Worker) -> None:
        try:
            message = worker.conn.recv()
        except (EOFError, OSError):
            self._lost(worker)
            return
        if message[0] == "ready":
            worker.state, self._failures = WorkerState.IDLE, 0
            self._dispatch()
            return
        if message[0] == "passed":
            early = self._passed.pop(message[1], None)
            mine = worker.job is not None and worker.job.id == message[1]
            if mine and early is not None and not early.done():
                early.set_result(message[2])
            return
        job_id, ok, value, cpu = message
        if worker.state is WorkerState.CANCELLING:
            if job_id == worker.cancelled:  # it stopped: free again
                self._idle_again(worker, cpu)
            return
        job = worker.job
        if job is None or job.id != job_id:
            return  # an answer nobody waits for (cannot happen: one job at a time)
        if worker.timer is not None:
            worker.timer.cancel()
        worker.state, worker.job, worker.timer = WorkerState.IDLE, None, None
        worker.jobs += 1
        self.cpu_seconds += cpu
        self.cpu_by_kind[job.kind] += cpu
        self.policy.finish(job)
        future = self._futures.get(job.id)
        early = self._passed.pop(job.id, None)
        if ok:
            self.completed += 1
            if future is not None and not future.done():
                future.set_result(value)
            if early is not None and not early.done():
                early.set_result(value)
            if job.kind == "prefetch":
                self._futures.pop(job.id, None)
        else:
            if early is not None:
                early.cancel()
            self.failed += 1
            log.warning("solver job %s failed: %s", job.kind, value)
            self._fail(job, WorkerCrashed(f"the solver failed: {value}"))
        if worker.jobs >= self.settings.solver_jobs_per_worker:
            self._remove(worker)  # it exits on EOF
            self._spawn()
        self._dispatch()

    def _dispatch(self) -> None:
        """Give waiting jobs to idle workers, start more workers (up to ``solver_workers``)
        for jobs still waiting, and stop a running job for a more urgent one that no worker
        will take (:meth:`.JobPolicy.victim`)."""
        if self.state is not PoolState.RUNNING:
            return
        for worker in list(self._workers):
            if worker.state is not WorkerState.IDLE:
                continue
            job = self.policy.take()
            if job is None:
                return
            share = self.settings.refill_share if job.priority is Priority.REFILL else 1.0
            try:
                worker.conn.send((job.id, job.kind, job.args, share))
            except OSError:
                self.policy.requeue(job)
                self._lost(worker)
                continue
            worker.state, worker.job = WorkerState.BUSY, job
            deadline = job.deadline / share  # a job that rests has its rests' time too
            worker.timer = self._require_loop().call_later(deadline, self._expire, worker, job)
        soon = (WorkerState.STARTING, WorkerState.CANCELLING)
        coming = sum(w.state in soon for w in self._workers)
        if not self._failures:  # more workers for what waits (none while workers fail)
            more = min(
                self.policy.queued - coming, self.settings.solver_workers - len(self._workers)
            )
            for _ in range(more):
                self._spawn()
                coming += 1
        while True:
            victim = self.policy.victim(coming=coming)
            if victim is None:
                return
            self.policy.requeue(victim)
            self.preempted += 1
            for worker in list(self._workers):
                if worker.job is victim:
                    worker.job = None
                    if victim.kind in GENTLE:
                        self._stop_gently(worker, victim)
                    else:
                        self._recycle(worker)
                    coming += 1  # its replacement, or the worker once it stopped

    def _expire(self, worker: Worker, job: Job) -> None:
        if worker.job is not job:
            return
        self.timed_out, worker.job = self.timed_out + 1, None
        self.policy.finish(job)
        self._fail(job, SolverTimeout(f"the solver ran past its deadline ({job.deadline:g} s)"))
        self._recycle(worker, replace=False)
        self._dispatch()

    def _abandon(self, job: Job) -> None:
        """Nobody waits for ``job`` any more: drop it, or kill the worker running it."""
        if self.policy.cancel(job):
            self.cancelled += 1
            return
        if job.state is not JobState.RUNNING:
            return
        self.cancelled += 1
        self.policy.finish(job)
        for worker in list(self._workers):
            if worker.job is job:
                worker.job = None
                if job.kind in GENTLE:
                    self._stop_gently(worker, job)
                else:
                    self._recycle(worker, replace=False)
        self._dispatch()

    def _stop_gently(self, worker: Worker, job: Job) -> None:
        """Tell a worker to stop its job; it is free again when it answers, killed if it
        has not within ``solver_stop_grace``."""
        if worker.timer is not None:
            worker.timer.cancel()
        worker.state, worker.cancelled = WorkerState.CANCELLING, job.id
        try:
            worker.conn.send(("cancel", job.id, None))
        except OSError:
            self._lost(worker)
            return
        loop = self._require_loop()
        worker.timer = loop.call_later(self.settings.solver_stop_grace, self._stuck, worker)

    def _stuck(self, worker: Worker) -> None:
        if worker.state is WorkerState.CANCELLING:
            self._recycle(worker, replace=False)
            self._dispatch()

    def _idle_again(self, worker: Worker, cpu: float) -> None:
        if worker.timer is not None:
            worker.timer.cancel()
        worker.state, worker.cancelled, worker.timer = WorkerState.IDLE, None, None
        worker.jobs += 1
        self.cpu_seconds += cpu
        self.cpu_by_kind["stopped"] += cpu
        if worker.jobs >= self.settings.solver_jobs_per_worker:
            self._remove(worker)
            self._spawn()
        self._dispatch()

    def _lost(self, worker: Worker) -> None:
        """The worker's pipe closed: it died."""
        started = worker.state is not WorkerState.STARTING
        job = worker.job
        worker.job = None
        self._remove(worker)
        if job is not None:
            self.failed += 1
            self.policy.finish(job)
            self._fail(job, WorkerCrashed("the solver's worker died while running the job"))
        if self.state is not PoolState.RUNNING:
            return
        log.warning("a solver worker died (pid %s)", worker.process.pid)
        if started:
            self._spawn()
            self._dispatch()
            return
        self._restart_later()
        ready = any(w.state is not WorkerState.STARTING for w in self._workers)
        if not ready and self._failures >= START_FAILURES:
            # workers die before they are ready: what waits would wait for ever
            for job in self.policy.drain():
                self.failed += 1
                self._fail(job, WorkerCrashed("the solver's workers cannot start"))

    def _recycle(self, worker: Worker, *, replace: bool = True) -> None:
        """Kill the worker (its job is no one's any more); start another (without
        ``replace``, only below ``solver_warm``: :meth:`_dispatch` starts what jobs need)."""
        self._remove(worker)
        with contextlib.suppress(ValueError, OSError):
            worker.process.kill()
        warm = min(self.settings.solver_warm, self.settings.solver_workers)
        if replace or len(self._workers) < warm:
            self._spawn()

    def _remove(self, worker: Worker) -> None:
        """Forget the worker and close its pipe (an idle worker exits on EOF); its process
        is reaped when its sentinel says it exited."""
        if worker not in self._workers:
            return
        self._workers.remove(worker)
        loop = self._require_loop()
        loop.remove_reader(worker.fd)
        if worker.timer is not None:
            worker.timer.cancel()
            worker.timer = None
        worker.conn.close()
        process = worker.process
        sentinel = process.sentinel
        self._dying[sentinel] = process
        loop.add_reader(sentinel, self._reap, sentinel)

    def _reap(self, sentinel: int) -> None:
        process = self._dying.get(sentinel)
        if process is None:
            return
        process.join(0)  # does not wait: the sentinel says it exited
        if process.exitcode is None:
            return
        self._require_loop().remove_reader(sentinel)
        del self._dying[sentinel]
        process.close()

    def _fail(self, job: Job, error: Exception) -> None:
        future = self._futures.get(job.id)
        if future is not None and not future.done():
            future.set_exception(error)
        if job.kind == "prefetch":  # nobody's ``_run`` forgets its futures
            self._futures.pop(job.id, None)
            early = self._passed.pop(job.id, None)
            if early is not None:
                early.cancel()

    def _require_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            raise WorkersClosed("the solver's workers were not started")
        return self._loop
