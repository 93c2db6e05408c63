"""The solver workers with real processes: answers equal the in-process solver's, deadlines
kill, cancelled jobs are dropped, quotas refuse, stop leaves no process, and the calling
process spends no CPU on the solver.

Long jobs are searches with budgets they cannot finish within the test (a spider4 deal
with ``LONG`` positions); every wait has a generous bound, and what is asserted is what
happened, not how fast."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import resource
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest

from spider_engine import Board
from spider_engine.solver import hint as solver_hint
from spider_engine.solver import rank_moves, solve
from spider_server.workers import (
    HintPending,
    Priority,
    ProofCapReached,
    SolverTimeout,
    SolverWorkers,
    WorkerCrashed,
    WorkersClosed,
    WorkerSettings,
)
from tests.conftest import TEST_SOLVER_NICE

LONG = 10**8
"""A budget no test waits for (a spider4 search of it takes hours)."""
BOUND = 60.0
"""Seconds any wait of these tests may take on a busy machine."""

Factory = Callable[..., SolverWorkers]


@pytest.fixture
async def workers() -> AsyncIterator[Factory]:
    made: list[SolverWorkers] = []

    def make(**settings: Any) -> SolverWorkers:
        settings.setdefault("solver_workers", 1)
        settings.setdefault("solver_nice", TEST_SOLVER_NICE)
        pool = SolverWorkers(WorkerSettings(**settings))
        pool.start()
        made.append(pool)
        return pool

    yield make
    for pool in made:
        await pool.stop()


async def until(condition: Callable[[], bool], bound: float = BOUND) -> None:
    deadline = time.monotonic() + bound
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


async def started(
    pool: SolverWorkers, awaitable: Awaitable[Any], running: int
) -> asyncio.Task[Any]:
    """A task awaiting ``awaitable``, once the pool runs ``running`` jobs."""
    task = asyncio.ensure_future(awaitable)
    await until(lambda: pool.running >= running or task.done())
    assert not task.done(), task
    return task


def alive(pid: int) -> bool:
    """Whether a process exists (a zombie counts: it was not reaped)."""
    return os.path.exists(f"/proc/{pid}")


def running(pid: int) -> bool:
    """Whether a process exists and has not exited (a zombie has exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def positions() -> list[Board]:
    """A few full positions: fresh deals and one a few moves in."""
    boards = [Board.deal("spider1", "3"), Board.deal("spider2", "11"), Board.deal("spider4", "7")]
    played = Board.deal("spider2", "5")
    for _ in range(6):
        played.push(rank_moves(played)[0])
    return [*boards, played]


async def test_hints_equal_the_in_process_solver(workers: Factory) -> None:
    pool = workers()
    for board in positions():
        view = Board.from_text(board.view_text())
        expected = solver_hint(view, full=board, budget=3000)
        got = await pool.hint(board.view_text(), board.text(), 3000, player="p")
        assert got == (None if expected is None else expected.text())
    assert pool.completed == 4 and pool.cpu_seconds > 0


async def test_proofs_and_searches_equal_the_in_process_solver(workers: Factory) -> None:
    pool = workers()
    cases = [("spider1", "1", 5000), ("spider1", "2", 5000), ("spider4", "1", 2000)]
    verdicts = []
    for variant, seed, budget in cases:
        solution = solve(Board.deal(variant, seed), budget=budget)
        verdicts.append(solution.verdict)
        proof = await pool.prove(variant, seed, budget)  # the line that won, or None
        assert proof == (tuple(m.text() for m in solution.line) if solution.line else None)
        solved = await pool.solve(Board.deal(variant, seed).text(), budget)
        assert (solved.verdict, solved.positions, solved.line) == (
            solution.verdict,
            solution.positions,
            tuple(solution.texts()),
        )
    assert "won" in verdicts and verdicts[-1] != "won"  # both answers were checked


async def test_a_job_past_its_deadline_is_killed_and_the_pool_goes_on(workers: Factory) -> None:
    pool = workers()
    await until(lambda: pool.spawned == 1 and pool.pids() != [])
    [first] = pool.pids()
    with pytest.raises(SolverTimeout):
        await pool.prove("spider4", "1", LONG, deadline=1.5)
    assert pool.timed_out == 1 and pool.running == 0
    await until(lambda: not alive(first))
    assert await pool.prove("spider1", "1", 5000) is not None
    assert first not in pool.pids() and pool.spawned == 2


async def test_cancelling_a_waiting_caller_drops_its_queued_job(workers: Factory) -> None:
    pool = workers()
    long = await started(pool, pool.prove("spider4", "1", LONG), running=1)
    queued = asyncio.ensure_future(pool.prove("spider1", "1", 5000, priority=Priority.REFILL))
    await until(lambda: pool.queued == 1)
    queued.cancel()
    with pytest.raises(asyncio.CancelledError):
        await queued
    assert pool.queued == 0 and pool.cancelled == 1 and pool.running == 1
    [busy] = pool.pids()
    long.cancel()  # the running job: its worker is told to stop it, and goes on
    with pytest.raises(asyncio.CancelledError):
        await long
    assert pool.cancelled == 2 and pool.running == 0
    assert await pool.prove("spider1", "1", 5000) is not None
    assert pool.completed == 1  # the dropped job never ran
    assert pool.pids() == [busy] and alive(busy) and pool.spawned == 1


async def test_a_hint_nobody_waits_for_has_its_worker_killed(workers: Factory) -> None:
    """A hint's search does not read its pipe: the worker running it is killed."""
    pool = workers()
    board = Board.deal("spider4", "1")
    long = await started(
        pool,
        pool.hint(board.view_text(), board.text(), LONG, player="p", deadline=BOUND),
        running=1,
    )
    [busy] = pool.pids()
    long.cancel()
    with pytest.raises(asyncio.CancelledError):
        await long
    await until(lambda: not alive(busy))
    assert await pool.prove("spider1", "1", 5000) is not None
    assert busy not in pool.pids() and pool.spawned == 2


async def test_one_outstanding_hint_per_player(workers: Factory) -> None:
    pool = workers()
    board = Board.deal("spider4", "1")
    args = (board.view_text(), board.text(), LONG)
    first = await started(pool, pool.hint(*args, player="p"), running=1)
    with pytest.raises(HintPending):
        await pool.hint(*args, player="p")
    other = asyncio.ensure_future(pool.hint(*args, player="q"))
    await until(lambda: pool.queued == 1)
    assert pool.refused == 1
    first.cancel()
    other.cancel()
    await asyncio.gather(first, other, return_exceptions=True)
    # the player's hint is over: the next one is accepted and answered
    small = Board.deal("spider1", "3")
    assert await pool.hint(small.view_text(), small.text(), 3000, player="p") is not None


async def test_caps_of_pending_proofs_per_identity_and_address(workers: Factory) -> None:
    pool = workers(proofs_per_identity=1, proofs_per_address=2)
    ip = "192.0.2.7"
    a = await started(pool, pool.prove("spider4", "1", LONG, identity="a", address=ip), 1)
    with pytest.raises(ProofCapReached):
        await pool.prove("spider1", "1", 5000, identity="a", address=ip)
    b = asyncio.ensure_future(pool.prove("spider1", "1", 5000, identity="b", address=ip))
    await until(lambda: pool.queued == 1)
    with pytest.raises(ProofCapReached):  # a new identity, the same address
        await pool.prove("spider1", "1", 5000, identity="c", address=ip)
    assert pool.refused == 2
    a.cancel()
    with pytest.raises(asyncio.CancelledError):
        await a
    assert await b is not None
    # both places are free again: "a" is accepted (and answered) once more
    assert await pool.prove("spider1", "1", 5000, identity="a", address=ip) is not None


async def test_a_hint_preempts_a_running_refill(workers: Factory) -> None:
    pool = workers()
    refill = await started(pool, pool.prove("spider4", "1", LONG, priority=Priority.REFILL), 1)
    board = Board.deal("spider1", "3")
    move = await asyncio.wait_for(
        pool.hint(board.view_text(), board.text(), 3000, player="p"), BOUND
    )
    assert move is not None and pool.preempted == 1
    await until(lambda: pool.running == 1)  # the refill runs again
    [job] = pool.policy.running_jobs()
    assert job.priority is Priority.REFILL and not refill.done()
    refill.cancel()
    await asyncio.gather(refill, return_exceptions=True)


async def test_a_worker_that_dies_fails_its_job_and_is_replaced(workers: Factory) -> None:
    pool = workers()
    task = await started(pool, pool.prove("spider4", "1", LONG), running=1)
    [pid] = pool.pids()
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(WorkerCrashed):
        await asyncio.wait_for(task, BOUND)
    assert pool.failed == 1
    assert await pool.prove("spider1", "1", 5000) is not None


async def test_stop_with_a_busy_worker_returns_soon_and_leaves_no_process(
    workers: Factory,
) -> None:
    pool = workers(solver_workers=2, solver_stop_grace=0.5)
    busy = await started(pool, pool.prove("spider4", "1", LONG), running=1)
    queued = [
        asyncio.ensure_future(pool.prove("spider4", str(s), LONG, owner=str(s))) for s in (2, 3)
    ]
    await until(lambda: pool.running == 2 and pool.queued == 1)
    pids = pool.pids()
    assert len(pids) == 2 and all(alive(p) for p in pids)
    began = time.monotonic()
    await pool.stop()
    assert time.monotonic() - began < 5.0
    for task in (busy, *queued):
        with pytest.raises(WorkersClosed):
            await task
    assert not [p for p in pids if alive(p)]
    assert multiprocessing.active_children() == []
    with pytest.raises(WorkersClosed):
        await pool.prove("spider1", "1", 5000)
    await pool.stop()  # idempotent


async def test_the_calling_process_runs_no_solver_code(workers: Factory) -> None:
    pool = workers(solver_workers=2, solver_warm=2)
    await until(lambda: pool.spawned == 2)
    small = Board.deal("spider1", "3")  # both workers ready, their start-up paid
    await asyncio.gather(*(pool.hint(small.view_text(), small.text(), 100, player=p) for p in "ab"))
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN)
    before = time.process_time()
    seeds = ("1", "2", "3")
    results = await asyncio.gather(
        *(pool.prove("spider4", s, 30_000, owner=s, deadline=BOUND * 2) for s in seeds)
    )
    spent = time.process_time() - before
    assert len(results) == 3
    assert pool.cpu_seconds > 0.5, pool.cpu_seconds  # the workers did the searching
    assert spent < 0.2, spent
    await pool.stop()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    reaped = (children.ru_utime + children.ru_stime) - (
        children_before.ru_utime + children_before.ru_stime
    )
    assert reaped > 0.5, reaped


