"""A server node's life: start, stop (SIGTERM), its periodic loops, and the races'
transitions. One :class:`Node` serves websocket connections on ``/ws`` and plain HTTP
(:mod:`.transport.http`) on the same port; the nodes of a deployment share one Redis, one
database and one token secret; any node serves any race. It joins each connection's
transport and session and gives the sessions their context (stores, hub, seed pool, clock).

Transitions due at a time (a countdown's end, a time limit) or when every game is over
are decided by :func:`~.race.due_transition` alone, on the light view each watch keeps from
the events (no read from Redis), every ``tick``, by every node for the races its connections
watch (it also emits their ghosts); the check-and-set on the race's version lets one
succeed. A race nobody watches moves on when someone next joins it. Presence is decided by
:mod:`.runners.presence` the same way; finished races are archived by :mod:`.runners.archiver`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

import websockets
from websockets.asyncio.server import Server, ServerConnection, serve

from . import race as rules
from .closing import between_turns, bounded, ended
from .errors import Unavailable
from .fanout.changes import Changes
from .fanout.hub import Hub
from .fanout.watches import RaceWatch
from .limits import AddressLimits, Proxies
from .metrics import Metrics
from .race import Limits, Race
from .runners.archiver import Archiver
from .runners.ghosts import GhostRunner
from .runners.hints import Hints
from .runners.lobby import Lobby
from .runners.par import ParRunner
from .runners.presence import Presence
from .runners.rebuild import Rebuild
from .runners.seeds import Seeds
from .runners.timing import LoopTimers
from .runners.transitions import Advancer
from .session import Context, Session
from .session.exports import Exports
from .session.snapshots import Snapshots
from .settings import Settings, time_limits
from .store import Store, archive_of, ranked_records, redisconn
from .store.archive_races import FinishedRaces
from .transport import (
    CLOSE_RESTART,
    Connection,
    EventFrame,
    Writes,
    backlog,
    check_websockets,
    read_frames,
    server_side,
)
from .transport.http import AccountRoutes, Http, OpenFiles
from .workers import SolverWorkers, WorkerSettings

__all__ = ["RESULTS_GRACE", "Node", "check_libraries"]

log = logging.getLogger(__name__)

RESULTS_GRACE = 5.0
"""Seconds a finished race's results may wait for the node that finished it before every
node's background step writes them."""


def check_libraries() -> None:
    """ConfigError unless the installed websockets, redis-py and hiredis have the private
    attributes the transport and the Redis links use (see :mod:`.transport` and
    :mod:`.store.redisconn`): a clear error at start rather than an AttributeError mid-race."""
    check_websockets()
    redisconn.check_redis()


