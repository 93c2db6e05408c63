"""The solver workers' settings: how many workers, how long a job may run, the quotas.

The node builds them from its own settings (:meth:`WorkerSettings.from_settings`): each
field is a setting of :class:`spider_server.settings.Settings` of the same name, with its
``SPIDER_RACE_<FIELD>`` variable and its range there (``SPIDER_RACE_SOLVER_WORKERS=2``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields

from ..errors import ConfigError

__all__ = ["WorkerSettings", "default_workers"]


def default_workers() -> int:
    """One worker per core this process may use, less one for the node (at least one)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


@dataclass(frozen=True, kw_only=True)
class WorkerSettings:
    """The solver workers' settings. Times are seconds."""

    solver_workers: int = field(default_factory=default_workers)
    """Worker processes (the machine's cores less one, at least one)."""
    solver_warm: int = 1
    """Workers started with the node; the others start when jobs wait (0: none before the
    first job)."""
    solver_queue: int = 64
    """Jobs that may wait per priority (hints, races' proofs, refills); more are refused."""
    hint_deadline: float = 10.0
    """How long one hint may run in its worker before the worker is killed."""
    proof_deadline: float = 60.0
    """How long proving one deal may run before its worker is killed."""
    solve_deadline: float = 300.0
    """How long one general search (``solve``) may run before its worker is killed."""
    par_deadline: float = 600.0
    """How long the search for one deal's par (``par``) may run before its worker is killed."""
    proofs_per_identity: int = 2
    """Proofs (and searches) one identity may have queued or running at once."""
    proofs_per_address: int = 4
    """Proofs (and searches) one client address may have queued or running at once."""
    solver_yield_after: int = 8
    """Jobs of higher priorities taken while a lower one waits before the lower one gets a
    turn (0: strict priorities)."""
    solver_jobs_per_worker: int = 200
    """Jobs a worker runs before it is replaced by a fresh one (its memory returned)."""
    solver_nice: int = 19
    """Niceness added to each worker process: the node's event loop wins a contended core."""
    solver_stop_grace: float = 1.0
    """On stop, how long workers get to exit before they are killed."""
    refill_share: float = 0.25
    """The share of wall time a worker computes for a job of the lowest priority (the
    pool's refills, pars), resting in between (1: no rest); such a job's deadline is
    divided by it."""

    def __post_init__(self) -> None:
        for name in ("solver_workers", "solver_queue", "solver_jobs_per_worker"):
            if getattr(self, name) < 1:
                raise ConfigError(f"SPIDER_RACE_{name.upper()} must be at least 1")
        for name in (
            "solver_warm",
            "proofs_per_identity",
            "proofs_per_address",
            "solver_yield_after",
            "solver_nice",
        ):
            if getattr(self, name) < 0:
                raise ConfigError(f"SPIDER_RACE_{name.upper()} must not be negative")
        for name in (
            "hint_deadline",
            "proof_deadline",
            "solve_deadline",
            "par_deadline",
            "solver_stop_grace",
        ):
            if not getattr(self, name) > 0:
                raise ConfigError(f"SPIDER_RACE_{name.upper()} must be positive")
        if not 0 < self.refill_share <= 1:
            raise ConfigError("SPIDER_RACE_REFILL_SHARE must be above 0 and at most 1")

    @classmethod
    def from_settings(cls, settings: object) -> WorkerSettings:
        """The workers' part of the node's settings (:class:`spider_server.settings.
        Settings`, where each has its ``SPIDER_RACE_*`` variable and its range): the
        fields of the same names."""
        return cls(**{f.name: getattr(settings, f.name) for f in fields(cls)})
