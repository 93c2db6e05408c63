"""The solver-load experiment: the same players' acks without solver work, then with
players asking for hints back to back and the seed pool refilling, in one run.

``--hint-spam K`` adds K players, each alone in its own ``spider4`` race with hints,
which ask for hints back to back, each at a position new to them (a move first, so that
the node keeps no hint of it and a worker searches it; the next as soon as the last is
answered, half a second after a refusal); the server's hints per race are lifted for them, its hints a minute per
player and per address are its defaults;
``--pool-refill`` makes the seed pool refill ``spider4`` deals (the bench's own server
keeps a pool so large that it never fills: a refill always runs); ``--pars N`` finishes N
races one after another (``spider1`` and ``spider2`` in turn: created, started, resigned)
and waits for each one's par, timing the wait from the ``finished`` event to the ``par``
(give it a measured time long enough for them all: the players' acks are measured to its
end; pars still searching then are waited for, unmeasured). The measured time is
cut in two halves: in the first (``quiet``) nobody asks for a hint and nothing is asked
of the pool; at the middle the spammers start and a client creates a winnable ``spider4``
race and leaves it (the variant is then asked for: the pool refills from then on, and a
refill cannot be called back, which is why the quiet half comes first). Acks count on the
side of their due time. The server's ``/metrics`` is read at the middle and at the end:
the solver jobs it completed in the loaded half, and the jobs running at the end (the
load was there). With spammers, an honest player in its own ``spider4`` race with hints
moves and asks for a hint every few seconds in both halves (:mod:`.honesthint`): its hints'
times, quiet and loaded."""

from __future__ import annotations

import asyncio
import contextlib
import urllib.request
from dataclasses import dataclass, field

from spider_client import Client, RateLimited, SpiderClientError

from .honesthint import FreshPositions, HonestHints
from .tools import bounded, close_all, connect_client

__all__ = ["SolverLoad", "solver_metrics"]

VARIANT = "spider4"
PAR_VARIANTS = ("spider1", "spider2")


