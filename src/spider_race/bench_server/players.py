"""The players: bots in races that play the ping-pong deal on a schedule, watched by the
crowd (and the stalled spectators); the timed phase, and the moves Redis holds after."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from spider_client import Client

from .deal import PingPong, find_ping_pong
from .meter import CpuMeter
from .sending import Send, Tally, Timing, drive
from .solverload import SolverLoad
from .spectators import Crowd
from .stalled import StalledRun, StalledSpectator, metrics_url, stalled_spectator
from .tools import bounded, close_all, collector_paused, connect_client, shares

__all__ = ["race_players", "timed_phase", "moves_in_redis"]


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
    solver: SolverLoad | None = None,
) -> tuple[Tally, list[tuple[str, str]], PingPong, int]:
    """Set up the races, run the warm-up and the timed phase, close. Returns the tally,
    the (race code, player id) of every bot, the deal played, and the connections held."""
    line = find_ping_pong()
    sizes = [s for s in shares(players, races) if s > 0]

    # the bots never read their events: they keep only the last few, as any client that
    # does not read them (spectators read every event: each is measured)
    clients = await bounded(
        [f"bot{i}" for i in range(players)],
        lambda name: connect_client(url, name, resend_after=20.0, max_unread=16, bot=True),
        concurrency=100,
    )
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
            quiet = [await stalled_spectator(url, codes[i % len(codes)]) for i in range(stalled)]
            server = meter.server_pid if meter is not None else None
            run = StalledRun(quiet, codes, metrics_url(url), server)
            await run.stall()
        if solver is not None:
            await solver.setup()
        with collector_paused():
            tally = await timed_phase(
                bots,
                crowd,
                line,
                rate,
                seconds,
                meter=meter,
                warmup=warmup,
                stalled=run,
                solver=solver,
            )
        if on_loaded is not None:
            on_loaded()
    finally:
        await crowd.close()
        for w in quiet:
            w.close()
        if solver is not None:
            await solver.close()
    # the spammers, and with them the honest player of :mod:`.honesthint`
    hinters = solver.spammers + (solver.honest is not None) if solver else 0
    connections = len(bots) + spectators + len(quiet) + hinters
    await close_all(bots)
    bot_keys = [(c.code or "", c.player or "") for c in bots]
    return tally, bot_keys, line, connections


async def timed_phase(
    bots: list[Client],
    crowd: Crowd,
    line: PingPong,
    rate: float | None,
    seconds: float,
    *,
    meter: CpuMeter | None,
    warmup: float,
    stalled: StalledRun | None = None,
    solver: SolverLoad | None = None,
) -> Tally:
    """The warm-up and the measured time: every bot sends on its schedule; the spectators'
    deliveries of the progress of moves sent in the measured time are timed (once every
    spectator has seen every bot's last move).

    With stalled spectators (backlogged, away from their races), the measured time is cut
    into slices where they watch and where they are away (:class:`.stalled.StalledRun`);
    the deliveries of the moves of their races count on the side of the move's slice.
    With a solver load (:class:`.solverload.SolverLoad`) it starts in the middle of the
    measured time."""
    tally = Tally(stalled=stalled, solver=solver)
    loop = asyncio.get_running_loop()
    sent: dict[tuple[str, int], float] = {}
    timing = Timing.from_now(warmup, seconds)
    t_measure, t_end = timing.measure, timing.end

    def sender(c: Client) -> Send:
        base = len(line.opening)

        async def send(k: int) -> None:
            move = line.there if k % 2 == 0 else line.back
            sent[(c.player or "", base + k + 1)] = loop.time()
            await c.move(move)

        return send

    alongside = [stalled.run(t_measure, seconds)] if stalled else []
    if solver is not None:
        tally.middle = t_measure + seconds / 2
        alongside.append(solver.run(tally.middle, t_end))
    await drive([sender(c) for c in bots], rate, timing, tally, meter=meter, alongside=alongside)
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


async def moves_in_redis(redis_url: str, bots: list[tuple[str, str]], opening: int) -> int:
    """The moves in the bots' action lists, less their openings."""
    from spider_server.store import keys
    from spider_server.store.redisconn import connect

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