async def test_workers_beyond_the_warm_ones_start_when_jobs_wait(workers: Factory) -> None:
    pool = workers(solver_workers=2, solver_warm=0)
    await asyncio.sleep(0.2)
    assert pool.pids() == [] and pool.spawned == 0
    assert await pool.prove("spider1", "1", 5000) is not None
    assert pool.spawned == 1  # one job waited: one worker
    both = [pool.prove("spider1", s, 5000, owner=s) for s in ("1", "2")]
    expected = [solve(Board.deal("spider1", s), budget=5000).verdict == "won" for s in "12"]
    assert [line is not None for line in await asyncio.gather(*both)] == expected
    assert pool.spawned == 2  # never more than solver_workers


async def test_a_worker_is_replaced_after_its_share_of_jobs(workers: Factory) -> None:
    pool = workers(solver_jobs_per_worker=2)
    await until(lambda: pool.pids() != [])
    [first] = pool.pids()
    for seed in ("1", "2"):
        await pool.prove("spider1", seed, 2000)
    assert pool.spawned == 2
    await until(lambda: not alive(first))
    assert await pool.prove("spider1", "1", 5000) is not None


ORPHAN = """
import asyncio, sys
from spider_server.workers import SolverWorkers, WorkerSettings

async def main():
    pool = SolverWorkers(WorkerSettings(solver_workers=1))
    pool.start()
    task = asyncio.ensure_future(pool.prove("spider4", "1", 10**8))
    while pool.running < 1:
        await asyncio.sleep(0.02)
    print(pool.pids()[0], flush=True)
    await task

if __name__ == "__main__":
    asyncio.run(main())
"""


