"""``spider-race bench server``: how much a server carries, as figures anyone can rerun.

Bots play through the client library (:class:`spider_client.Client`), as real players do,
against a server: its own (a ``python -m spider_server`` process with an embedded Redis
and a raised rate limit) unless ``--url`` names one.

**Moves that stay legal.** Every race deals one seeded ``spider1`` deal in which, after a
short opening, one card can go from a column to another and back (:func:`find_ping_pong`
finds such a deal with the engine): each bot plays the opening, then sends that move and
its way back, again and again. Every move is a real move, checked by the server's engine,
committed to Redis and announced to the race; nothing grows but the player's action list.

**Players** (default): ``--players N`` bots in ``--races M`` races (and ``--spectators S``
watching, spread over the races in turn) send moves for ``--warmup W`` seconds (2 by
default: connections, races and schedules settle; nothing is measured) and then for
``--seconds T``, measured:

- ``--rate R``: each player sends R moves a second on a fixed schedule (open loop: a late
  ack does not move the schedule; the ack time is counted from the scheduled time);
- ``--rate max``: each sends its next move as soon as the last is acked.

It prints ``key: value`` lines: ``moves_per_s`` (acked moves a second), ``ack_p50_ms``,
``ack_p99_ms``, ``event_p99_ms`` (from sending a move to a spectator receiving its
``progress``; ``n/a`` without spectators), ``connections``, ``server_rss_mb`` (the server
process's resident memory at the end of the run, with every connection open; ``n/a``
with ``--url``), ``errors`` (moves refused, lost connections), ``moves`` and
``warmup_moves`` (acked in the measured time and in the warm-up), ``moves_in_redis`` (the
moves found in the players' action lists in Redis after the run: every move acked,
``moves`` + ``warmup_moves``, with ``moves`` = ``moves_per_s`` × seconds; needs
``--redis`` with ``--url``), and the **baseline** measured in the same run
on the same machine with the same number of connections and the same rate mode:
``baseline_per_s``, the messages a second of a bare websocket echo server that does one
Redis transaction per message (a ``MULTI``/``EXEC`` of one ``INCR``), built with the
same libraries and the same Redis client settings as the server
(:func:`spider_server.redisconn.connect`), and ``ratio`` = moves_per_s / baseline_per_s.
CPU time per move during the timed phase — of the server process, of Redis (from its
``INFO cpu``) and of the bots (this process) — is printed too
(``server_cpu_ms_per_move``, …, and the baseline's ``baseline_server_cpu_ms_per_message``,
``baseline_redis_…`` and ``baseline_clients_…``), and ``cpu_ratio``: the baseline's CPU time
per message (echo server, Redis and clients) over ours per move (server, Redis and bots).
On a machine whose cores are shared, rates depend on the neighbours, CPU time per move
much less: ``cpu_ratio`` is what ``ratio`` would be if both runs had the cores to
themselves and were CPU-bound.

The spectators run in worker processes (``--spectator-procs P``; by default one per 250
spectators, at most one per core), each through the client library, so that reading
their frames does not queue behind one process's loop: the figure is the server's delivery
more than the bench's own reading. Each worker notes when every ``progress`` reaches each
of its spectators (on the system-wide monotonic clock, this process's loop time); after
the measured time it waits (up to 10 s) until every spectator has seen every bot's last
move, and sends its notes back. A spectator still behind then, a reconnect or an event
dropped counts in ``errors``.

``--stalled K`` adds K spectators that never read (a raw socket with a small receive
buffer). Before the measured time each asks for its race again and again, unread, until
the server's ``/metrics`` counts it among the connections whose frames wait for their
reader (``spider_backlogged_connections``): the server's socket takes no more and frames
queue for it. Then they leave their races, and the measured time is cut into slices of
about 2 s (eight at least, by fours): they join their races for the middle two of each
four (away, watching, watching, away: a steady drift of the machine's speed, and its
spells of a few seconds, weigh on both sides alike). The deliveries to
the others in their races count on the side of their move's slice (a move sent within
0.1 s of a join or leave counts on neither). It prints ``event_p99_ms_stalled_away`` and
``…_watching`` (with ``events_stalled_…``), ``stalled_slowdown_pct`` (watching over away,
minus one), the server's CPU time per move on each side (``server_cpu_ms_per_move_stalled_…``,
with the bench's own server), and what the server showed in the middle of every slice:
``stalled_backlogged_at_start`` and ``stalled_backlogged_watching`` (the fewest),
``stalled_backlog_frames`` (frames queued at the last look) and
``stalled_slices_as_planned`` (slices where its spectators subscribed were the others, plus
the stalled ones while they watched); ``stalled_toggle_late_ms`` is how late a join or
leave was sent. The slowdown is ``n/a`` unless every stalled spectator was backlogged and
every slice was as planned. A reader that answers no ping is cut after the ping interval
plus the ping timeout (40 s by default): the bench's own server pings every ``seconds`` +
60 s or more when there are stalled spectators, so that it keeps them for the whole run;
a server named with ``--url`` needs that too, and a rate limit that lets their requests
through.

**Idle** (``--idle N``): N connections that said hello and do nothing, held for
``--seconds``; prints ``connections``, ``connect_per_s`` and ``server_rss_mb``.

The benchmark raises its own limit of open files (and so its server's) as far as the hard
limit allows.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import random
import resource
import socket
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import msgpack
from websockets.exceptions import ConnectionClosed

from spider_client import Client, SpiderClientError
from spider_client import protocol as p
from spider_client.errors import ConnectionLost, GameOver
from spider_engine import Board

__all__ = ["PingPong", "find_ping_pong", "run", "main"]

T = TypeVar("T")
A = TypeVar("A")

SECRET = "spider-race-bench-secret"
VARIANT = "spider1"


@dataclass(frozen=True)
class PingPong:
    """A seeded deal, an opening, and a move whose way back (``back``) is legal after it
    and leads to the same position again."""

    variant: str
    seed: str
    opening: tuple[str, ...]
    there: str
    back: str


def find_ping_pong(variant: str = VARIANT, *, tries: int = 500) -> PingPong:
    """The first seeded deal (seeds ``bench-0``, ``bench-1``, …) where a move and its way
    back exist after a short random opening of plain moves (no deal from the stock)."""
    rng = random.Random(2026)
    for n in range(tries):
        seed = f"bench-{n}"
        board = Board.deal(variant, seed)
        opening: list[str] = []
        for _ in range(40):
            start = board.text()
            for there in board.legal_moves.texts():
                if there == "+":
                    continue
                after = Board.from_text(start)
                after.push_text(there)
                for back in after.legal_moves.texts():
                    if back == "+":
                        continue
                    again = after.copy()
                    again.push_text(back)
                    if again.text() == start:
                        return PingPong(variant, seed, tuple(opening), there, back)
            plain = [m for m in board.legal_moves.texts() if m != "+"]
            if not plain:
                break
            move = rng.choice(plain)
            board.push_text(move)
            opening.append(move)
    raise RuntimeError(f"no {variant} deal with a move and its way back")  # pragma: no cover


# -- small tools ------------------------------------------------------------------------


def raise_open_files(want: int) -> int:
    """Raise this process's soft limit of open files towards ``want`` (up to the hard
    limit); children inherit it. Returns the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` (nearest rank); NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def _ms(value: float) -> str:
    return "n/a" if value != value else f"{value * 1000:.2f}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _rss_mb(pid: int) -> float | None:
    """A process's resident memory in MiB (Linux), None when unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _healthy(http_url: str) -> bool:
    try:
        with urllib.request.urlopen(http_url + "/healthz", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


async def bounded(
    items: Sequence[A], work: Callable[[A], Awaitable[T]], *, concurrency: int
) -> list[T | Exception]:
    """``work(item)`` for every item, at most ``concurrency`` at a time; the results (or
    the exceptions raised) in order."""
    out: list[T | Exception] = [RuntimeError("not run")] * len(items)
    index = iter(range(len(items)))

    async def worker() -> None:
        for i in index:
            try:
                out[i] = await work(items[i])
            except Exception as e:
                out[i] = e

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(items))))))
    return out


# -- processes --------------------------------------------------------------------------


class Processes:
    """The bench's own processes: an embedded Redis, the server, the baseline's echo
    server; everything is stopped on exit."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="spider-bench-"))
        self.redis: Any = None
        self.children: list[subprocess.Popen[bytes]] = []

    def start_redis(self) -> str:
        from spider_server.embedded import RedisProcess

        self.redis = RedisProcess(self.folder / "redis")
        self.redis.start()
        return str(self.redis.url)

    def spawn(self, args: list[str], *, env: dict[str, str], log: str) -> subprocess.Popen[bytes]:
        out = open(self.folder / log, "wb")  # noqa: SIM115 - kept open for the child
        child = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.children.append(child)
        return child

    async def start_server(
        self, redis_url: str, *, max_players: int, ping_interval: float | None = None
    ) -> tuple[str, int]:
        """A server node process; its websocket URL and pid."""
        port = _free_port()
        env = {
            **os.environ,
            "SPIDER_RACE_SECRET": SECRET,
            "SPIDER_RACE_NODE": "bench",
            "SPIDER_RACE_RATE": "100000",
            "SPIDER_RACE_BURST": "100000",
            "SPIDER_RACE_MAX_PLAYERS": str(max(16, max_players)),
        }
        if ping_interval is not None:
            env["SPIDER_RACE_PING_INTERVAL"] = f"{ping_interval:g}"
        args = [sys.executable, "-m", "spider_server", "--port", str(port)]
        args += ["--redis", redis_url, "--data-dir", str(self.folder / "server")]
        child = self.spawn(args, env=env, log="server.log")
        http = f"http://127.0.0.1:{port}"
        for _ in range(400):
            if child.poll() is not None:
                raise RuntimeError((self.folder / "server.log").read_text())
            if await asyncio.to_thread(_healthy, http):
                return f"ws://127.0.0.1:{port}/ws", child.pid
            await asyncio.sleep(0.05)
        raise RuntimeError("the server did not become healthy")

    async def start_echo(self, redis_url: str) -> tuple[str, subprocess.Popen[bytes]]:
        port = _free_port()
        args = [sys.executable, "-m", "spider_race.bench_server", "echo", str(port), redis_url]
        child = self.spawn(args, env=dict(os.environ), log="echo.log")
        for _ in range(400):
            if child.poll() is not None:
                raise RuntimeError((self.folder / "echo.log").read_text())
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                return f"ws://127.0.0.1:{port}/", child
            await asyncio.sleep(0.05)
        raise RuntimeError("the echo server did not start")

    def stop(self, child: subprocess.Popen[bytes]) -> None:
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()

    def close(self) -> None:
        for child in self.children:
            self.stop(child)
        if self.redis is not None:
            self.redis.stop()
        import shutil

        shutil.rmtree(self.folder, ignore_errors=True)


# -- the baseline: a bare websocket echo server with one Redis transaction per message --


async def echo_server(port: int, redis_url: str) -> None:
    """Serve websocket echo on ``127.0.0.1:port`` (any path): each binary message is
    answered with itself after one Redis transaction (``MULTI``, ``INCR``, ``EXEC``).
    The websocket options are the server's; the Redis client is the server's."""
    import signal

    from websockets.asyncio.server import ServerConnection, serve

    from spider_server.redisconn import connect
    from spider_server.settings import Settings

    settings = Settings()
    redis = connect(redis_url)
    key = "{bench}:echo"

    async def handle(ws: ServerConnection) -> None:
        async for frame in ws:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                await pipe.execute()
            await ws.send(frame)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with serve(
        handle,
        "127.0.0.1",
        port,
        max_size=max(settings.max_frame * 16, 65536),
        ping_interval=settings.ping_interval,
        ping_timeout=settings.ping_timeout,
        compression=None,
    ):
        await stop.wait()
    await redis.aclose()


# -- measuring --------------------------------------------------------------------------


def _process_cpu(pid: int) -> float | None:
    """A process's CPU seconds so far (user + system; Linux), None when unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class CpuMeter:
    """CPU seconds spent during the timed phase by the server process, by Redis (its
    ``INFO cpu``) and by this process (the bots), for CPU time per move."""

    def __init__(self, server_pid: int | None, redis_url: str | None) -> None:
        self.server_pid = server_pid
        self.start: dict[str, float | None] = {}
        self.spent: dict[str, float | None] = {}
        self.redis_url = redis_url
        self.redis: Any = None
        self.others: list[int] = []
        """The bench's worker processes, counted with the bots."""

    def also(self, pids: Sequence[int]) -> None:
        self.others += pids

    async def __aenter__(self) -> CpuMeter:
        """Connect to Redis now, before the measured time: the first import and connection
        would hold this process's loop for tens of milliseconds just as it starts."""
        if self.redis_url is not None:
            from spider_server.redisconn import connect

            self.redis = connect(self.redis_url)
            with contextlib.suppress(Exception):
                await self.redis.ping()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.redis is not None:
            with contextlib.suppress(Exception):
                await self.redis.aclose()
            self.redis = None

    async def _redis_cpu(self) -> float | None:
        if self.redis is None:
            return None
        try:
            info = await self.redis.info("cpu")
            if "used_cpu_user" not in info:  # a cluster: the sum over its masters
                info = {
                    k: sum(float(v.get(k, 0)) for v in info.values() if isinstance(v, dict))
                    for k in ("used_cpu_user", "used_cpu_sys")
                }
            return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
        except Exception:
            return None

    async def _now(self) -> dict[str, float | None]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        bots: float | None = usage.ru_utime + usage.ru_stime
        for pid in self.others:
            cpu = _process_cpu(pid)
            bots = None if bots is None or cpu is None else bots + cpu
        return {
            "server": None if self.server_pid is None else _process_cpu(self.server_pid),
            "redis": await self._redis_cpu(),
            "bots": bots,
        }

    async def begin(self) -> None:
        self.start = await self._now()

    async def end(self) -> None:
        now = await self._now()
        for key, value in now.items():
            before = self.start.get(key)
            self.spent[key] = None if value is None or before is None else value - before

    def total_ms(self, moves: int) -> float | None:
        """CPU milliseconds per move of the server, Redis and the bots together."""
        spent = [self.spent.get(key) for key in ("server", "redis", "bots")]
        if not moves or any(v is None for v in spent):
            return None
        return sum(v for v in spent if v is not None) * 1000 / moves

    def per_move_ms(self, key: str, moves: int) -> str:
        spent = self.spent.get(key)
        return "n/a" if spent is None or not moves else f"{spent * 1000 / moves:.3f}"


@dataclass
class Tally:
    """What a run measured."""

    acks: list[float] = field(default_factory=list)
    events: list[float] = field(default_factory=list)
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    moves: int = 0
    warmup_moves: int = 0
    """Moves acked during the warm-up (sent, committed, not measured)."""
    started: float = 0.0
    ended: float = 0.0
    events_by_side: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))
    """With stalled spectators: deliveries of moves sent while they were away from their
    races, and while they watched."""
    stalled: StalledRun | None = None
    """With stalled spectators: what their part of the run saw."""

    def error(self, what: str) -> None:
        self.errors += 1
        self.error_kinds[what] = self.error_kinds.get(what, 0) + 1

    @property
    def seconds(self) -> float:
        return max(self.ended - self.started, 1e-9)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The bench's own cyclic garbage collector off while it measures: the load it makes
    must not stall (a collection here holds every bot's acks, which the figures would
    blame on the server). What start-up made is frozen out of later collections; the
    server's own collections still count, and are in its ``/metrics``."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


STALLED_SLICE_S = 2.0
"""With stalled spectators, about how long a slice of the measured time lasts."""


def stalled_plan(seconds: float) -> tuple[int, ...]:
    """The slices of a measured time of ``seconds``: 1 where the stalled spectators watch
    their races, 0 where they are away; away, watching, watching, away, again and again
    (a multiple of four slices, eight at least, of about :data:`STALLED_SLICE_S`): the
    machine's speed, which drifts and comes in spells of a few seconds, weighs on both
    sides alike."""
    fours = max(2, round(seconds / (4 * STALLED_SLICE_S)))
    return (0, 1, 1, 0) * fours


def stalled_side(
    t: float, start: float, slice_s: float, guard: float, plan: Sequence[int]
) -> int | None:
    """The side of a move sent at ``t`` (1: the stalled spectators watch, 0: they are
    away) in the measured time from ``start``, cut into slices of ``slice_s`` seconds
    (``plan``); None outside it, and within ``guard`` seconds of a join or a leave: such
    a move may reach the server on the other side of it."""
    offset = t - start
    if slice_s <= 0 or offset < 0:
        return None
    index = int(offset // slice_s)
    if index >= len(plan):
        return None
    edge = round(offset / slice_s)  # the slice edge nearest to the move
    toggled = 0 < edge < len(plan) and plan[edge] != plan[edge - 1]
    if toggled and abs(offset - edge * slice_s) < guard:
        return None
    return plan[index]


def _schedule_start(index: int, count: int, rate: float | None, t0: float) -> float:
    """When a sender's first message is due: senders spread evenly over one period."""
    if rate is None:
        return t0
    return t0 + (index / max(count, 1)) / rate


async def _send_loop(
    index: int,
    count: int,
    rate: float | None,
    t0: float,
    t_end: float,
    send: Callable[[int], Awaitable[None]],
    tally: Tally,
    t_measure: float | None = None,
) -> None:
    """One sender: message k is due at its schedule (or at once with ``rate`` None);
    ``send(k)`` returns when it is answered. Only messages due from ``t_measure`` (the end
    of the warm-up; default ``t0``) are measured."""
    measure_from = t0 if t_measure is None else t_measure
    loop = asyncio.get_running_loop()
    due = _schedule_start(index, count, rate, t0)
    k = 0
    while True:
        now = loop.time()
        if rate is None:
            due = now
        if due >= t_end or now >= t_end:
            return
        if due > now:
            await asyncio.sleep(due - now)
        try:
            await send(k)
        except (SpiderClientError, ConnectionClosed) as e:
            tally.error(type(e).__name__)
            if isinstance(e, (ConnectionLost, GameOver, ConnectionClosed)):
                return
        else:
            k += 1
            if due < measure_from:
                tally.warmup_moves += 1
            else:
                tally.acks.append(loop.time() - due)
                tally.moves += 1
                tally.ended = max(tally.ended, loop.time())
        if rate is not None:
            due += 1 / rate


async def _metered(meter: CpuMeter | None, at: float) -> None:
    """Start ``meter`` at loop time ``at`` (when the warm-up ends)."""
    if meter is not None:
        await asyncio.sleep(max(0.0, at - asyncio.get_running_loop().time()))
        await meter.begin()


async def race_players(
    url: str,
    *,
    players: int,
    races: int,
    spectators: int,
    stalled: int,
    rate: float | None,
    seconds: float,
    on_loaded: Callable[[], None] | None = None,
    meter: CpuMeter | None = None,
    warmup: float = 0.0,
    spectator_procs: int | None = None,
) -> tuple[Tally, list[tuple[str, str]], PingPong, int]:
    """Set up the races, run the warm-up and the timed phase, close. Returns the tally,
    the (race code, player id) of every bot, the deal played, and the connections held."""
    line = find_ping_pong()
    sizes = [players // races + (1 if i < players % races else 0) for i in range(races)]
    sizes = [s for s in sizes if s > 0]

    def connect(name: str, max_unread: int = 10_000) -> Awaitable[Client]:
        return Client.connect(
            url,
            name=name,
            reconnect_timeout=30.0,
            request_timeout=120.0,
            resend_after=20.0,
            max_unread=max_unread,
        )

    def connect_bot(name: str) -> Awaitable[Client]:
        # the bots never read their events: they keep only the last few, as any client
        # that does not read them (spectators read every event: each is measured)
        return connect(name, max_unread=16)

    clients = await bounded([f"bot{i}" for i in range(players)], connect_bot, concurrency=100)
    bots = [c for c in clients if isinstance(c, Client)]
    if len(bots) != players:
        raise RuntimeError(
            f"could not connect every bot: {next(c for c in clients if not isinstance(c, Client))!r}"
        )
    groups: list[list[Client]] = []
    at = 0
    for size in sizes:
        groups.append(bots[at : at + size])
        at += size

    async def make_race(group: list[Client]) -> str:
        code = await group[0].create_race(
            variant=line.variant,
            seed=line.seed,
            max_players=len(group),
            time_limit=int(seconds) + 3600,
            undo=False,
            countdown=0,
        )
        for c in group[1:]:
            await c.join(code)
        return code

    codes_or = await bounded(groups, make_race, concurrency=50)
    codes = [c for c in codes_or if isinstance(c, str)]
    if len(codes) != len(groups):
        raise RuntimeError(f"could not set up the races: {codes_or!r}")

    crowd = await Crowd.start(url, codes, spectators, processes=spectator_procs)
    quiet: list[StalledSpectator] = []
    try:
        if meter is not None:
            meter.also(crowd.pids)
        await bounded(bots, lambda c: c.ready(), concurrency=100)
        await bounded(
            bots,
            lambda c: c.wait_until(lambda x: x.view is not None, timeout=120),
            concurrency=1000,
        )

        async def opening(c: Client) -> None:
            for move in line.opening:
                await c.move(move)

        await bounded(bots, opening, concurrency=200)
        run: StalledRun | None = None
        if stalled:
            quiet = [await _stalled_spectator(url, codes[i % len(codes)]) for i in range(stalled)]
            server = meter.server_pid if meter is not None else None
            run = StalledRun(quiet, codes, _metrics_url(url), server)
            await run.stall()
        with collector_paused():
            tally = await _timed_phase(
                bots, crowd, line, rate, seconds, meter=meter, warmup=warmup, stalled=run
            )
        if on_loaded is not None:
            on_loaded()
    finally:
        await crowd.close()
        for w in quiet:
            w.close()
    connections = len(bots) + spectators + len(quiet)
    await bounded(bots, lambda c: c.close(), concurrency=500)
    bot_keys = [(c.code or "", c.player or "") for c in bots]
    return tally, bot_keys, line, connections


async def _timed_phase(
    bots: list[Client],
    crowd: Crowd,
    line: PingPong,
    rate: float | None,
    seconds: float,
    *,
    meter: CpuMeter | None,
    warmup: float,
    stalled: StalledRun | None = None,
) -> Tally:
    """The warm-up and the measured time: every bot sends on its schedule; the spectators'
    deliveries of the progress of moves sent in the measured time are timed (once every
    spectator has seen every bot's last move).

    With stalled spectators (backlogged, away from their races), the measured time is cut
    into slices where they watch and where they are away (:class:`StalledRun`); the
    deliveries of the moves of their races count on the side of the move's slice."""
    tally = Tally(stalled=stalled)
    loop = asyncio.get_running_loop()
    sent: dict[tuple[str, int], float] = {}
    t0 = loop.time() + 0.2
    t_measure = t0 + warmup
    t_end = t_measure + seconds
    tally.started = tally.ended = t_measure

    def sender(c: Client) -> Callable[[int], Awaitable[None]]:
        base = len(line.opening)

        async def send(k: int) -> None:
            move = line.there if k % 2 == 0 else line.back
            sent[(c.player or "", base + k + 1)] = loop.time()
            await c.move(move)

        return send

    await asyncio.gather(
        _metered(meter, t_measure),
        *([stalled.run(t_measure, seconds)] if stalled else []),
        *(
            _send_loop(i, len(bots), rate, t0, t_end, sender(c), tally, t_measure)
            for i, c in enumerate(bots)
        ),
    )
    if meter is not None:
        await meter.end()
    last = {c.player: c.me.moves for c in bots if c.player and c.me is not None}
    watched = stalled.players(bots) if stalled else set()
    notes, trouble = await crowd.deliveries(last)
    for kind, count in trouble.items():
        for _ in range(count):
            tally.error(kind)
    for player, moves, received in notes:
        t = sent.get((player, moves))
        if t is None or not t_measure <= t < t_end:
            continue
        tally.events.append(received - t)
        if stalled and player in watched:
            side = stalled.side(t)
            if side is not None:
                tally.events_by_side[side].append(received - t)
    if stalled:
        stalled.count_moves(t for t in sent.values() if t_measure <= t < t_end)
    return tally


class StalledRun:
    """The stalled spectators' part of a run.

    :meth:`stall`: each asks for its race again and again (with every event since the
    start), unread, until the server's ``/metrics`` counts them all among the connections
    whose frames wait for their reader; then they leave their races. :meth:`run`: the
    measured time is cut into the slices of :func:`stalled_plan`; at each change they
    join or leave their races; in the middle of every slice the server's gauges are read
    (on both sides alike), to check that the server follows the plan (spectators
    subscribed: the others, plus the stalled ones while they watch) and holds frames for
    them; the server process's CPU time is read at every slice's edge (with the bench's
    own server)."""

    def __init__(
        self,
        quiet: Sequence[StalledSpectator],
        codes: Sequence[str],
        metrics_url: str,
        server_pid: int | None,
    ) -> None:
        self.quiet = quiet
        self.codes = codes
        self.metrics_url = metrics_url
        self.server_pid = server_pid
        self.plan: tuple[int, ...] = ()
        self.slice_s = 0.0
        self.guard = 0.0
        self.start = 0.0
        self.others_backlogged = 0
        """Connections backlogged on the server before the stalled spectators were."""
        self.away: int | None = None
        """Spectators subscribed on the server once the stalled ones left their races."""
        self.backlogged_at_start: int | None = None
        self.backlogged_watching: int | None = None
        self.backlog_frames: int | None = None
        self.checks = [0, 0]
        """Slices where the server's subscriptions were as planned, slices looked at."""
        self.late = 0.0
        """The latest a join or leave was sent after its time (seconds)."""
        self.cpu = [0.0, 0.0]
        """The server's CPU seconds in the slices of each side (away, watching)."""
        self.cpu_known = server_pid is not None
        self.moves = [0, 0]
        """Moves sent in the slices of each side (every race)."""

    def race(self, i: int) -> str:
        return self.codes[i % len(self.codes)]

    def players(self, bots: Sequence[Client]) -> set[str]:
        """The bots of the races a stalled spectator joins."""
        races = {self.race(i) for i in range(len(self.quiet))}
        return {c.player for c in bots if c.player and c.code in races}

    async def gauges(self) -> dict[str, int] | None:
        return await asyncio.to_thread(_gauges, self.metrics_url)

    async def stall(self) -> None:
        before = await self.gauges()
        self.others_backlogged = 0 if before is None else before["backlogged"]
        for _ in range(200):
            for i, w in enumerate(self.quiet):
                for _ in range(20):
                    await w.join(self.race(i), since=0)
            await asyncio.sleep(0.05)
            now = await self.gauges()
            if now is None:
                break
            self.backlogged_at_start = now["backlogged"] - self.others_backlogged
            if self.backlogged_at_start >= len(self.quiet):
                break
        await self._send_all(join=False)
        await asyncio.sleep(0.2)
        gauges = await self.gauges()
        self.away = None if gauges is None else gauges["spectators"]

    async def _send_all(self, join: bool) -> None:
        for i, w in enumerate(self.quiet):
            await (w.join(self.race(i)) if join else w.leave(self.race(i)))

    def side(self, t: float) -> int | None:
        return stalled_side(t, self.start, self.slice_s, self.guard, self.plan)

    def count_moves(self, times: Iterable[float]) -> None:
        for t in times:
            side = stalled_side(t, self.start, self.slice_s, 0.0, self.plan)
            if side is not None:
                self.moves[side] += 1

    async def run(self, start: float, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        self.plan = plan = stalled_plan(seconds)
        self.start, self.slice_s = start, seconds / len(plan)
        self.guard = min(0.1, self.slice_s / 5)

        async def at(when: float) -> None:
            await asyncio.sleep(max(0.0, when - loop.time()))

        def cpu() -> float | None:
            return None if self.server_pid is None else _process_cpu(self.server_pid)

        seen: list[int] = []
        before: float | None = None
        for index in range(len(plan) + 1):  # every slice's edge, the last one's end too
            edge = start + index * self.slice_s
            await at(edge)
            now = cpu()
            if index:
                if before is None or now is None:
                    self.cpu_known = False
                else:
                    self.cpu[plan[index - 1]] += now - before
            before = now
            if index == len(plan):
                break
            side = plan[index]
            if index and side != plan[index - 1]:
                self.late = max(self.late, loop.time() - edge)
                await self._send_all(join=bool(side))
            await at(edge + self.slice_s / 2)
            gauges = await self.gauges()
            if gauges is not None:
                self.checks[1] += 1
                if self.away is not None:
                    want = self.away + side * len(self.quiet)
                    self.checks[0] += gauges["spectators"] == want
                if side:
                    seen.append(gauges["backlogged"] - self.others_backlogged)
                    self.backlog_frames = gauges["frames"]
        self.backlogged_watching = min(seen) if seen else None

    def trustworthy(self) -> bool:
        """Whether the server held frames for every stalled spectator and followed the
        plan in every slice."""
        k = len(self.quiet)
        return (
            (self.backlogged_at_start or 0) >= k
            and (self.backlogged_watching or 0) >= k
            and self.checks[0] == self.checks[1] == len(self.plan)
        )


class StalledSpectator:
    """A spectator that never reads: a raw socket with a small receive buffer, after a
    websocket handshake and ``hello``. It still sends (``join``, ``leave``); the server's
    replies and the race's events pile up unread, in the kernel's buffers and then in the
    server's queue for it."""

    def __init__(self, sock: socket.socket, proto: Any) -> None:
        self.sock = sock
        self.proto = proto
        self.req = 0

    async def send(self, *messages: object) -> None:
        for message in messages:
            self.proto.send_binary(p.encode(message))
        loop = asyncio.get_running_loop()
        for data in self.proto.data_to_send():
            await loop.sock_sendall(self.sock, data)

    async def join(self, code: str, *, since: int | None = None) -> None:
        self.req += 1
        await self.send(p.Join(req=self.req, code=code, role="spectator", since=since))

    async def leave(self, code: str) -> None:
        self.req += 1
        await self.send(p.Leave(req=self.req, code=code))

    def close(self) -> None:
        self.sock.close()


class Crowd:
    """The spectators, spread over worker processes (``python -m spider_race.bench_server
    spectators …``) so that reading their frames does not wait on one process's loop:
    each worker connects its share through the client library, joins the races in turn
    and notes when each ``progress`` reaches each of its spectators (the system-wide
    monotonic clock, the same as this process's loop time); :meth:`deliveries` collects
    the notes at the end."""

    PER_PROCESS = 250
    """Spectators a worker takes by default."""

    def __init__(self, workers: list[asyncio.subprocess.Process]) -> None:
        self.workers = workers

    @property
    def pids(self) -> list[int]:
        return [w.pid for w in self.workers]

    @classmethod
    async def start(
        cls, url: str, codes: Sequence[str], count: int, *, processes: int | None = None
    ) -> Crowd:
        """Start the workers (``processes`` of them; by default one per 250 spectators,
        at most one per core) and wait until every spectator watches its race."""
        if count <= 0:
            return cls([])
        if processes is None:
            processes = min(-(-count // cls.PER_PROCESS), os.cpu_count() or 1)
        processes = max(1, min(processes, count))
        shares = [
            count // processes + (1 if i < count % processes else 0) for i in range(processes)
        ]
        crowd = cls([])
        first = 0
        try:
            for share in shares:
                worker = await asyncio.create_subprocess_exec(
                    sys.executable, "-m", "spider_race.bench_server", "spectators",
                    url, str(first), str(share), *codes,
                    stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                )  # fmt: skip
                crowd.workers.append(worker)
                first += share
            for worker in crowd.workers:
                assert worker.stdout is not None
                line = await worker.stdout.readline()
                if line.strip() != b"ready":
                    raise RuntimeError(f"a spectators' worker failed: {line!r}")
        except BaseException:
            await crowd.close()
            raise
        return crowd

    async def deliveries(
        self, last: Mapping[str, int], *, wait: float = 10.0
    ) -> tuple[list[tuple[str, int, float]], dict[str, int]]:
        """Every ``progress`` each spectator got, (player, moves, when), once each has
        seen every player's last move (``last``: player -> moves), or after ``wait``
        seconds; and what went wrong, by kind (spectators still behind then, reconnects,
        events dropped). The workers close their spectators and stop."""
        notes: list[tuple[str, int, float]] = []
        trouble: dict[str, int] = {}
        order = json.dumps({"last": dict(last), "wait": wait}).encode() + b"\n"
        for worker in self.workers:
            assert worker.stdin is not None
            worker.stdin.write(order)
            await worker.stdin.drain()
        for worker in self.workers:
            assert worker.stdout is not None
            data = await worker.stdout.read()
            if await worker.wait() != 0:
                raise RuntimeError("a spectators' worker failed")
            report = msgpack.unpackb(data)
            notes += [(str(a), int(b), float(c)) for a, b, c in report["notes"]]
            for kind, count in report["trouble"].items():
                if count:
                    trouble[kind] = trouble.get(kind, 0) + int(count)
        return notes, trouble

    async def close(self) -> None:
        for worker in self.workers:
            if worker.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    worker.kill()
                await worker.wait()


async def spectators_worker(url: str, first: int, count: int, codes: Sequence[str]) -> None:
    """A :class:`Crowd` worker: ``count`` spectators (``watcher{first}``, …) join the
    races in turn; "ready" on stdout; their ``progress`` deliveries noted until "stop"
    on stdin; then the notes, packed with msgpack, on stdout."""
    loop = asyncio.get_running_loop()

    def connect(name: str) -> Awaitable[Client]:
        return Client.connect(
            url, name=name, reconnect_timeout=30.0, request_timeout=120.0, max_unread=10_000
        )

    made = await bounded([f"watcher{first + i}" for i in range(count)], connect, concurrency=100)
    clients = [c for c in made if isinstance(c, Client)]
    if len(clients) != count:
        raise RuntimeError(f"could not connect every spectator: {made!r}")
    joined = await bounded(
        list(enumerate(clients)),
        lambda ic: ic[1].join(codes[(first + ic[0]) % len(codes)], "spectator"),
        concurrency=100,
    )
    failed = [e for e in joined if isinstance(e, Exception)]
    if failed:
        raise RuntimeError(f"{len(failed)} spectators could not join: {failed[0]!r}")
    notes: list[tuple[str, int, float]] = []

    async def watch(c: Client) -> None:
        async for event in c.events():
            if isinstance(event, p.Progress):
                notes.append((event.player.player, event.player.moves, loop.time()))

    readers = [loop.create_task(watch(c)) for c in clients]
    out = sys.stdout.buffer
    out.write(b"ready\n")
    out.flush()
    with collector_paused():
        line = await asyncio.to_thread(sys.stdin.buffer.readline)
        order = json.loads(line or b'{"last": {}, "wait": 0}')
        last: dict[str, int] = order["last"]

        def caught_up(c: Client) -> bool:
            players = c.race.players if c.race is not None else []
            return all(i.moves >= last[i.player] for i in players if i.player in last)

        async def wait(c: Client) -> bool:
            try:
                await c.wait_until(caught_up, timeout=order["wait"])
            except (TimeoutError, SpiderClientError):
                return False
            return True

        done = await asyncio.gather(*(wait(c) for c in clients))
        await asyncio.sleep(0.05)  # the last events reach the readers
    for task in readers:
        task.cancel()
    trouble = {
        "spectators_behind": sum(1 for ok in done if not ok),
        "spectator_reconnects": sum(c.reconnects for c in clients),
        "spectator_events_dropped": sum(c.dropped_events for c in clients),
    }
    await bounded(clients, lambda c: c.close(), concurrency=500)
    out.write(msgpack.packb({"notes": notes, "trouble": trouble}))
    out.flush()


async def _stalled_spectator(url: str, code: str) -> StalledSpectator:
    """A :class:`StalledSpectator` that has said ``hello`` and joined ``code``."""
    from websockets.client import ClientProtocol
    from websockets.protocol import State
    from websockets.uri import parse_uri

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    uri = parse_uri(url)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (uri.host, uri.port))
    proto = ClientProtocol(uri)
    proto.send_request(proto.connect())
    for data in proto.data_to_send():
        await loop.sock_sendall(sock, data)
    while proto.state is State.CONNECTING:
        chunk = await loop.sock_recv(sock, 65536)
        if not chunk:
            raise RuntimeError("the server closed the stalled spectator")
        proto.receive_data(chunk)
    if proto.state is not State.OPEN:
        raise RuntimeError(f"handshake failed: {proto.handshake_exc}")
    stalled = StalledSpectator(sock, proto)
    await stalled.send(p.Hello(name="stalled"))
    await stalled.join(code)
    return stalled


def _metrics_url(ws_url: str) -> str:
    """The ``/metrics`` address of the server at a websocket URL."""
    from urllib.parse import urlsplit

    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme == "wss" else "http"
    return f"{scheme}://{parts.netloc}/metrics"


def _gauges(metrics_url: str) -> dict[str, int] | None:
    """From the server's ``/metrics``: ``backlogged`` connections, the ``frames`` queued
    for them and the ``spectators`` subscribed; None when it does not say."""
    try:
        with urllib.request.urlopen(metrics_url, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    names = {
        "spider_backlogged_connections": "backlogged",
        "spider_backlog_frames": "frames",
        'spider_subscriptions{role="spectator"}': "spectators",
    }
    found: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name in names:
            found[names[name]] = int(float(value))
    return found if len(found) == len(names) else None


async def baseline(
    url: str,
    *,
    senders: int,
    silent: int,
    rate: float | None,
    seconds: float,
    meter: CpuMeter | None = None,
    warmup: float = 0.0,
) -> Tally:
    """The echo server's rate with ``senders`` connections sending (and ``silent`` ones
    open), in the same rate mode; ``meter`` measures the CPU time of the timed phase."""
    from websockets.asyncio.client import ClientConnection, connect

    conns_or = await bounded(
        range(senders + silent),
        lambda _: connect(url, compression=None, max_size=2**22, open_timeout=60),
        concurrency=100,
    )
    conns: list[ClientConnection] = [c for c in conns_or if not isinstance(c, BaseException)]
    if len(conns) != senders + silent:
        raise RuntimeError("could not connect to the echo server")
    frame = msgpack.packb({"type": "move", "code": "ABCDE", "seq": 1, "move": "f1c"})
    tally = Tally()
    loop = asyncio.get_running_loop()

    def sender(ws: ClientConnection) -> Callable[[int], Awaitable[None]]:
        async def send(k: int) -> None:
            await ws.send(frame)
            await ws.recv()

        return send

    t0 = loop.time() + 0.2
    t_measure = t0 + warmup
    tally.started = tally.ended = t_measure
    with collector_paused():
        await asyncio.gather(
            _metered(meter, t_measure),
            *(
                _send_loop(i, senders, rate, t0, t_measure + seconds, sender(ws), tally, t_measure)
                for i, ws in enumerate(conns[:senders])
            ),
        )
        if meter is not None:
            await meter.end()
    await bounded(conns, lambda ws: ws.close(), concurrency=500)
    return tally


async def moves_in_redis(redis_url: str, bots: list[tuple[str, str]], opening: int) -> int:
    """The moves in the bots' action lists, less their openings."""
    from spider_server import keys
    from spider_server.redisconn import connect

    redis = connect(redis_url)
    try:
        total = 0
        for start in range(0, len(bots), 1000):
            async with redis.pipeline(transaction=False) as pipe:
                for code, player in bots[start : start + 1000]:
                    pipe.llen(keys.actions(code, player))
                lengths = await pipe.execute()
            total += sum(int(n) - opening for n in lengths)
        return total
    finally:
        await redis.aclose()


# -- the modes --------------------------------------------------------------------------


def _print(figures: list[tuple[str, object]]) -> None:
    for key, value in figures:
        print(f"{key}: {value}", flush=True)


def _stalled_figures(tally: Tally) -> list[tuple[str, object]]:
    """The stalled spectators' figures: the event p99 of the others in their races while
    they were away and while they watched (slices of the same run), the server's CPU time
    per move on each side, and what the server held for them. The slowdown is ``n/a``
    unless the server held frames for every stalled spectator and followed the plan."""
    run = tally.stalled
    if run is None:
        return []
    away, watching = (percentile(side, 99) for side in tally.events_by_side)
    known = away == away and watching == watching and run.trustworthy()  # not NaN
    slower = f"{(watching / away - 1) * 100:+.1f}" if known else "n/a"

    def value(v: object) -> object:
        return "n/a" if v is None else v

    def cpu(side: int) -> str:
        if not run.cpu_known or not run.moves[side]:
            return "n/a"
        return f"{run.cpu[side] * 1000 / run.moves[side]:.3f}"

    return [
        ("event_p99_ms_stalled_away", _ms(away)),
        ("event_p99_ms_stalled_watching", _ms(watching)),
        ("events_stalled_away", len(tally.events_by_side[0])),
        ("events_stalled_watching", len(tally.events_by_side[1])),
        ("stalled_slowdown_pct", slower),
        ("server_cpu_ms_per_move_stalled_away", cpu(0)),
        ("server_cpu_ms_per_move_stalled_watching", cpu(1)),
        ("stalled_backlogged_at_start", value(run.backlogged_at_start)),
        ("stalled_backlogged_watching", value(run.backlogged_watching)),
        ("stalled_backlog_frames", value(run.backlog_frames)),
        ("stalled_slices_as_planned", f"{run.checks[0]}/{len(run.plan)}"),
        ("stalled_toggle_late_ms", f"{run.late * 1000:.1f}"),
    ]


async def bench_players(args: argparse.Namespace, procs: Processes) -> int:
    rate = None if args.rate == "max" else float(args.rate)
    if rate is not None and rate <= 0:
        raise SystemExit("spider-race bench server: --rate is a positive number or max")
    players, races = args.players, max(1, min(args.races, args.players))
    spectators, stalled = args.spectators, args.stalled
    warmup = max(0.0, float(getattr(args, "warmup", 2.0)))
    raise_open_files(2 * (players + spectators + stalled) + 1024)
    redis_url = args.redis
    server_pid: int | None = None
    url = args.url
    if url is None:
        if redis_url is None:
            redis_url = procs.start_redis()
        # a spectator that never reads never answers the server's pings either: with
        # stalled spectators the server pings less often, so that it keeps them (and
        # their backlog) for the whole run rather than cutting them after 40 seconds
        ping = max(20.0, args.seconds + warmup + 60) if stalled else None
        url, server_pid = await procs.start_server(
            redis_url, max_players=-(-players // races), ping_interval=ping
        )
    rss: list[float | None] = [None]

    def loaded() -> None:
        if server_pid is not None:
            rss[0] = _rss_mb(server_pid)

    async with CpuMeter(server_pid, redis_url) as meter:
        tally, bots, line, connections = await race_players(
            url,
            players=players,
            races=races,
            spectators=spectators,
            stalled=stalled,
            rate=rate,
            seconds=args.seconds,
            on_loaded=loaded,
            meter=meter,
            warmup=warmup,
            spectator_procs=args.spectator_procs,
        )
    in_redis: int | str = "n/a"
    if redis_url is not None:
        in_redis = await moves_in_redis(redis_url, bots, len(line.opening))
    # the baseline: the same connections and rate mode against the bare echo server
    base_redis = redis_url if redis_url is not None else procs.start_redis()
    echo_url, echo = await procs.start_echo(base_redis)
    async with CpuMeter(echo.pid, base_redis) as base_meter:
        base = await baseline(
            echo_url,
            senders=players,
            silent=spectators + stalled,
            rate=rate,
            seconds=args.seconds,
            meter=base_meter,
            warmup=warmup,
        )
    procs.stop(echo)
    ours, theirs = meter.total_ms(tally.moves), base_meter.total_ms(base.moves)
    moves_per_s = tally.moves / tally.seconds
    base_per_s = base.moves / base.seconds
    _print(
        [
            ("mode", "players"),
            ("players", players),
            ("races", races),
            ("spectators", spectators),
            ("stalled_spectators", stalled),
            ("rate", "max" if rate is None else f"{rate:g}"),
            ("seconds", f"{tally.seconds:.2f}"),
            ("warmup_s", f"{warmup:g}"),
            ("warmup_moves", tally.warmup_moves),
            ("moves", tally.moves),
            ("moves_per_s", f"{moves_per_s:.1f}"),
            ("ack_p50_ms", _ms(percentile(tally.acks, 50))),
            ("ack_p99_ms", _ms(percentile(tally.acks, 99))),
            ("event_p99_ms", _ms(percentile(tally.events, 99))),
            ("events_measured", len(tally.events)),
            *(_stalled_figures(tally) if stalled else []),
            ("connections", connections),
            ("server_rss_mb", "n/a" if rss[0] is None else f"{rss[0]:.1f}"),
            ("server_cpu_ms_per_move", meter.per_move_ms("server", tally.moves)),
            ("redis_cpu_ms_per_move", meter.per_move_ms("redis", tally.moves)),
            ("bots_cpu_ms_per_move", meter.per_move_ms("bots", tally.moves)),
            ("errors", tally.errors),
            ("moves_in_redis", in_redis),
            ("baseline_per_s", f"{base_per_s:.1f}"),
            ("baseline_ack_p99_ms", _ms(percentile(base.acks, 99))),
            ("baseline_server_cpu_ms_per_message", base_meter.per_move_ms("server", base.moves)),
            ("baseline_redis_cpu_ms_per_message", base_meter.per_move_ms("redis", base.moves)),
            ("baseline_clients_cpu_ms_per_message", base_meter.per_move_ms("bots", base.moves)),
            ("baseline_errors", base.errors),
            ("ratio", f"{moves_per_s / base_per_s:.3f}" if base_per_s else "n/a"),
            ("cpu_ratio", "n/a" if ours is None or theirs is None else f"{theirs / ours:.3f}"),
        ]
    )
    if tally.error_kinds:
        print("error_kinds: " + ", ".join(f"{k}={v}" for k, v in sorted(tally.error_kinds.items())))
    return 0


async def bench_idle(args: argparse.Namespace, procs: Processes) -> int:
    count = args.idle
    raise_open_files(count + 1024)
    server_pid: int | None = None
    url = args.url
    if url is None:
        url, server_pid = await procs.start_server(
            args.redis or procs.start_redis(), max_players=16
        )
    loop = asyncio.get_running_loop()
    started = loop.time()
    made = await bounded(
        [f"idle{i}" for i in range(count)],
        lambda name: Client.connect(url, name=name, reconnect_timeout=60.0),
        concurrency=200,
    )
    took = loop.time() - started
    clients = [c for c in made if isinstance(c, Client)]
    errors = len(made) - len(clients)
    gc.collect()
    gc.freeze()
    await asyncio.sleep(args.seconds)
    lost = sum(1 for c in clients if not c.connected)
    rss = _rss_mb(server_pid) if server_pid is not None else None
    await bounded(clients, lambda c: c.close(), concurrency=500)
    _print(
        [
            ("mode", "idle"),
            ("connections", len(clients) - lost),
            ("connect_per_s", f"{len(clients) / took:.0f}"),
            ("seconds", f"{args.seconds:g}"),
            ("server_rss_mb", "n/a" if rss is None else f"{rss:.1f}"),
            (
                "server_kib_per_connection",
                "n/a" if rss is None or not clients else f"{rss * 1024 / len(clients):.1f}",
            ),
            ("errors", errors + lost),
        ]
    )
    return 0


def run(args: argparse.Namespace) -> int:
    """``spider-race bench server`` (the options are the ``bench`` command's). Stopped
    with SIGTERM or Ctrl-C, it stops its processes too."""
    import signal

    async def bench() -> int:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        if args.idle:
            return await bench_idle(args, procs)
        return await bench_players(args, procs)

    procs = Processes()
    try:
        return asyncio.run(bench())
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("spider-race bench server: stopped", file=sys.stderr)
        return 130
    finally:
        procs.close()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m spider_race.bench_server echo PORT REDIS_URL``: the baseline's server;
    ``… spectators URL FIRST COUNT CODE…``: a worker of the bench's spectators."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if len(argv) == 3 and argv[0] == "echo":
        raise_open_files(65536)
        asyncio.run(echo_server(int(argv[1]), argv[2]))
        return 0
    if len(argv) >= 5 and argv[0] == "spectators":
        asyncio.run(spectators_worker(argv[1], int(argv[2]), int(argv[3]), argv[4:]))
        return 0
    print(
        "usage: python -m spider_race.bench_server echo PORT REDIS_URL\n"
        "       python -m spider_race.bench_server spectators URL FIRST COUNT CODE...",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
