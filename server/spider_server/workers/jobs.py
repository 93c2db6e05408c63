"""The jobs the solver's workers take (:class:`JobsApi`, the public half of
:class:`.SolverWorkers`): a hint, a suggestion, a prefetch, a proof, a general search."""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from .child import ParSolved, Solved, Suggested
from .errors import JobRefused, WorkersClosed
from .policy import Job, JobPolicy, Priority
from .settings import WorkerSettings
from .worker import PoolState, Prefetch, keyed

__all__ = ["JobsApi", "Pool"]


class Pool(Protocol):
    """What the jobs stand on: the pool's queue and its settings (:class:`.SolverWorkers`
    is one; each method of :class:`JobsApi` takes it as ``self``)."""

    settings: WorkerSettings
    policy: JobPolicy
    state: PoolState
    refused: int
    _futures: dict[int, asyncio.Future[Any]]
    _passed: dict[int, asyncio.Future[Any]]

    async def _run(self, job: Job) -> Any:
        """Queue ``job`` and wait for its answer."""
        ...

    def _dispatch(self) -> None:
        """Give queued jobs to idle workers."""
        ...

    def _abandon(self, job: Job) -> None:
        """Drop a queued job, or tell its worker to stop."""
        ...


class JobsApi:
    """What callers ask of the workers; the pool (:class:`.SolverWorkers`, a
    :class:`Pool`) runs them."""

    async def hint(
        self: Pool,
        view_text: str,
        full_text: str,
        budget: int,
        *,
        player: str,
        deadline: float | None = None,
    ) -> str | None:
        """The solver's hint (:func:`spider_engine.solver.hint`) for a player's position:
        the move's text, None when there is no legal move. One at a time per ``player``
        (:class:`HintPending`)."""
        job = Job(
            "hint",
            (view_text, full_text, budget),
            Priority.HINT,
            player,
            deadline or self.settings.hint_deadline,
            player=player,
        )
        result: str | None = await self._run(job)
        return result

    async def suggest(
        self: Pool,
        view_text: str,
        full_text: str,
        budget: int,
        *,
        player: str,
        deadline: float | None = None,
    ) -> Suggested:
        """:meth:`hint` with the other moves players would rank and the solver's verdict
        (a :class:`Suggested`)."""
        job = Job(
            "suggest",
            (view_text, full_text, budget),
            Priority.HINT,
            player,
            deadline or self.settings.hint_deadline,
            player=player,
        )
        result: Suggested = await self._run(job)
        return result

    def prefetch(self: Pool, full_text: str, budget: int, quick: int, *, owner: str) -> Prefetch:
        """Search a position's hint before it is asked for, at the lowest priority
        (:attr:`Priority.PREFETCH`; see :class:`Prefetch` for what it tells, and when).
        Refusals (:class:`QueueFull`) are raised before anything is queued; stop it with
        :meth:`cancel` (a running prefetch is stopped without killing its worker)."""
        if self.state is not PoolState.RUNNING:
            raise WorkersClosed("the solver's workers are not running")
        job = Job(
            "prefetch",
            (full_text, budget, quick),
            Priority.PREFETCH,
            owner,
            self.settings.hint_deadline,
        )
        try:
            self.policy.submit(job)
        except JobRefused:
            self.refused += 1
            raise
        loop = asyncio.get_running_loop()
        handle = Prefetch(job, loop.create_future(), loop.create_future())
        self._futures[job.id] = handle.result
        self._passed[job.id] = handle.passed
        self._dispatch()
        return handle

    def cancel(self: Pool, handle: Prefetch) -> None:
        """Stop a prefetch: dropped when queued, told to stop when running; its futures are
        cancelled. Idempotent."""
        for future in (
            self._futures.pop(handle.job.id, None),
            self._passed.pop(handle.job.id, None),
        ):
            if future is not None and not future.done():
                future.cancel()
        self._abandon(handle.job)

    async def prove(
        self: Pool,
        variant: str,
        seed: str,
        budget: int,
        *,
        priority: Priority = Priority.RACE,
        owner: str | None = None,
        identity: str | None = None,
        address: str | None = None,
        deadline: float | None = None,
    ) -> tuple[str, ...] | None:
        """The winning line that proves the deal of ``seed`` winnable within ``budget``
        positions, None when it is not proven. ``owner`` (default: the identity, else the
        address) takes turns with other owners of the priority; ``identity`` and
        ``address`` count against their caps (:class:`ProofCapReached`)."""
        keys = (owner, identity, address, deadline or self.settings.proof_deadline)
        line = await self._run(keyed("prove", (variant, seed, budget), priority, *keys))
        return tuple(line) if line else None

    async def solve(
        self: Pool,
        position_text: str,
        budget: int,
        *,
        priority: Priority = Priority.REFILL,
        owner: str | None = None,
        identity: str | None = None,
        address: str | None = None,
        deadline: float | None = None,
    ) -> Solved:
        """A general search of a full position (:func:`spider_engine.solver.solve`), keys as
        for :meth:`prove`."""
        keys = (owner, identity, address, deadline or self.settings.solve_deadline)
        solved: Solved = await self._run(keyed("solve", (position_text, budget), priority, *keys))
        return solved

    async def par(
        self: Pool, source: str, seed: str | None, budget: int, *, deadline: float | None = None
    ) -> ParSolved:
        """The par (:func:`spider_engine.par.par`) of ``seed``'s deal of variant ``source``
        (seed None: of position ``source``), before the refills (after hints and races'
        proofs), owner ``par``; it does not rest as refills do."""
        deadline = deadline or self.settings.par_deadline
        job = Job("par", (source, seed, budget), Priority.PAR, "par", deadline)
        solved: ParSolved = await self._run(job)
        return solved