async def test_a_busy_worker_exits_when_its_node_is_killed(tmp_path: Any) -> None:
    script = tmp_path / "node.py"
    script.write_text(ORPHAN)
    node = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert node.stdout is not None
        line = await asyncio.wait_for(asyncio.to_thread(node.stdout.readline), BOUND)
        worker = int(line)
        assert alive(worker)
    finally:
        node.kill()
        node.wait()
    await until(lambda: not running(worker))  # no search burns a core for nobody


NODE_MODULES = ("redis", "websockets", "spider_client", "pydantic", "msgpack", "spider_race")
REPORT = (
    "import sys, spider_server.workers.child\n"
    "from spider_server.workers.child import run_job\n"
    "run_job('prove', ('spider1', '1', 100))\n"
    "node = [m for m in sys.modules if m.split('.')[0] in {names!r}]\n"
    "node += [m for m in sys.modules if m.startswith('spider_server.')"
    " and not m.startswith(('spider_server.workers', 'spider_server.errors'))]\n"
    "sys.exit(7 if node else 0)\n"
)


def test_a_worker_imports_nothing_of_the_node() -> None:
    context = multiprocessing.get_context("spawn")
    process = context.Process(target=exec, args=(REPORT.format(names=NODE_MODULES),))
    process.start()
    process.join(BOUND)
    assert process.exitcode == 0