def solver_metrics(url: str) -> dict[str, float] | None:
    """The ``spider_solver_*`` samples of the server's ``/metrics`` at ``url``; None when
    it does not say."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    found = {}
    for line in text.splitlines():
        if line.startswith("spider_solver_"):
            name, _, value = line.rpartition(" ")
            found[name] = float(value)
    return found or None


@dataclass
class SolverLoad:
    """The spammers and the refill of one run (see the module)."""

    url: str
    metrics_url: str
    spammers: int
    refill: bool
    pars: int = 0
    """Races finished one after another in the loaded half, spider1 and spider2 in turn,
    each waited for until its par lands."""
    clients: list[Client] = field(default_factory=list)
    hints: int = 0
    """Hints answered in the loaded half."""
    answered: list[int] = field(default_factory=list)
    """Hints answered to each spammer."""
    honest: HonestHints | None = None
    """The honest player's hints, with spammers."""
    refused: int = 0
    """Hints refused by the server's hints a minute (``rate_limited``), not errors."""
    errors: dict[str, int] = field(default_factory=dict)
    completed: float | None = None
    """Solver jobs the server completed in the loaded half."""
    running_at_end: float | None = None
    preempted: float | None = None
    """Refills the server stopped for a hint in the loaded half."""
    started: float | None = None
    """Solver worker processes the server started in the loaded half."""
    par_waits: list[float] = field(default_factory=list)
    """Seconds from each race's finish (the ``finished`` event here) to its ``par``."""
    par_cpu: float | None = None
    """CPU seconds the solver workers spent on pars in the loaded half."""
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)

    async def setup(self) -> None:
        """Connect the spammers and start their races (before the timed phase)."""
        made = await bounded(
            [f"hinter{i}" for i in range(self.spammers)],
            # a hint may take long on a busy machine: never sent again while it is worked out
            lambda name: connect_client(self.url, name, resend_after=120.0),
            concurrency=10,
        )
        self.clients = [c for c in made if isinstance(c, Client)]
        if len(self.clients) != self.spammers:
            raise RuntimeError(f"could not connect the hint spammers: {made!r}")
        self.answered = [0] * self.spammers
        if self.spammers:
            self.honest = HonestHints(self.url)
            await self.honest.setup()
        for i, c in enumerate(self.clients):
            await c.create_race(
                variant=VARIANT, seed=f"hints-{i}", hints=True, countdown=0, time_limit=3600
            )
            await c.ready()
            await c.wait_until(lambda x: x.view is not None, timeout=120)

    def _error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1

    async def _spam(self, index: int, client: Client) -> None:
        positions = FreshPositions(client)
        while True:
            try:
                await positions.next()  # a new position: its hint is searched, not kept
                await client.hint()
                self.hints += 1
                self.answered[index] += 1
            except RateLimited:
                self.refused += 1
                await asyncio.sleep(0.5)
            except SpiderClientError as e:
                self._error(type(e).__name__)
                await asyncio.sleep(0.5)

    async def _start_refill(self) -> None:
        """Ask for a winnable ``spider4`` race and leave it: its variant is asked for."""
        client = await connect_client(self.url, "refill")
        try:
            await client.create_race(variant=VARIANT, winnable=True, countdown=0)
            await client.leave()
        except SpiderClientError as e:
            self._error(type(e).__name__)
        finally:
            await client.close()

    async def _finish_races(self) -> None:
        """Race after race: create, start, resign; then wait for the par (one at a time:
        each par's wait is its own search, not a queue of others)."""
        loop = asyncio.get_running_loop()
        client = await connect_client(self.url, "par-racer")
        try:
            for i in range(self.pars):
                variant = PAR_VARIANTS[i % len(PAR_VARIANTS)]
                try:
                    await client.create_race(variant=variant, countdown=0)
                    await client.ready()
                    await client.wait_until(lambda c: c.view is not None, timeout=120)
                    await client.resign()
                    await client.wait_until(lambda c: c.finished, timeout=120)
                    finished = loop.time()
                    await client.wait_until(_par_settled, timeout=900)
                    self.par_waits.append(loop.time() - finished)
                except (SpiderClientError, TimeoutError) as e:
                    self._error(f"par {type(e).__name__}")
        finally:
            await client.close()

    async def run(self, middle: float, end: float) -> None:
        """At loop time ``middle`` start the load; at ``end`` stop it."""
        loop = asyncio.get_running_loop()
        honest = self.honest
        if honest is not None:  # its quiet samples (the last one ends before the spam)
            await honest.run(middle, honest.quiet)
        await asyncio.sleep(max(0.0, middle - loop.time()))
        before = await asyncio.to_thread(solver_metrics, self.metrics_url)
        self._tasks = [asyncio.create_task(self._spam(i, c)) for i, c in enumerate(self.clients)]
        if honest is not None:
            loaded = honest.run_loaded(end, lambda: self.answered)
            self._tasks.append(asyncio.create_task(loaded))
        if self.refill:
            self._tasks.append(asyncio.create_task(self._start_refill()))
        pars = asyncio.create_task(self._finish_races()) if self.pars else None
        if pars is not None:
            self._tasks.append(pars)
        await asyncio.sleep(max(0.0, end - loop.time()))
        if pars is not None:  # the players' acks are measured to ``end``; the pars go on
            await asyncio.wait([pars], timeout=900)
        after = await asyncio.to_thread(solver_metrics, self.metrics_url)
        await self.stop()
        if before is not None and after is not None:
            key = "spider_solver_jobs_completed_total"
            self.completed = after.get(key, 0) - before.get(key, 0)
            for name, key in (
                ("preempted", "spider_solver_jobs_preempted_total"),
                ("started", "spider_solver_workers_started_total"),
            ):
                setattr(self, name, after.get(key, 0) - before.get(key, 0))
            self.running_at_end = after.get("spider_solver_jobs_running")
            key = 'spider_solver_cpu_seconds_total{kind="par"}'
            self.par_cpu = after.get(key, 0) - before.get(key, 0)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._tasks = []

    async def close(self) -> None:
        await self.stop()
        await close_all(self.clients)
        if self.honest is not None:
            await self.honest.close()


def _par_settled(client: Client) -> bool:
    """Whether the client's race has its settled par (not a provisional line)."""
    par = client.race.par if client.race is not None else None
    return par is not None and not par.provisional
