"""The quick-match ladder: bot processes of three strengths queue against two nodes; no
player is ever in two races at once, every group taken makes exactly one race, and every
finished race (all rated) changes ratings exactly once (an abort, where at most one bot
moved, none); also with one node SIGKILLed
midway (the bots move to the other node). The short runs stop once the bots' games show
enough (not after a fixed time, which a busy machine fills with fewer games). The slow
runs (``-m slow``) last minutes, with 60 bots, and check that the strengths separate:
each group's 10th-percentile rating is above the next weaker group's 90th."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.faults.fault_helpers import FAST_ENV
from tests.faults.ladder import Lines, check_ladder, run_ladder, separated
from tests.server.account_helpers import account_token

LADDER = {
    "match_wait": 4.0,
    "match_gather": 1.0,
    "match_turn": 0.1,
    "match_countdown": 1,
    "match_time_limit": 8,
    "rate": 2000.0,
    "burst": 2000,
    # the ladder measures strengths and exactly-once writes, not the limit on rated races
    # between the same pair (each bot meets the same few opponents over and over)
    "rated_pair_per_day": 1000,
}
WEAKEST_FIRST = ["random", "careless", "greedy"]


def games(count: int, *, races: int) -> Callable[[Lines], bool]:
    """The short runs' end: ``count`` games finished, of ``races`` races at least."""

    def enough(lines: Lines) -> bool:
        played = [line.split()[0] for got in lines.values() for _, line in got]
        return len(played) >= count and len(set(played)) >= races

    return enough


async def made_at(redis_url: str) -> dict[str, float]:
    """The quick-match races made so far: code -> when (the server's clock)."""
    r = aioredis.from_url(redis_url)
    try:
        recent = [x.decode().split("|") for x in await r.lrange("{match}:recent", 0, -1)]
    finally:
        await r.aclose()
    return {line[0]: float(line[2]) for line in recent}


async def _accounts(node: Any, strengths: dict[str, int]) -> dict[str, str]:
    """A session token for each bot of ``strengths`` by its name (``<strategy>-<n>``), of
    a bot account of that name: nodes with a database keep accounts, and rated races (every
    quick match but the casual pool's) are between accounts."""
    names = [f"{s}-{i}" for s, count in strengths.items() for i in range(count)]
    return {name: await account_token(node, name, bot=True) for name in names}


def _env(settings: dict[str, float | int]) -> dict[str, str]:
    """The settings as a server process's environment."""
    return {**FAST_ENV, **{f"SPIDER_RACE_{k.upper()}": str(v) for k, v in settings.items()}}


def _called_off(nodes: list[Any]) -> Callable[[], int]:
    """The quick matches ``nodes`` called off so far, read when called."""
    return lambda: sum(n.node.lobby.matches.called_off for n in nodes)


async def test_a_short_ladder_on_two_nodes(redis_server, server_node) -> None:
    nodes = [await server_node(redis_server.url, **LADDER) for _ in range(2)]
    lines = await run_ladder(
        [n.url for n in nodes], {s: 2 for s in WEAKEST_FIRST}, until=games(6, races=3)
    )
    report = await check_ladder(redis_server.url, nodes[0].url, called_off=_called_off(nodes))
    assert len(report.races) >= 3, report.races
    made = sum(n.node.lobby.matches_made for n in nodes)
    assert made == len(report.races) + _called_off(nodes)()
    played = [line for out in lines.values() for line in out]
    assert len(played) >= 6, lines
    assert all(line.split()[0] in report.races for line in played)
    # ratings exist for every bot that raced, each moved once per race (checked above)
    assert sum(len(v) for v in report.ratings.values()) == len(
        {p for players in report.races.values() for p in players}
    )
    assert set(report.ratings) <= set(WEAKEST_FIRST)


async def test_a_short_ladder_with_a_node_sigkilled(
    redis_server, server_process, pg_database
) -> None:
    settings = {k: v for k, v in LADDER.items() if k.startswith(("match_", "rated_"))}
    env = _env({**settings, "address_signups": 1000})
    nodes = [
        await server_process(redis_server.url, SPIDER_RACE_DATABASE_URL=pg_database.url, **env)
        for _ in range(2)
    ]
    tokens = await _accounts(nodes[1], {s: 2 for s in WEAKEST_FIRST})

    killed_at: list[float] = []
    started_on_killed = {f"{s}-0" for s in WEAKEST_FIRST}

    async def kill() -> None:
        nodes[0].kill()
        killed_at.append(time.time())

    async def moved(lines: Lines) -> bool:
        """Every bot finished a game, and one that started on the killed node finished a
        race made after the kill."""
        if not all(lines.values()):
            return False
        codes = {line.split()[0] for name in started_on_killed for _, line in lines[name]}
        return any(made > killed_at[0] for code, made in (await made_at(redis_server.url)).items()
                   if code in codes)  # fmt: skip

    lines = await run_ladder(
        [n.url for n in nodes],
        {s: 2 for s in WEAKEST_FIRST},
        until=games(4, races=2),
        during=kill,
        then=moved,
        tokens=tokens,
    )
    report = await check_ladder(redis_server.url, nodes[1].url, killed=True)
    assert len(report.races) >= 3, report.races
    assert all(out for out in lines.values()), lines  # every bot played
    # the bots that started on the killed node (every other one: random-0, careless-0,
    # greedy-0) moved to the other and raced there
    after = {
        report.names.get(p)
        for c, t in report.made.items()
        if t > killed_at[0]
        for p in report.races[c]
    }
    assert after & started_on_killed, (after, report.made, killed_at)


@pytest.mark.slow
async def test_the_ladder_for_minutes(redis_server, server_node, capsys) -> None:
    settings = {**LADDER, "match_time_limit": 15}
    nodes = [await server_node(redis_server.url, **settings) for _ in range(2)]
    await run_ladder([n.url for n in nodes], {s: 20 for s in WEAKEST_FIRST}, seconds=240)
    report = await check_ladder(redis_server.url, nodes[0].url)
    with capsys.disabled():
        print("\nthe ladder, 60 bots, 240 s, two nodes\n" + report.figures())
    assert len(report.races) >= 60
    assert separated(report, WEAKEST_FIRST) == []


@pytest.mark.slow
async def test_the_ladder_for_minutes_with_a_node_sigkilled(
    redis_server, server_process, pg_database, capsys
) -> None:
    settings = {k: v for k, v in LADDER.items() if k.startswith(("match_", "rated_"))}
    settings["match_time_limit"] = 15
    env = _env({**settings, "address_signups": 1000})
    nodes = [
        await server_process(redis_server.url, SPIDER_RACE_DATABASE_URL=pg_database.url, **env)
        for _ in range(2)
    ]
    strengths = {s: 20 for s in WEAKEST_FIRST}
    tokens = await _accounts(nodes[1], strengths)

    async def kill() -> None:
        nodes[0].kill()

    await run_ladder([n.url for n in nodes], strengths, seconds=120, during=kill, tokens=tokens)
    report = await check_ladder(redis_server.url, nodes[1].url, killed=True)
    with capsys.disabled():
        print("\nthe ladder, 60 bots, 240 s, node 1 SIGKILLed at 120 s\n" + report.figures())
    assert len(report.races) >= 60
    assert separated(report, WEAKEST_FIRST) == []
