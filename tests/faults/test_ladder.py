"""The quick-match ladder: bot processes of different strengths queue against two nodes;
no player is ever in two races at once and every group taken makes exactly one race."""

from __future__ import annotations

import pytest

from tests.faults.ladder import check_ladder, run_ladder

LADDER = {
    "match_wait": 4.0,
    "match_gather": 1.0,
    "match_turn": 0.1,
    "match_countdown": 1,
    "match_time_limit": 8,
    "rate": 2000.0,
    "burst": 2000,
}


async def test_a_short_ladder_on_two_nodes(redis_server, server_node) -> None:
    nodes = [await server_node(redis_server.url, **LADDER) for _ in range(2)]
    lines = await run_ladder(
        [n.url for n in nodes], {"greedy": 3, "random": 3}, variant="spider1", seconds=20
    )
    races = await check_ladder(redis_server.url)
    assert len(races) >= 3, races
    assert sum(n.node.lobby.matches_made for n in nodes) == len(races)
    played = [line for out in lines.values() for line in out]
    assert len(played) >= 6, lines
    assert all(line.split()[0] in races for line in played)


@pytest.mark.slow
async def test_the_ladder_for_minutes(redis_server, server_node) -> None:
    nodes = [await server_node(redis_server.url, **LADDER) for _ in range(2)]
    await run_ladder(
        [n.url for n in nodes],
        {"greedy": 30, "random": 30},
        variant="spider1",
        seconds=240,
    )
    races = await check_ladder(redis_server.url)
    assert len(races) >= 60
