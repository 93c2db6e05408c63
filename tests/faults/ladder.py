"""The quick-match ladder: bot processes (``spider-race bot --quick``) of several
strengths queue for quick matches against server nodes; afterwards the checks read Redis.

``run_ladder`` starts the bots (each given every node's URL, its own first: a bot whose
node dies moves to the next) and stops them after some seconds, or once what they wrote
shows enough games (the short runs); with a callback midway (``during``: a node killed,
say) they run as long again after it. ``check_ladder`` waits until every race made has
finished and its results are written, then asserts what must hold whatever happened:
every group taken from a queue made exactly one race (a count in Redis equals the races;
with ``killed``, a node may have died between taking a group and remembering it), no
race was made twice, no player was ever in two games at once (each player's game in a
race was over before their next race was made), and every finished rated race changed
ratings exactly once: the count of rated races applied equals the finished races, and
each bot's rated races in its record equal the finished races it played. It returns the
ratings by group (the bot names' prefix, their strategy) for the separation check.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgpack
import redis.asyncio as aioredis

from spider_server.race.ratings import display

__all__ = [
    "Condition",
    "LadderReport",
    "Lines",
    "check_ladder",
    "percentile",
    "run_ladder",
    "separated",
]

ROOT = Path(__file__).resolve().parents[2]
VARIANT = "spider1"
TURN_GROUPS = 8
"""Groups one node takes from one queue in a turn at most (``match.CODES_PER_TURN``)."""


@dataclass
class LadderReport:
    """What a ladder run left: the races made (code -> players), those finished, and each
    group's ratings shown (strategy -> ratings)."""

    races: dict[str, list[str]] = field(default_factory=dict)
    made: dict[str, float] = field(default_factory=dict)
    """Code -> when the race was made (the server's clock)."""
    names: dict[str, str] = field(default_factory=dict)
    """Player -> the bot's name."""
    finished: int = 0
    ratings: dict[str, list[int]] = field(default_factory=dict)

    def figures(self) -> str:
        """The run's figures in a few lines: races made and finished, then per group the
        bots rated and their ratings' 10th, 50th and 90th percentiles."""
        lines = [f"races made {len(self.races)}, finished and rated {self.finished}"]
        for group, values in self.ratings.items():
            p10, p50, p90 = (percentile(values, q) for q in (10, 50, 90))
            lines.append(
                f"{group:9} bots {len(values):3}  p10 {p10:6.0f}  p50 {p50:6.0f}  p90 {p90:6.0f}"
            )
        return "\n".join(lines)


