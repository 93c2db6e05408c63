"""``spider-race demo --headless`` on each alternative deck, against one real server (a node
with a real Redis): every race finishes with a result for every bot."""

from __future__ import annotations

import asyncio
import io

import pytest

from spider_client import make_bot
from spider_engine import Board
from spider_race import cli, client_commands
from spider_race.client_commands import demo_bots, run_demo
from tests.client.client_helpers import FAST

VARIANTS = ["myrmex", "myrmex+blind", "wizard", "wizard+weave", "sparrow", "starfish"]
BOTS = 3


def headless_demo(url: str, variant: str) -> tuple[int, str]:
    """Run the headless demo of ``variant`` in its own event loop: exit status and output."""
    out = io.StringIO()
    job = run_demo(bots=BOTS, variant=variant, url=url, headless=True, seed=seed(variant), out=out)
    return asyncio.run(job), out.getvalue()


def seed(variant: str) -> str:
    return f"alt-demo-{variant}"


def check_race(variant: str, status: int, out: str) -> None:
    assert status == 0, out
    assert f": {variant}, {BOTS} bots, live boards on" in out
    assert "started — commitment" in out
    assert f"finished — seed '{seed(variant)}' revealed" in out
    ranking = out[out.index("rank  player") :].splitlines()[1:]
    assert len(ranking) == BOTS, out
    names = [line[6:31].strip() for line in ranking]
    statuses = [line[33:42].strip() for line in ranking]
    assert sorted(names) == sorted(name for name, _ in demo_bots(BOTS))
    assert set(statuses) <= {"won", "resigned", "stuck"}, ranking
    assert all(line.split()[-1] == "bot" for line in ranking), ranking  # the demo's are bots
    moves = [int(line.split()[-3]) for line in ranking]
    assert all(m > 0 for m in moves), ranking


@pytest.mark.parametrize("variant", VARIANTS)
async def test_headless_demo_on_an_alternative_deck(redis_server, server_node, variant) -> None:
    node = await server_node(redis_server.url, **FAST)
    status, out = await asyncio.wait_for(asyncio.to_thread(headless_demo, node.url, variant), 240)
    check_race(variant, status, out)


async def test_the_demo_command_with_an_option_in_the_variant(
    redis_server, server_node, capsys
) -> None:
    node = await server_node(redis_server.url, **FAST)
    argv = ["demo", "--headless", "--bots", str(BOTS), "--url", node.url]
    argv += ["--variant", "spider2+keep", "--seed", seed("spider2+keep")]
    status = await asyncio.wait_for(asyncio.to_thread(cli.main, argv), 120)
    captured = capsys.readouterr()
    check_race("spider2+keep", status, captured.out)
    assert "the bot failed" not in captured.err


async def test_a_failing_bot_resigns_and_the_demo_still_ends(
    redis_server, server_node, capsys, monkeypatch
) -> None:
    def failing(view: Board) -> str | None:
        raise RuntimeError("no idea")

    def bots(strategy: str, *, seed: int | str | None = None) -> object:
        return failing if strategy == "random" else make_bot(strategy, seed=seed)

    monkeypatch.setattr(client_commands, "make_bot", bots)
    node = await server_node(redis_server.url, **FAST)
    status, out = await asyncio.wait_for(asyncio.to_thread(headless_demo, node.url, "wizard"), 120)
    assert status == 1
    ranking = out[out.index("rank  player") :].splitlines()[1:]
    assert len(ranking) == BOTS
    failed = [line for line in ranking if " random " in line]
    assert len(failed) == 1 and " resigned " in failed[0]
    assert "Brian random: the bot failed (RuntimeError('no idea'))" in capsys.readouterr().err
