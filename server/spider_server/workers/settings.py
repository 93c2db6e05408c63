"""The solver workers' settings: how many workers, how long a job may run, the quotas.

Each field has an environment variable ``SPIDER_RACE_<FIELD>`` (upper case), like the
node's other settings: ``SPIDER_RACE_SOLVER_WORKERS=2``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any

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
    proofs_per_identity: int = 2
    """Proofs (and searches) one identity may have queued or running at once."""
    proofs_per_address: int = 4
    """Proofs (and searches) one client address may have queued or running at once."""
    solver_yield_after: int = 8
    """Jobs of higher priorities taken while a lower one waits before the lower one gets a
    turn (0: strict priorities)."""
    solver_jobs_per_worker: int = 200
    """Jobs a worker runs before it is replaced by a fresh one (its memory returned)."""
    solver_nice: int = 5
    """Niceness added to each worker process: the node's event loop wins a contended core."""
    solver_stop_grace: float = 1.0
    """On stop, how long workers get to exit before they are killed."""

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
        for name in ("hint_deadline", "proof_deadline", "solve_deadline", "solver_stop_grace"):
            if not getattr(self, name) > 0:
                raise ConfigError(f"SPIDER_RACE_{name.upper()} must be positive")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> WorkerSettings:
        """Settings from ``SPIDER_RACE_*`` variables; :class:`ConfigError` for a value of
        the wrong type or out of range."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = f"SPIDER_RACE_{f.name.upper()}"
            raw = env.get(name)
            if raw is None or raw == "":
                continue
            kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
            try:
                values[f.name] = int(raw) if kind == "int" else float(raw)
            except ValueError:
                raise ConfigError(f"{name}={raw!r} is not a {kind}") from None
        return cls(**values)