@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="the system has no idle policy")
@pytest.mark.parametrize(("nice", "policy"), [(19, "SCHED_IDLE"), (5, "SCHED_OTHER")])
async def test_workers_run_niced_and_idle_at_the_highest_niceness(
    workers: Factory, nice: int, policy: str
) -> None:
    pool = workers(solver_nice=nice, solver_warm=1)
    await until(lambda: len(pool.pids()) == 1)
    [pid] = pool.pids()
    wanted = (min(19, os.getpriority(os.PRIO_PROCESS, 0) + nice), getattr(os, policy))
    # the worker sets both first thing; at the idle policy beside busy programs it gets
    # little CPU, so it is watched until it has, not asked to search
    await until(
        lambda: (os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid)) == wanted,
        bound=600,
    )
    assert (os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid)) == wanted


async def test_a_refill_computes_its_share_of_the_wall_time_and_a_race_proof_all_of_it(
    workers: Factory,
) -> None:
    """At ``refill_share`` 0.5 a refill's worker sleeps at least as long as it computes (up
    to its last 500 positions); hints, races' proofs and pars are sent to the worker at a
    share of 1, refills at 0.5."""
    pool = workers(refill_share=0.5)
    loop = asyncio.get_running_loop()
    assert await pool.prove("spider1", "1", 5000) is not None  # the worker is up
    before, began = pool.cpu_seconds, loop.time()
    # 30,000 positions of a four-suit deal: a second or so of search, settling nothing
    await pool.prove("spider4", "2", 30_000, priority=Priority.REFILL)
    wall, cpu = loop.time() - began, pool.cpu_seconds - before
    assert cpu > 0.1, cpu  # it searched
    assert wall >= (cpu - 0.05) / 0.5, (wall, cpu)
    sent: list[tuple[Any, ...]] = []
    [worker] = pool._workers
    send = worker.conn.send
    worker.conn.send = lambda message: (sent.append(message), send(message))[1]  # type: ignore[method-assign]
    assert await pool.prove("spider1", "1", 5000) is not None
    assert await pool.prove("spider1", "1", 5000, priority=Priority.REFILL) is not None
    await pool.par("spider1", "1", 5000)  # a finished race's par: its players wait
    assert [m[3] for m in sent] == [1.0, 0.5, 1.0]
    assert sent[2][1] == "par"