def percentile(values: list[int], q: float) -> float:
    """The ``q``-th percentile of ``values`` (linear between the nearest ranks)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    at = (len(ordered) - 1) * q / 100
    low, high = math.floor(at), math.ceil(at)
    return ordered[low] + (ordered[high] - ordered[low]) * (at - low)


def separated(
    report: LadderReport, weakest_first: list[str]
) -> list[tuple[str, str, float, float]]:
    """Neighbouring groups whose separation fails: (stronger, weaker, stronger's 10th
    percentile, weaker's 90th) for each pair where the first is not above the second."""
    bad = []
    for weak, strong in zip(weakest_first, weakest_first[1:], strict=False):
        p10 = percentile(report.ratings.get(strong, []), 10)
        p90 = percentile(report.ratings.get(weak, []), 90)
        if not p10 > p90:
            bad.append((strong, weak, p10, p90))
    return bad


Lines = dict[str, list[tuple[float, str]]]
"""Each bot's output lines by its name (a line a game finished), with when each was read."""
Condition = Callable[[Lines], bool | Awaitable[bool]]
"""When a short run may stop, judged on what the bots wrote (an async one may read Redis)."""


async def run_ladder(
    urls: list[str],
    strengths: dict[str, int],
    *,
    variant: str = VARIANT,
    seconds: float | None = None,
    until: Condition | None = None,
    during: Callable[[], Awaitable[None]] | None = None,
    then: Condition | None = None,
    timeout: float = 120.0,
    tokens: dict[str, str] | None = None,
) -> dict[str, list[str]]:
    """Run ``strengths`` (strategy -> bot processes) spread over ``urls``: the n-th bot is
    given every URL, starting from ``urls[n % len(urls)]``. The bots run for ``seconds``,
    or (the short runs) until ``until`` holds of the lines they wrote (within ``timeout``,
    or the run fails); then ``during`` is awaited, and they run as long again (``then``:
    until it holds). Each bot's output lines by its name (the games it finished); a bot
    that exited before it was stopped fails the run, and the message shows the end of
    what it wrote on standard error. ``tokens``: each bot's session token by its name (the
    bot plays as that account; rated races are for accounts)."""
    procs: list[tuple[str, asyncio.subprocess.Process]] = []
    lines: Lines = {}
    readers: list[asyncio.Task[None]] = []
    logs = tempfile.TemporaryDirectory(prefix="ladder-")

    async def read(name: str, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            lines[name].append((time.monotonic(), line.decode().rstrip("\n")))

    async def holds(condition: Condition) -> bool:
        result = condition(lines)
        return await result if inspect.isawaitable(result) else result

    async def wait(condition: Condition | None) -> None:
        if condition is None:
            assert seconds is not None
            await asyncio.sleep(seconds)
            return
        deadline = time.monotonic() + timeout
        while not await holds(condition):
            died = [name for name, proc in procs if proc.returncode is not None]
            assert not died and time.monotonic() < deadline, (died, lines)
            await asyncio.sleep(0.1)

    n = 0
    for strategy, count in strengths.items():
        for i in range(count):
            name = f"{strategy}-{i}"
            first = n % len(urls)
            url = ",".join(urls[first:] + urls[:first])
            n += 1
            argv = [sys.executable, "-m", "spider_race", "bot", "--quick", variant]
            argv += ["--strategy", strategy, "--games", "0", "--name", name, "--url", url]
            with open(Path(logs.name) / f"{name}.err", "wb") as err:
                proc = await asyncio.create_subprocess_exec(
                    *argv,
                    stdout=subprocess.PIPE,
                    stderr=err,
                    cwd=ROOT,
                    env={
                        **os.environ,
                        "PYTHONUNBUFFERED": "1",
                        **({"SPIDER_RACE_TOKEN": tokens[name]} if tokens else {}),
                    },
                )
            procs.append((name, proc))
            lines[name] = []
            assert proc.stdout is not None
            readers.append(asyncio.create_task(read(name, proc.stdout)))
    try:
        await wait(until)
        if during is not None:
            await during()
            await wait(then)
    finally:
        died = [name for name, proc in procs if proc.returncode is not None]
        for _, proc in procs:
            if proc.returncode is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc in procs:
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await asyncio.gather(*readers)
    with logs:
        said = {
            name: (Path(logs.name) / f"{name}.err").read_text(errors="replace")[-2000:]
            for name in died
        }
    assert not died, f"bots that exited on their own: {died}; their standard error: {said}"
    return {name: [text for _, text in got] for name, got in lines.items()}


def _s(value: Any) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


async def _hash(r: aioredis.Redis, key: str) -> dict[str, str]:
    return {_s(k): _s(v) for k, v in (await r.hgetall(key)).items()}


async def _unfinished(r: aioredis.Redis, codes: list[str]) -> list[str]:
    states = [await r.hget(f"{{race:{code}}}:meta", "state") for code in codes]
    return [c for c, s in zip(codes, states, strict=True) if s is not None and _s(s) != "finished"]


async def _settled(r: aioredis.Redis, codes: list[str], url: str, timeout: float) -> None:
    """Wait until every race of ``codes`` that exists has finished and no race's results
    are pending. The bots are gone: a spectator joins each race still running through
    ``url``'s node, which then finishes it when due (by its time limit)."""
    from spider_client import Client, ServerError

    deadline = time.monotonic() + timeout
    referees: list[Client] = []  # one connection a race: a connection follows only so many
    try:
        for code in await _unfinished(r, codes):
            referee = await Client.connect(url, name="ladder-referee", affinity=False)
            referees.append(referee)
            with contextlib.suppress(ServerError):
                await referee.join(code, "spectator")
        while True:
            running = await _unfinished(r, codes)
            pending = await r.zcard("{ratings}:pending")
            if not running and not pending:
                return
            assert time.monotonic() < deadline, f"not finished or applied: {running}, {pending}"
            await asyncio.sleep(0.25)
    finally:
        for referee in referees:
            await referee.close()


async def check_ladder(
    redis_url: str,
    url: str,
    *,
    killed: bool = False,
    settle: float = 120.0,
    called_off: Callable[[], int] = lambda: 0,
) -> LadderReport:
    """Assert the ladder's invariants on Redis (see the module's docstring), waiting at
    most ``settle`` seconds for the races to finish (``url``: a node that is up); what
    the run left. ``called_off``: the quick matches the nodes called off so far (a match
    made as the bots left is called off when its players never come, and its race
    deleted: remembered, with no race)."""
    r = aioredis.from_url(redis_url)
    try:
        recent = [_s(x).split("|") for x in await r.lrange("{match}:recent", 0, -1)]
        codes = [line[0] for line in recent]
        assert len(set(codes)) == len(codes), "a race was made twice"
        await _settled(r, codes, url, settle)
        groups = int(await r.get("{match}:groups") or 0)
        created = int(await r.get("{match}:created") or 0)
        assert len(recent) == min(created, 1000)
        if killed:  # a node may die between taking a turn's groups and remembering them
            assert created <= groups <= created + TURN_GROUPS, (groups, created)
        else:
            assert groups == created, (groups, created)  # every group taken made one race
        report = LadderReport()
        by_player: dict[str, list[tuple[float, str]]] = defaultdict(list)
        missing = 0
        for code, players, made, *_ in recent:
            members = players.split(",")
            meta = await _hash(r, f"{{race:{code}}}:meta")
            if not meta:  # remembered, then its node died before committing it
                missing += 1
                continue
            report.races[code] = members
            report.made[code] = float(made)
            assert meta.get("quick") == "1" and meta.get("rated") == "1", code
            entries = await r.hkeys(f"{{race:{code}}}:players")
            assert sorted(_s(e) for e in entries) == sorted(members), code
            for player in members:
                by_player[player].append((float(made), code))
        off = called_off()  # read after the races: a call-off counts before it deletes
        assert missing <= (TURN_GROUPS if killed else 0) + off, (missing, off)
        for player, made in by_player.items():
            made.sort()
            for (_, first), (then, _) in zip(made, made[1:], strict=False):
                meta = await _hash(r, f"{{race:{first}}}:meta")
                game = await _hash(r, f"{{race:{first}}}:game:{player}")
                assert game.get("status") not in (None, "", "playing"), (player, first)
                if game.get("time") and meta.get("started_at"):
                    over = float(meta["started_at"]) + float(game["time"])
                    assert over <= then + 0.5, (player, first, over, then)
        # every finished rated race changed ratings exactly once, but an abort (at most one
        # player made a move) changed none
        report.finished = len(report.races)  # all finished (settled above), all rated
        aborts: set[str] = set()
        for code, members in report.races.items():
            games = [await _hash(r, f"{{race:{code}}}:game:{p}") for p in members]
            if sum(int(g.get("moves") or 0) > 0 for g in games) < 2:
                aborts.add(code)
        applied = int(await r.get("{ratings}:rated_races") or 0)
        assert applied == report.finished - len(aborts), (applied, report.finished, aborts)
        assert await r.hlen("{ratings}:applied") == report.finished
        for player, made in by_player.items():
            data = await r.hget(f"{{ratings}}:player:{player}", "d")
            assert data is not None, player
            record = msgpack.unpackb(data, raw=False)
            vr = record["variants"][VARIANT]
            rated = len([code for _, code in made if code not in aborts])
            assert (vr["rated"], vr["played"]) == (rated, len(made)), (player, vr, len(made))
            report.names[player] = str(record["name"])
            group = report.names[player].rsplit("-", 1)[0]
            report.ratings.setdefault(group, []).append(display(vr["mu"], vr["sigma"]))
        return report
    finally:
        await r.aclose()
