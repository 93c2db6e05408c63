"""Which solver job runs next, and which are refused: the workers' policy, without I/O.

:class:`JobPolicy` holds the queued and the running jobs and decides; it starts no process
and never waits, so it is tested synchronously. The process side (:mod:`.pool`) asks it
for the next job whenever a worker is free and tells it when a job ends.

- **Priorities.** :class:`Priority` ``HINT`` before ``RACE`` (a proof a waiting race needs)
  before ``PAR`` (a finished race's par, which its players wait to see) before ``DAILY``
  (a day's deal asked for and not proven yet) before ``REFILL`` (the seed pool's own
  stock) before ``PREFETCH`` (a hint searched before it is asked for). A job someone
  waits for is not starved: once ``yield_after`` jobs of higher priorities were taken
  while it waited, its next job goes first (0: strict priorities). Refills and
  prefetches, which nobody waits for, get no such turn: a job taken on its turn is not
  preempted, and a refill's turn would hold a player's hint or race for the whole of a
  resting proof (a race waiting for a seed has a proof of its own meanwhile).
- **Turns by owner, the least served first.** Within a priority, owners (the caller's
  key: a player, an identity, an address) take turns, one job each; an owner's own jobs
  run in the order given. Each owner's *service* is the worker time its jobs of that
  priority had (finished, stopped or preempted), decaying by half every ``half_life`` seconds; the
  turn goes to the first owner in line whose service is within ``fair_margin`` seconds
  of the least served owner waiting. One owner with many jobs delays each other owner by
  one job at most per turn, and an owner who used the workers little goes ahead of those
  who used them much.
- **Quotas.** Per player at most one hint queued or running (:class:`HintPending`); per
  identity and per address at most a cap of other jobs queued or running
  (:class:`ProofCapReached`); per priority at most ``queue_limit`` jobs waiting
  (:class:`QueueFull`). A refused job changes nothing.
- **Preemption.** When a job of a priority above ``REFILL`` waits and no worker is free, a
  running prefetch (the one taken last), else a running refill, else a running daily
  proof (when what waits is above ``DAILY``), each taken in the ordinary order (not on
  its turn against starvation), is the :meth:`JobPolicy.victim`: the process side stops
  it and :meth:`JobPolicy.requeue` puts it back first in line. A job taken on its
  anti-starvation turn is never preempted.
- **Fair preemption.** When a hint or a race's proof waits, no worker is free or about to
  be, and nothing lower can be stopped, a running job of the same priority that the
  worker can stop (``stoppable`` kinds) is the victim when its owner's service exceeds
  the waiting owner's by ``fair_margin`` seconds or more: a player who floods the workers
  does not hold a player who hardly used them. A job is preempted so at most once (the
  second time it runs to its end), so that owners of equal standing never keep stopping
  each other.

A job's life: :meth:`~JobPolicy.submit` (``QUEUED``) → :meth:`~JobPolicy.take`
(``RUNNING``) → :meth:`~JobPolicy.finish` (``DONE``); a queued job may instead be
dropped by :meth:`~JobPolicy.cancel`, a running one put back by
:meth:`~JobPolicy.requeue`.
"""

from __future__ import annotations

import enum
import itertools
import math
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import HintPending, ProofCapReached, QueueFull

__all__ = ["FAIR_MARGIN", "HALF_LIFE", "Job", "JobPolicy", "JobState", "Priority"]

FAIR_MARGIN = 0.5
"""Seconds of service by which owners differ before the less served one goes first."""
HALF_LIFE = 60.0
"""Seconds in which an owner's service falls by half."""
OWNERS_KEPT = 10_000
"""Owners whose service is remembered (the least recently counted are forgotten)."""


class Priority(enum.IntEnum):
    """Lower values run first."""

    HINT = 0
    """A player waits for a hint."""
    RACE = 1
    """A race waits for a proven deal (a winnable race preparing, the daily deal)."""
    PAR = 2
    """A finished race's par: its players' end screens wait for it."""
    DAILY = 3
    """A day's deal asked for and not proven yet: stopped for hints, races and pars."""
    REFILL = 4
    """The seed pool's own stock: nobody waits."""
    PREFETCH = 5
    """A hint searched from a player's new position before they ask for it."""


