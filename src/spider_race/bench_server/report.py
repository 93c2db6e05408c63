"""The figures the bench prints, as ``key: value`` lines (the keys are in the package's
docstring)."""

from __future__ import annotations

from .meter import CpuMeter
from .sending import Tally
from .solverload import SolverLoad
from .tools import ms, ms_per, or_na, percentile

__all__ = [
    "Figures",
    "print_figures",
    "players_figures",
    "stalled_figures",
    "solver_figures",
    "idle_figures",
]

Figures = list[tuple[str, object]]
"""``(key, value)`` pairs, in the order printed."""


def print_figures(figures: Figures) -> None:
    """Print ``key: value`` lines, flushed one by one."""
    for key, value in figures:
        print(f"{key}: {value}", flush=True)


def players_figures(
    tally: Tally,
    meter: CpuMeter,
    base: Tally,
    base_meter: CpuMeter,
    *,
    players: int,
    races: int,
    spectators: int,
    stalled: int,
    rate: float | None,
    warmup: float,
    connections: int,
    rss: float | None,
    in_redis: int | None,
) -> Figures:
    """The players mode's figures: ours (``tally`` and ``meter``), the baseline's
    (``base`` and ``base_meter``) and their ratios; with stalled spectators, theirs too
    (:func:`stalled_figures`)."""
    ours, theirs = meter.total_ms(tally.moves), base_meter.total_ms(base.moves)
    pair, base_pair = meter.pair_ms(tally.moves), base_meter.pair_ms(base.moves)
    moves_per_s = tally.moves / tally.seconds
    base_per_s = base.moves / base.seconds
    return [
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
        ("ack_p50_ms", ms(percentile(tally.acks, 50))),
        ("ack_p99_ms", ms(percentile(tally.acks, 99))),
        ("event_p99_ms", ms(percentile(tally.events, 99))),
        ("events_measured", len(tally.events)),
        *(stalled_figures(tally) if stalled else []),
        *solver_figures(tally),
        ("connections", connections),
        ("server_rss_mb", or_na(rss, ".1f")),
        ("server_cpu_ms_per_move", meter.per_move_ms("server", tally.moves)),
        ("redis_cpu_ms_per_move", meter.per_move_ms("redis", tally.moves)),
        ("bots_cpu_ms_per_move", meter.per_move_ms("bots", tally.moves)),
        ("errors", tally.errors),
        ("moves_in_redis", or_na(in_redis)),
        ("baseline_per_s", f"{base_per_s:.1f}"),
        ("baseline_ack_p99_ms", ms(percentile(base.acks, 99))),
        ("baseline_server_cpu_ms_per_message", base_meter.per_move_ms("server", base.moves)),
        ("baseline_redis_cpu_ms_per_message", base_meter.per_move_ms("redis", base.moves)),
        ("baseline_clients_cpu_ms_per_message", base_meter.per_move_ms("bots", base.moves)),
        ("baseline_errors", base.errors),
        ("ratio", f"{moves_per_s / base_per_s:.3f}" if base_per_s else "n/a"),
        ("cpu_ratio", "n/a" if ours is None or theirs is None else f"{theirs / ours:.3f}"),
        ("pair_ratio", "n/a" if not pair or not base_pair else f"{pair / base_pair:.3f}"),
    ]


def stalled_figures(tally: Tally) -> Figures:
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

    def cpu(side: int) -> str:
        return ms_per(run.cpu[side] if run.cpu_known else None, run.moves[side])

    return [
        ("event_p99_ms_stalled_away", ms(away)),
        ("event_p99_ms_stalled_watching", ms(watching)),
        ("events_stalled_away", len(tally.events_by_side[0])),
        ("events_stalled_watching", len(tally.events_by_side[1])),
        ("stalled_slowdown_pct", slower),
        ("server_cpu_ms_per_move_stalled_away", cpu(0)),
        ("server_cpu_ms_per_move_stalled_watching", cpu(1)),
        ("stalled_backlogged_at_start", or_na(run.backlogged_at_start)),
        ("stalled_backlogged_watching", or_na(run.backlogged_watching)),
        ("stalled_backlog_frames", or_na(run.backlog_frames)),
        ("stalled_slices_as_planned", f"{run.checks[0]}/{len(run.plan)}"),
        ("stalled_toggle_late_ms", f"{run.late * 1000:.1f}"),
    ]


