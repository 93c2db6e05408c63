"""One solver worker as the node sees it (its process, its pipe, what it runs), the states
of a worker and of the pool, and the handle of a prefetch (:mod:`.pool` drives them)."""

from __future__ import annotations

import asyncio
import enum
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from .child import Suggested
from .policy import Job, Priority

__all__ = ["PoolState", "Prefetch", "WorkerState", "keyed"]


class PoolState(enum.Enum):
    NEW = "new"
    RUNNING = "running"
    STOPPING = "stopping"
    STOPPED = "stopped"


class WorkerState(enum.Enum):
    STARTING = "starting"
    """Started; the engine is being imported."""
    IDLE = "idle"
    BUSY = "busy"
    CANCELLING = "cancelling"
    """Told to stop its prefetch; free again once it answers."""


class Worker:
    def __init__(self, process: BaseProcess, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.fd = conn.fileno()
        self.state = WorkerState.STARTING
        self.job: Job | None = None
        self.cancelled: int | None = None
        """While ``CANCELLING``: the id of the job it was told to stop."""
        self.jobs = 0
        self.timer: asyncio.TimerHandle | None = None


@dataclass(eq=False)
class Prefetch:
    """A prefetch submitted (:meth:`.SolverWorkers.prefetch`): ``passed`` is set to what a
    search of the quick budget answers as soon as the search is past it (or to the final
    answer), ``result`` to the final answer (or a :class:`.WorkerError`)."""

    job: Job
    passed: asyncio.Future[Suggested] = field(repr=False)
    result: asyncio.Future[Suggested] = field(repr=False)

    @property
    def running(self) -> bool:
        """Whether a worker has it now (not queued, not done)."""
        return self.job.state.value == "running"


def keyed(
    kind: str,
    args: tuple[Any, ...],
    priority: Priority,
    owner: str | None,
    identity: str | None,
    address: str | None,
    deadline: float,
) -> Job:
    """A job counted against its keys; its owner is the identity, else the address."""
    owner = owner if owner is not None else identity or address or ""
    return Job(kind, args, priority, owner, deadline, identity=identity, address=address)