class JobState(enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


_ids = itertools.count(1)


@dataclass(eq=False)
class Job:
    """One piece of solver work. ``kind`` and ``args`` are what the worker runs
    (:mod:`.child`); the other fields are the policy's."""

    kind: str
    args: tuple[Any, ...]
    priority: Priority
    owner: str
    """Round-robin key within the priority."""
    deadline: float
    """Seconds the job may run once a worker has it."""
    player: str | None = None
    """For a hint: the player, who may have one hint at a time."""
    identity: str | None = None
    """The identity the job is counted against (its cap of jobs), if any."""
    address: str | None = None
    """The client address the job is counted against (its cap of jobs), if any."""
    id: int = field(default_factory=lambda: next(_ids))
    state: JobState = JobState.QUEUED
    turn: bool = False
    """Taken on its turn against starvation (then never preempted)."""
    spared: bool = False
    """Preempted once for a less served owner (then never so again)."""
    started: float = 0.0
    """When a worker last took it (the policy's clock)."""


class JobPolicy:
    """The queues, the quotas and the order of the solver's jobs (see the module)."""

    def __init__(
        self,
        *,
        queue_limit: int = 64,
        proofs_per_identity: int = 2,
        proofs_per_address: int = 4,
        yield_after: int = 8,
        fair_margin: float = FAIR_MARGIN,
        half_life: float = HALF_LIFE,
        stoppable: frozenset[str] = frozenset(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.queue_limit = queue_limit
        self.proofs_per_identity = proofs_per_identity
        self.proofs_per_address = proofs_per_address
        self.yield_after = yield_after
        self.fair_margin = fair_margin
        self.half_life = half_life
        self.stoppable = stoppable
        """Kinds of job a worker stops when told to (the others are never fairly preempted)."""
        self.clock = clock
        self._service: dict[tuple[Priority, str], tuple[float, float]] = {}
        """(priority, owner) -> (seconds of service, when counted), decaying (see
        :meth:`service`)."""
        # per priority: each owner's queued jobs, and the owners in their turn's order
        self._jobs: dict[Priority, dict[str, deque[Job]]] = {p: {} for p in Priority}
        self._order: dict[Priority, deque[str]] = {p: deque() for p in Priority}
        self._queued: Counter[Priority] = Counter()
        self._passed: Counter[Priority] = Counter()
        self._running: dict[int, Job] = {}
        self._hinting: set[str] = set()
        self._identities: Counter[str] = Counter()
        self._addresses: Counter[str] = Counter()

    # -- what it holds ----------------------------------------------------------------------

    @property
    def queued(self) -> int:
        """Jobs waiting, every priority."""
        return sum(self._queued.values())

    def queued_at(self, priority: Priority) -> int:
        return self._queued[priority]

    @property
    def running(self) -> int:
        return len(self._running)

    def running_jobs(self) -> list[Job]:
        """The running jobs, in the order they were taken."""
        return list(self._running.values())

    def pending(self, *, identity: str | None = None, address: str | None = None) -> int:
        """Jobs queued or running counted against an identity or an address."""
        if identity is not None:
            return self._identities[identity]
        return self._addresses[address] if address is not None else 0

    def service(self, owner: str, priority: Priority) -> float:
        """Seconds of worker time ``owner``'s ended runs at ``priority`` had, each halved
        every ``half_life`` seconds since (a running job counts once it ends)."""
        kept = self._service.get((priority, owner))
        if kept is None:
            return 0.0
        seconds, when = kept
        return seconds * math.exp2(-(self.clock() - when) / self.half_life)

    # -- a job's life -----------------------------------------------------------------------

    def submit(self, job: Job) -> None:
        """Queue ``job``, or refuse it (nothing changes): :class:`HintPending`,
        :class:`ProofCapReached`, :class:`QueueFull`."""
        if job.state is not JobState.QUEUED:
            raise ValueError(f"job {job.id} is {job.state.value}")
        if job.player is not None and job.player in self._hinting:
            raise HintPending("your previous hint is still being worked out")
        if job.identity is not None and self._identities[job.identity] >= self.proofs_per_identity:
            raise ProofCapReached(
                f"at most {self.proofs_per_identity} deals may be proven at once per player"
            )
        if job.address is not None and self._addresses[job.address] >= self.proofs_per_address:
            raise ProofCapReached(
                f"at most {self.proofs_per_address} deals may be proven at once per address"
            )
        if self._queued[job.priority] >= self.queue_limit:
            raise QueueFull(f"the solver's {job.priority.name.lower()} queue is full")
        if job.player is not None:
            self._hinting.add(job.player)
        if job.identity is not None:
            self._identities[job.identity] += 1
        if job.address is not None:
            self._addresses[job.address] += 1
        self._enqueue(job, first=False)

    def take(self) -> Job | None:
        """The next job to run (now ``RUNNING``), or None when none waits."""
        waiting = [p for p in Priority if self._queued[p]]
        if not waiting:
            return None
        top = waiting[0]
        chosen = top
        if self.yield_after:
            starved = [
                p
                for p in waiting[1:]
                if p < Priority.REFILL and self._passed[p] >= self.yield_after
            ]
            if starved:
                chosen = starved[0]
        for p in waiting:
            if p > chosen:
                self._passed[p] += 1
        self._passed[chosen] = 0
        job = self._dequeue(chosen)
        job.state = JobState.RUNNING
        job.turn = chosen is not top
        job.started = self.clock()
        self._running[job.id] = job
        return job

    def finish(self, job: Job) -> None:
        """A running job ended (answered, failed, timed out, or abandoned): its quotas are
        free again. Idempotent; a queued job is dropped as by :meth:`cancel`."""
        if job.state is JobState.QUEUED:
            self.cancel(job)
            return
        if job.state is JobState.RUNNING:
            del self._running[job.id]
            self._served(job)
            self._release(job)

    def cancel(self, job: Job) -> bool:
        """Drop a queued job (True); False when it is not queued (running or done)."""
        if job.state is not JobState.QUEUED:
            return False
        jobs = self._jobs[job.priority]
        mine = jobs.get(job.owner)
        if mine is None or job not in mine:
            return False
        mine.remove(job)
        if not mine:
            del jobs[job.owner]
            self._order[job.priority].remove(job.owner)
        self._queued[job.priority] -= 1
        self._release(job)
        return True

    def requeue(self, job: Job) -> None:
        """Put a running job back, first in line (its worker was taken for another job, or
        was lost before it started); its quotas stay counted."""
        if job.state is not JobState.RUNNING:
            raise ValueError(f"job {job.id} is {job.state.value}")
        del self._running[job.id]
        self._served(job)
        job.turn = False
        self._enqueue(job, first=True)

    def victim(self, *, coming: int = 0) -> Job | None:
        """The running job to stop for a waiting one (see the module), or None: when no
        more jobs that may preempt wait than ``coming`` workers (starting, soon free) will
        take, or no running job may be preempted. Call it when no worker is free; put the
        victim back with :meth:`requeue`."""
        urgent = [p for p in Priority if p < Priority.REFILL and self._queued[p]]
        if not urgent or sum(self._queued[p] for p in urgent) <= coming:
            return None
        top = urgent[0]
        for lower in (Priority.PREFETCH, Priority.REFILL, Priority.DAILY):
            # only the jobs above it stop it (a daily proof put back does not stop another)
            if lower <= top or sum(self._queued[p] for p in urgent if p < lower) <= coming:
                continue
            for job in reversed(self._running.values()):
                if job.priority is lower and not job.turn:
                    return job
        if coming or top not in (Priority.HINT, Priority.RACE):
            return None
        return self._unfair(top)

    def _unfair(self, priority: Priority) -> Job | None:
        """A running job of ``priority`` whose owner was served ``fair_margin`` seconds
        more than the least served owner waiting at it (the most served first)."""
        least = min(self.service(owner, priority) for owner in self._order[priority])
        found, most = None, least + self.fair_margin
        for job in self._running.values():
            if (
                job.priority is priority
                and job.kind in self.stoppable
                and not job.turn
                and not job.spared
                and (served := self.service(job.owner, priority)) >= most
            ):
                found, most = job, served
        if found is not None:
            found.spared = True
        return found

    def drain(self) -> list[Job]:
        """Every queued and running job, now ``DONE`` (the workers stop)."""
        jobs = [*self._running.values()]
        for p in Priority:
            for mine in self._jobs[p].values():
                jobs.extend(mine)
        for job in jobs:
            self.finish(job)
        return jobs

    # -- inside -----------------------------------------------------------------------------

    def _enqueue(self, job: Job, *, first: bool) -> None:
        job.state = JobState.QUEUED
        jobs, order = self._jobs[job.priority], self._order[job.priority]
        mine = jobs.get(job.owner)
        if mine is None:
            mine = jobs[job.owner] = deque()
            if not first:
                order.append(job.owner)
        if first:  # its owner takes the next turn
            if job.owner in order:
                order.remove(job.owner)
            order.appendleft(job.owner)
        if first:
            mine.appendleft(job)
        else:
            mine.append(job)
        self._queued[job.priority] += 1

    def _dequeue(self, priority: Priority) -> Job:
        """The next job of ``priority``: of the first owner in line served at most
        ``fair_margin`` seconds more than the least served one waiting."""
        jobs, order = self._jobs[priority], self._order[priority]
        served = {owner: self.service(owner, priority) for owner in order}
        least = min(served.values())
        owner = next(o for o in order if served[o] <= least + self.fair_margin)
        order.remove(owner)
        mine = jobs[owner]
        job = mine.popleft()
        if mine:
            order.append(owner)  # the owner's next job waits for the others' turns
        else:
            del jobs[owner]
        self._queued[priority] -= 1
        return job

    def _served(self, job: Job) -> None:
        """Count a run that ended (answered, stopped, preempted) in its owner's service."""
        now, key = self.clock(), (job.priority, job.owner)
        seconds = self.service(job.owner, job.priority) + max(0.0, now - job.started)
        self._service.pop(key, None)
        self._service[key] = (seconds, now)  # the most recently counted last
        while len(self._service) > OWNERS_KEPT:
            del self._service[next(iter(self._service))]

    def _release(self, job: Job) -> None:
        job.state = JobState.DONE
        if job.player is not None:
            self._hinting.discard(job.player)
        if job.identity is not None:
            self._identities[job.identity] -= 1
            if self._identities[job.identity] <= 0:
                del self._identities[job.identity]
        if job.address is not None:
            self._addresses[job.address] -= 1
            if self._addresses[job.address] <= 0:
                del self._addresses[job.address]