def solver_figures(tally: Tally) -> Figures:
    """With hint spam or pool refills: the ack p99 of the quiet half and of the loaded
    half of the measured time (:mod:`.solverload`), their ratio, and what the load did."""
    load = tally.solver
    if load is None:
        return []
    quiet = [a for a, due in zip(tally.acks, tally.due, strict=True) if due < tally.middle]
    loaded = [a for a, due in zip(tally.acks, tally.due, strict=True) if due >= tally.middle]
    p_quiet, p_loaded = percentile(quiet, 99), percentile(loaded, 99)
    known = p_quiet == p_quiet and p_loaded == p_loaded and p_quiet > 0  # not NaN
    errors = ", ".join(f"{k}={v}" for k, v in sorted(load.errors.items())) or "0"
    return [
        ("hint_spammers", load.spammers),
        ("pool_refill", "yes" if load.refill else "no"),
        ("ack_p99_ms_quiet", ms(p_quiet)),
        ("ack_p99_ms_loaded", ms(p_loaded)),
        ("acks_quiet", len(quiet)),
        ("acks_loaded", len(loaded)),
        ("solver_load_ratio", f"{p_loaded / p_quiet:.3f}" if known else "n/a"),
        ("hints_answered", load.hints),
        ("hints_refused", load.refused),
        ("solver_jobs_completed_loaded", or_na(load.completed, ".0f")),
        ("solver_jobs_running_at_end", or_na(load.running_at_end, ".0f")),
        ("solver_jobs_preempted_loaded", or_na(load.preempted, ".0f")),
        ("solver_workers_started_loaded", or_na(load.started, ".0f")),
        ("solver_load_errors", errors),
        *honest_figures(load),
        *par_figures(load),
    ]


def honest_figures(load: SolverLoad) -> Figures:
    """With spammers: the honest player's hints (:mod:`.honesthint`), quiet and loaded:
    how many, their median and slowest times, and the ratio of the medians."""
    honest = load.honest
    if honest is None:
        return []
    quiet, loaded = honest.quiet, honest.loaded
    known = bool(quiet and loaded)
    ratio = percentile(loaded, 50) / percentile(quiet, 50) if known else None
    errors = ", ".join(f"{k}={v}" for k, v in sorted(honest.errors.items())) or "0"
    return [
        ("honest_hints_quiet", len(quiet)),
        ("honest_hints_loaded", len(loaded)),
        ("honest_hint_ms_p50_quiet", ms(percentile(quiet, 50)) if quiet else "n/a"),
        ("honest_hint_ms_p50_loaded", ms(percentile(loaded, 50)) if loaded else "n/a"),
        ("honest_hint_ms_max_quiet", ms(max(quiet)) if quiet else "n/a"),
        ("honest_hint_ms_max_loaded", ms(max(loaded)) if loaded else "n/a"),
        ("honest_hint_ratio", or_na(ratio, ".3f")),
        ("honest_hint_errors", errors),
    ]


def par_figures(load: SolverLoad) -> Figures:
    """With ``--pars``: the pars landed, the wait from each finish to its par (sum, p50,
    max), the workers' CPU on them, and the ratio of the waits to that CPU."""
    if not load.pars:
        return []
    waits = load.par_waits
    total = sum(waits)
    cpu = load.par_cpu
    ratio = f"{total / cpu:.2f}" if cpu and waits else "n/a"
    return [
        ("pars_asked", load.pars),
        ("pars_landed", len(waits)),
        ("par_wait_s_total", f"{total:.2f}"),
        ("par_wait_s_p50", f"{percentile(waits, 50):.2f}" if waits else "n/a"),
        ("par_wait_s_max", f"{max(waits):.2f}" if waits else "n/a"),
        ("par_cpu_s_total", or_na(cpu, ".2f")),
        ("par_wait_to_cpu_ratio", ratio),
    ]


def idle_figures(
    connected: int, *, lost: int, errors: int, took: float, seconds: float, rss: float | None
) -> Figures:
    """The idle mode's figures: ``connected`` clients in ``took`` seconds, ``lost`` of
    them during the ``seconds`` held, ``errors`` in connecting; ``rss`` the server's."""
    per_connection = None if rss is None or not connected else rss * 1024 / connected
    return [
        ("mode", "idle"),
        ("connections", connected - lost),
        ("connect_per_s", f"{connected / took:.0f}"),
        ("seconds", f"{seconds:g}"),
        ("server_rss_mb", or_na(rss, ".1f")),
        ("server_kib_per_connection", or_na(per_connection, ".1f")),
        ("errors", errors + lost),
    ]
