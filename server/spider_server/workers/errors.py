"""The solver workers' errors.

Refusals are raised at once, before anything is queued; the others end a job that was
accepted. The tree (the roots are the server's, from :mod:`spider_server.errors`)::

    RateLimited (rate_limited)       a request refused; nothing was queued
    └── JobRefused
        ├── HintPending              the player's previous hint is still queued or running
        ├── ProofCapReached          the identity or the address has its cap of proofs
        └── QueueFull                that priority's queue holds its maximum of jobs
    ServerError
    └── WorkerError                  an accepted job that gave no answer
        ├── SolverTimeout            the job ran past its deadline; its worker was killed
        ├── WorkerCrashed            its worker died (or failed) while running it
        └── WorkersClosed            the workers were stopped (or not started)
"""

from __future__ import annotations

from ..errors import RateLimited, ServerError

__all__ = [
    "HintPending",
    "JobRefused",
    "ProofCapReached",
    "QueueFull",
    "SolverTimeout",
    "WorkerCrashed",
    "WorkerError",
    "WorkersClosed",
]


class JobRefused(RateLimited):
    """A job refused by a quota or a queue's bound (wire code ``rate_limited``)."""


class HintPending(JobRefused):
    """The player already has a hint queued or running: one at a time."""


class ProofCapReached(JobRefused):
    """The identity or the address already has its cap of proofs queued or running."""


class QueueFull(JobRefused):
    """The queue of the job's priority holds its maximum of waiting jobs."""


class WorkerError(ServerError):
    """An accepted job ended without an answer."""


class SolverTimeout(WorkerError):
    """The job ran longer than its deadline; its worker was killed and replaced."""


class WorkerCrashed(WorkerError):
    """The worker running the job died, or the solver raised (the message says which)."""


class WorkersClosed(WorkerError):
    """The workers are stopped (or were never started): nothing runs."""