class Node:
    """One server node. ``await start()`` listens; ``await close()`` closes every connection
    with 1012 (clients reconnect to this or another node) and stops. While ``draining``
    (from SIGTERM on, see :meth:`serve_until_signalled`) ``/readyz`` answers 503."""

    def __init__(
        self,
        settings: Settings,
        *,
        redis_url: str,
        secret: bytes,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        """The node's time when given (tests move it on): :meth:`now` takes it as it is."""
        self.redis_url = redis_url
        self.secret = secret
        self.limits = Limits(
            max_players=settings.max_players,
            max_time_limit=settings.max_time_limit,
            max_countdown=settings.max_countdown,
            away_grace=settings.away_grace,
            idle_limit=settings.idle_limit,
            rated_idle_limit=settings.rated_idle_limit,
            rated_time_limits=time_limits(settings.rated_time_limits),
        )
        self.metrics = Metrics()
        self.timers = LoopTimers(self.metrics)
        """The collector's pauses and the loop's lag, timed (:mod:`.runners.timing`)."""
        self.connections: set[Connection] = set()
        # Every write is a check-and-set, so a command retried after a lost reply is safe.
        self.redis: Any = redisconn.connect(redis_url)
        # health checks ask once, quickly, without retries
        self._health: Any = redisconn.connect(redis_url, health=True)
        archive = archive_of(settings)
        self.store = Store.connect(
            self.redis,
            settings,
            clock=self.now,
            health=self._health,
            archived=None if archive is None else ranked_records(archive),
        )
        """The stores, one a thing kept (:mod:`.store`; a record missing in Redis is read
        from the archive)."""
        self.finished = FinishedRaces.of(self.store.races, archive)
        """Finished races read from Redis, else from the archive (:mod:`.store.archive_races`)."""
        self.archiver = Archiver(self.store, settings, self.now, archive, self.finished.archived)
        """Finished races written to the database (:mod:`.runners.archiver`)."""
        self.rebuild = Rebuild(self.store, self.archiver, settings, self.now)
        """The ratings cache rebuilt, today's data archived once (:mod:`.runners.rebuild`)."""
        self.hub = Hub(self.redis, self.store, node=settings.node, on_event=self._on_event)
        self.changes = Changes(self.store, self.hub)
        """Race changes committed and their events handed to the hub."""
        self.presence = Presence(self.store, self.changes, settings, clock=self.now, spawner=self)
        self.workers = SolverWorkers(WorkerSettings.from_settings(settings))
        """The solver's worker processes: hints and proofs (never in this process)."""
        self.metrics.solver, self.metrics.archive = self.workers, self.archiver
        self.pars = ParRunner(
            self.store,
            self.changes,
            self.workers,
            settings,
            clock=self.now,
            spawner=self,
            finished=self.finished,
        )
        """Finished deals' pars, searched in the background (:mod:`.runners.par`)."""
        self.advancer = Advancer(
            self.store, self.changes, self.pars, self.metrics, self, self.now, self.archiver
        )
        """The races' transitions, made when due."""
        self.seeds = Seeds(
            self.store,
            self.changes,
            settings,
            secret,
            clock=self.now,
            on_prepared=self.advancer.advance,
            workers=self.workers,
        )
        """Proven-winnable seeds: winnable races and the daily deals."""
        self.lobby = Lobby(self.store, self.changes, settings, clock=self.now)
        """Quick match and the open races (the matching loop runs on every node)."""
        self.writes = Writes(settings)
        self.proxies = Proxies(settings.trusted_proxies)  # the load balancers' word counts
        self.addresses = AddressLimits.of(settings, self.store.limits, clock=self.now)
        """The limits per client address, shared by every node (docs/server.md, "Limits")."""
        self.account_routes = AccountRoutes.of(settings, archive, self.redis, self.now, self)
        self.http = Http(
            accounts=self.account_routes,  # sign-up, sign-in, sessions (docs/protocol.md)
            unready=self.unready,
            report=self.archiver.report,  # the archive's line of /readyz
            metrics=self.metrics_text,
            proxies=self.proxies,
            open_files=OpenFiles(settings.fd_reserve),
            refused=self._refused,
            addresses=self.addresses,
            export=Exports(self.finished, self.archiver, self.now).record,
        )
        self.hints = Hints(self.workers, settings, self.metrics)
        """Hints searched before they are asked for, and kept (:mod:`.runners.hints`)."""
        self.context = Context(
            settings=settings,
            limits=self.limits,
            secret=secret,
            store=self.store,
            hub=self.hub,
            seeds=self.seeds,
            workers=self.workers,
            metrics=self.metrics,
            addresses=self.addresses,
            clock=self.now,
            transitions=self.advancer,
            changes=self.changes,
            spawner=self,
            presence=self.presence,
            hints=self.hints,
            lobby=self.lobby,
            snapshots=Snapshots(settings.snapshot_cache),
            archiver=self.archiver,
            finished=self.finished,
            accounts=self.account_routes.accounts,
        )
        self.ghosts = GhostRunner(self.store, self.changes, self.now, self, self._watched_running)
        self.server: Server | None = None
        self.offset = 0.0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._loops: list[asyncio.Task[Any]] = []
        self._advancing: set[str] = set()
        self._closed = False
        self.draining = False
        """From SIGTERM (or :meth:`close`) on: ``/readyz`` answers 503."""
        self._idle = asyncio.Event()
        """Set whenever the last connection ends."""

    # -- life -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Check the libraries, connect to Redis, start the fan-out and the timers, and
        listen."""
        check_libraries()
        with contextlib.suppress(Unavailable):
            await self._measure_clock()
            reason = await self.store.durability_unmet()
            if reason is not None:  # not ready until it can be had (every probe asks)
                log.warning("%s: commits fail and /readyz answers 503 until it is met", reason)
        with contextlib.suppress(Unavailable):  # else the archive step connects when it can
            await self.archiver.open()
        await self.hub.start()
        self.timers.start()
        self.workers.start()
        loop = asyncio.get_running_loop()
        self._loops = [
            loop.create_task(self._tick_loop()),
            loop.create_task(self._sweep_loop()),
            loop.create_task(self.presence.run(self._presence_items)),
            loop.create_task(self.timers.run()),
            loop.create_task(self._results_loop()),
            loop.create_task(self.seeds.run()),
            loop.create_task(self.lobby.run()),
            loop.create_task(self.archiver.run()),
            loop.create_task(self.rebuild.run()),
        ]
        s = self.settings
        self.server = await serve(
            self._handle,
            s.host,
            s.port,
            process_request=self.http.process_request,
            max_size=max(s.max_frame * 16, 65536),
            ping_interval=s.ping_interval,
            ping_timeout=s.ping_timeout,
            compression=None,
            create_connection=server_side(s, self.proxies, self.addresses),
        )

    async def serve_until_signalled(self, ready: asyncio.Event | None = None) -> None:
        """Serve (the node started) until SIGTERM or SIGINT, or until cancelled; then
        close: every connection gets 1012. ``ready`` is set once the signals are heard.

        SIGTERM drains first: ``/readyz`` answers 503 at once, so that load balancers send
        no new players here, while the connections open are still served for
        ``settings.drain`` seconds; then they are closed. SIGINT (Ctrl-C), or a second
        signal while draining, closes at once."""
        signals: asyncio.Queue[int] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, signals.put_nowait, sig)
        if ready is not None:
            ready.set()
        try:
            first = await signals.get()
            if first == signal.SIGTERM and self.settings.drain > 0:
                self.draining = True
                log.info(
                    "draining: /readyz answers 503, connections are closed in %g s",
                    self.settings.drain,
                )
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.settings.drain):
                        await signals.get()
        finally:
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.remove_signal_handler(sig)
            log.info("closing: connections get 1012")
            await self.close()

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self, *, code: int = CLOSE_RESTART, timeout: float = 10.0) -> None:
        """Stop accepting, close every connection with ``code``, stop the timers (they get
        ``timeout`` seconds), the seed pool and the solver's workers, disconnect from
        Redis. Idempotent."""
        self.draining = True
        if self.server is not None:
            self.server.close(close_connections=True, code=code, reason="server restarting")
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    await self.server.wait_closed()
                    while self.connections:  # their handlers' last steps
                        self._idle.clear()
                        await self._idle.wait()
        self._closed = True
        self.writes.close()
        self.timers.stop()
        self.seeds.close()  # its loop ends even if a cancellation is lost in a timeout
        for task in self._loops:
            task.cancel()
        if self._tasks:  # background work (transitions, presence) gets a short deadline
            await asyncio.wait(list(self._tasks), timeout=min(timeout, 2.0))
        for task in list(self._tasks):
            task.cancel()
        # every step below has a deadline: a task that will not end, or a link that will
        # not close, is left behind with a warning rather than holding the node open
        await ended([*self._loops, *self._tasks])
        self._loops = []
        await bounded(self.seeds.stopped())
        await bounded(self.workers.stop())  # after the pool: no proof is awaited now
        await bounded(self.hub.close())
        await bounded(self.store.aclose())
        await bounded(self.archiver.close())
        await bounded(self.account_routes.aclose())
        for client in (self.redis, self._health):
            await bounded(client.aclose())

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any] | None:
        """Run ``coro`` in the background, kept until done; failures are logged. Once the
        node is closed, nothing more runs (None)."""
        if self._closed:
            coro.close()
            return None
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            exc = task.exception()
            if not isinstance(exc, (Unavailable, websockets.ConnectionClosed)):
                log.error("background task failed", exc_info=exc)

    # -- time -------------------------------------------------------------------------------

    def now(self) -> float:
        """The deployment's time: this machine's clock corrected to Redis's; or the
        ``clock`` the node was given. Every window of the node takes its time here."""
        return time.time() + self.offset if self.clock is None else self.clock()

    async def _measure_clock(self) -> None:
        if self.clock is None:  # a given clock is taken as it is
            before = time.time()
            redis_now = await self.store.now()
            self.offset = redis_now - (before + time.time()) / 2

    # -- what /readyz and /metrics say ------------------------------------------------------

    async def unready(self) -> str | None:
        """Why ``/readyz`` answers 503 now (draining, Redis not answering, or the
        durability asked for cannot be had: checked on every probe); None when the node
        is ready for new connections."""
        if self.draining:
            return "draining"
        if not await self.store.answers():  # PING, one try within a second
            return "redis is not answering"
        try:
            return await self.store.durability_unmet()
        except Unavailable:
            return "redis is not answering"

    def races_by_state(self) -> Counter[str]:
        return Counter(w.state for w in self.hub.watches.values() if w.state)

    def subscriptions(self) -> Counter[str]:
        """Connections following a race here, by role (player, spectator)."""
        return Counter(s.role for w in self.hub.watches.values() for s in w.subs)

    def backlog(self) -> tuple[int, int]:
        """Connections whose frames wait for their reader (the socket takes no more, or
        frames are queued behind one that waits), and the frames waiting in all."""
        return backlog(self.connections)

    def metrics_text(self, accept: str | None = None) -> tuple[bytes, str]:
        """``/metrics``: the body and its content type, in the format ``accept`` asks for
        (OpenMetrics, or the Prometheus text format)."""
        return self.metrics.exposition(
            accept, self.races_by_state(), self.subscriptions(), self.backlog()
        )

    # -- connections ------------------------------------------------------------------------

    def _refused(self, limit: str) -> None:
        self.metrics.refused_total[limit] += 1

    async def _handle(self, ws: ServerConnection) -> None:
        conn = Connection(ws, self.writes, self.settings, self.metrics)
        session = Session(self.context, conn)
        self.connections.add(conn)
        self.metrics.connections = len(self.connections)
        self.metrics.connections_total += 1
        try:
            await read_frames(conn, session)
        finally:
            self.connections.discard(conn)
            self.metrics.connections = len(self.connections)
            if not self.connections:
                self._idle.set()

    # -- transitions ------------------------------------------------------------------------

    async def advance(self, code: str) -> Race | None:
        """The race now, after performing whatever transition is due (start or finish); None
        when there is no such race. Safe on every node at once: one commit wins."""
        return await self.advancer.advance(code)

    def _on_event(self, watch: RaceWatch, event: EventFrame) -> None:
        """A countdown whose end has passed already (a zero countdown): start it now."""
        if (
            event.type == "countdown"
            and watch.view is not None
            and rules.due_transition(watch.view, self.now()) == "start"
        ):
            self._try_advance(watch)

    def _try_advance(self, watch: RaceWatch) -> None:
        if watch.code in self._advancing:
            return
        watch.next_attempt = time.monotonic() + 0.5
        self._advancing.add(watch.code)

        async def run() -> None:
            try:
                if await self.advance(watch.code) is None:
                    watch.view = None  # the race is gone (everyone left): nothing is due
            finally:
                self._advancing.discard(watch.code)

        self.spawn(run())

    async def _tick_loop(self) -> None:
        while True:
            await between_turns(self.settings.tick)
            now, mono = self.now(), time.monotonic()
            for watch in list(self.hub.watches.values()):
                if watch.ghosts and watch.state == "running":
                    self.ghosts.ensure(watch.code)
                if now < watch.wake_at(now):  # nothing can be due yet: the usual case
                    continue
                self.presence.tick(watch, now, mono)  # an idle player out when due
                view = watch.view
                if mono >= watch.next_attempt and view and rules.due_transition(view, now):
                    self._try_advance(watch)

    def _watched_running(self, code: str) -> bool:
        """Whether a connection here watches race ``code`` and it runs (as far as known)."""
        watch = self.hub.watches.get(code)
        return watch is not None and watch.state == "running"

    async def _sweep_loop(self) -> None:
        last_clock = time.monotonic()
        while True:
            await between_turns(self.settings.sweep_interval)
            try:
                await self.hub.sweep()
                if time.monotonic() - last_clock > 60:
                    last_clock = time.monotonic()
                    await self._measure_clock()
            except Unavailable:
                pass
            except Exception:
                log.exception("sweep failed")

    async def _results_loop(self) -> None:
        """Writes the results that their finishing node did not (it died, or Redis failed
        it) once they waited :data:`RESULTS_GRACE` (:meth:`~.store.RatingStore.apply_pending`)."""
        while True:
            await between_turns(RESULTS_GRACE / 2)
            try:
                await self.store.ratings.apply_pending(self.now() - RESULTS_GRACE, self.advance)
            except Unavailable:
                pass
            except Exception:
                log.exception("writing pending results failed")

    def _presence_items(self) -> list[tuple[str, str, bool]]:
        """What the connections here claim (race, member, spectator): the presence turn's."""
        return [
            item
            for conn in list(self.connections)
            if isinstance(conn.session, Session)
            for item in conn.session.presence_items()
        ]
