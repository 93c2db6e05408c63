"""The bench's modes (players, idle) and its entry points: :func:`run` for ``spider-race
bench server``, :func:`main` for the worker processes it starts."""

from __future__ import annotations

import argparse
import asyncio
import gc
import signal
import sys
from collections.abc import Sequence

from spider_client import Client

from .baseline import baseline, echo_server
from .meter import CpuMeter
from .players import moves_in_redis, race_players
from .processes import WORKER_MODULE, Processes
from .report import idle_figures, players_figures, print_figures
from .solverload import SolverLoad
from .spectators import spectators_worker
from .stalled import metrics_url
from .tools import bounded, close_all, raise_open_files, rss_mb

__all__ = ["bench_players", "bench_idle", "run", "run_nodes", "main"]


async def bench_players(args: argparse.Namespace, procs: Processes) -> int:
    """The players mode (see the package's docstring): our server, then the baseline,
    with the same connections and rate mode; prints the figures."""
    rate = None if args.rate == "max" else float(args.rate)
    if rate is not None and rate <= 0:
        raise SystemExit("spider-race bench server: --rate is a positive number or max")
    players, races = args.players, max(1, min(args.races, args.players))
    spectators, stalled = args.spectators, args.stalled
    warmup = max(0.0, float(getattr(args, "warmup", 2.0)))
    hint_spam = max(0, int(getattr(args, "hint_spam", 0) or 0))
    pool_refill = bool(getattr(args, "pool_refill", False))
    pars = max(0, int(getattr(args, "pars", 0) or 0))
    idle_beside = max(0, int(getattr(args, "idle_beside", 0) or 0))
    raise_open_files(2 * (players + spectators + stalled + idle_beside) + 1024)
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
        extra = {"SPIDER_RACE_HINTS_PER_RACE": "1000000"}  # the spammers never run out
        if pool_refill:  # a pool that never fills: a refill always runs
            extra["SPIDER_RACE_POOL_SIZE"] = "10000"
        url, server_pid = await procs.start_server(
            redis_url, max_players=-(-players // races), ping_interval=ping, settings=extra
        )
    idlers = None
    idle_held = 0
    if idle_beside:
        from .idlers import Idlers

        idlers = Idlers(procs, url, idle_beside)
        idle_held = await idlers.start()
    rss: list[float | None] = [None]

    def loaded() -> None:
        if server_pid is not None:
            rss[0] = rss_mb(server_pid)

    solver = None
    if hint_spam or pool_refill or pars:
        solver = SolverLoad(url, metrics_url(url), hint_spam, pool_refill, pars)
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
            solver=solver,
        )
    idle_lost = idlers.stop() if idlers is not None else None
    in_redis: int | None = None
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
    print_figures(
        players_figures(
            tally,
            meter,
            base,
            base_meter,
            players=players,
            races=races,
            spectators=spectators,
            stalled=stalled,
            rate=rate,
            warmup=warmup,
            connections=connections,
            rss=rss[0],
            in_redis=in_redis,
        )
    )
    if idlers is not None:
        print(f"idle_beside: {idle_held}")
        print(f"idle_beside_lost: {'n/a' if idle_lost is None else idle_lost}")
    if tally.error_kinds:
        print("error_kinds: " + ", ".join(f"{k}={v}" for k, v in sorted(tally.error_kinds.items())))
    return 0


async def bench_idle(args: argparse.Namespace, procs: Processes) -> int:
    """The idle mode: ``--idle`` connections that said hello, held for ``--seconds``;
    prints the figures."""
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
    rss = rss_mb(server_pid) if server_pid is not None else None
    await close_all(clients)
    print_figures(
        idle_figures(
            len(clients), lost=lost, errors=errors, took=took, seconds=args.seconds, rss=rss
        )
    )
    return 0


def run(args: argparse.Namespace) -> int:
    """``spider-race bench server`` (the options are the ``bench`` command's). Stopped
    with SIGTERM or Ctrl-C, it stops its processes too."""

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


def run_nodes(args: argparse.Namespace) -> int:
    """``spider-race bench affinity`` and ``bench capacity`` (two node processes:
    :mod:`.affinity`, :mod:`.capacity`); stopped as :func:`run` is."""
    from .affinity import bench_affinity
    from .capacity import bench_capacity

    async def bench() -> int:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        raise_open_files(4 * (args.players + args.spectators + args.idle) + 1024)
        if args.what == "affinity":
            return await bench_affinity(args, procs)
        return await bench_capacity(args, procs)

    procs = Processes()
    try:
        return asyncio.run(bench())
    except (KeyboardInterrupt, asyncio.CancelledError):
        print(f"spider-race bench {args.what}: stopped", file=sys.stderr)
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
    if len(argv) == 3 and argv[0] == "idle":
        from .idlers import idlers_worker

        asyncio.run(idlers_worker(argv[1], int(argv[2])))
        return 0
    if len(argv) >= 5 and argv[0] == "spectators":
        asyncio.run(spectators_worker(argv[1], int(argv[2]), int(argv[3]), argv[4:]))
        return 0
    print(
        f"usage: python -m {WORKER_MODULE} echo PORT REDIS_URL\n"
        f"       python -m {WORKER_MODULE} spectators URL FIRST COUNT CODE...\n"
        f"       python -m {WORKER_MODULE} idle URL COUNT",
        file=sys.stderr,
    )
    return 2
