"""The client library against real server nodes: ``client.me`` after every ack, bots that
say they are bots, ``my_races`` and leaving by code, the random bot's move cap."""

from __future__ import annotations

import asyncio
import random

import pytest

from spider_client import (
    Client,
    HumansOnly,
    RandomBot,
    TooManyRaces,
    connect_bot,
    make_bot,
    play_race,
)
from spider_client import protocol as p
from spider_client.strategies import RANDOM_MAX_MOVES
from tests.client.client_helpers import FAST, Collector

PROGRESS_FIELDS = ("status", "moves", "score", "turned_up", "runs", "deals_left", "time")


def fields(info: p.PlayerInfo) -> dict[str, object]:
    return {k: getattr(info, k) for k in PROGRESS_FIELDS}


async def test_me_after_each_ack_is_what_the_next_progress_says(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with (
        await Client.connect(node.url, name="mover") as player,
        await Client.connect(node.url, name="watcher") as watcher,
    ):
        code = await player.create_race(variant="spider1", seed="me-after-ack", countdown=0)
        await watcher.join(code, "spectator")
        seen = Collector(watcher)
        await player.ready()
        await player.wait_until(lambda c: c.view is not None)
        rng = random.Random(7)
        acks = 0
        deals = 0
        for _ in range(40):
            moves = player.legal_moves()
            plain = [m for m in moves if m != "+"]
            move = "+" if not plain or (deals < 2 and rng.random() < 0.1) else rng.choice(plain)
            deals += move == "+"
            ack = await player.move(move)
            await check(player, seen, ack)
            acks += 1
        ack = await player.resign()
        await check(player, seen, ack)
        assert acks == 40 and deals >= 1
        me = player.me
        assert me is not None and me.status == "resigned" and me.time is not None


async def check(player: Client, seen: Collector, ack: p.Ack) -> None:
    """``player.me`` right after ``ack`` equals the spectator's progress event of it."""
    me = player.me
    assert me is not None
    mine = fields(me)
    assert mine["moves"] == ack.moves and mine["turned_up"] == ack.turned_up

    async with asyncio.timeout(10):
        while True:
            found = [
                e.player
                for e in seen.of(p.Progress)
                if e.player.player == player.player
                and e.player.moves == ack.moves
                and e.player.status == ack.status
            ]
            if found:
                break
            await asyncio.sleep(0.01)
    assert mine == fields(found[-1])


async def test_bots_say_so_and_a_humans_only_race_refuses_them(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with (
        await Client.connect(node.url, name="Alice") as alice,
        await connect_bot(node.url, name="Robo") as robo,
    ):
        assert robo.bot and not alice.bot
        humans = await alice.create_race(variant="spider1", humans_only=True)
        assert alice.race is not None and alice.race.humans_only
        with pytest.raises(HumansOnly) as refused:
            await robo.join(humans)
        assert refused.value.code == "humans_only"
        await robo.join(humans, "spectator")  # watching is for everyone
        code = await robo.create_race(variant="spider1", seed="bots-marked", countdown=0)
        await alice.join(code)
        assert robo.race is not None
        marks = {i.name: i.bot for i in robo.race.players}
        assert marks == {"Robo": True, "Alice": False}
        await alice.ready()
        race = await play_race(robo, make_bot("greedy", seed=1), max_actions=60, until="game")
        await alice.wait_until(lambda c: c.view is not None)
        await alice.resign()
        await robo.wait_until(lambda c: c.finished, timeout=30)
        assert robo.race is not None and robo.race.results is not None
        assert {r.name: r.bot for r in robo.race.results} == {"Robo": True, "Alice": False}
        assert race.code == code


async def test_my_races_lists_states_and_leave_frees_a_place(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, max_races_per_player=3, **FAST)
    async with (
        await Client.connect(node.url, name="Busy") as busy,
        await Client.connect(node.url, name="Host") as host,
    ):
        waiting = await busy.create_race(variant="spider1")
        running = await busy.create_race(variant="spider2", countdown=0)
        await host.join(running)  # a second player: the race runs on when busy leaves
        await host.ready()
        await busy.ready()
        await busy.wait_until(lambda c: c.view is not None)
        done = await busy.create_race(variant="spider1", countdown=0, time_limit=1)
        await busy.ready()
        await busy.wait_until(lambda c: c.finished, timeout=20)
        watched = await host.create_race(variant="spider4")
        await busy.join(watched, "spectator")
        races = await busy.my_races()
        got = {r.code: (r.state, r.role, r.counts, r.players) for r in races}
        assert got == {
            done: ("finished", "player", False, 1),
            running: ("running", "player", True, 2),
            waiting: ("open", "player", True, 1),
            watched: ("open", "spectator", False, 1),
        }
        assert [r.code for r in races][:3] == [done, running, waiting]  # newest first
        # two count: a third may be made; a fourth not, and the error names the three
        third = await busy.create_race(variant="spider1")
        with pytest.raises(TooManyRaces) as full:
            await busy.create_race(variant="spider1")
        assert sorted(full.value.races) == sorted([waiting, running, third])
        for c in (waiting, running, third):
            assert c in full.value.message
        # leaving by code: a waiting race frees its place at once; a running game is left
        await busy.leave(waiting)
        await busy.leave(running)
        states = {r.code: (r.state, r.status, r.counts) for r in await busy.my_races()}
        assert waiting not in states
        assert states[running] == ("running", "left", False)
        assert states[third] == ("open", "waiting", True)
        assert await busy.create_race(variant="spider1")


def test_the_random_bot_gives_up_at_its_cap() -> None:
    from spider_engine import Board

    bot = RandomBot(3, max_moves=5)
    board = Board.deal("spider1", "cap")
    moves = [bot(board.view()) for _ in range(8)]
    assert all(m is not None for m in moves[:5]) and moves[5:] == [None] * 3
    assert RandomBot().max_moves == RANDOM_MAX_MOVES
    assert make_bot("random", max_moves=9).max_moves == 9  # type: ignore[attr-defined]


async def test_the_random_bot_resigns_at_its_cap_in_a_race(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with await connect_bot(node.url, name="wanderer") as bot:
        await bot.create_race(variant="spider4", seed="wander", countdown=0)
        await play_race(bot, make_bot("random", seed=3, max_moves=25))
        me = bot.me
        assert me is not None and me.status == "resigned" and me.moves == 25
        await bot.wait_until(lambda c: c.finished, timeout=20)  # it held nobody up
        assert bot.race is not None and bot.race.results is not None
        assert [(r.status, r.bot) for r in bot.race.results] == [("resigned", True)]


async def test_spider_race_bot_says_it_is_a_bot_and_the_random_one_gives_up(
    redis_server, server_node
) -> None:
    import io

    from spider_race.cli import build_parser
    from spider_race.client_commands import run_bot

    args = build_parser().parse_args(["bot", "ABCDE", "--strategy", "random", "--max-moves", "7"])
    assert args.max_moves == 7
    node = await server_node(redis_server.url, **FAST)
    async with await Client.connect(node.url, name="host") as host:
        code = await host.create_race(variant="spider1", countdown=0)
        out = io.StringIO()
        job = asyncio.create_task(run_bot(node.url, code, strategy="random", max_moves=7, out=out))
        await host.wait_until(lambda c: c.race is not None and len(c.race.players) == 2)
        await host.ready()
        assert await job == 0
        assert "resigned" in out.getvalue() and "7 moves" in out.getvalue()

        def others(c: Client) -> list[p.PlayerInfo]:
            assert c.race is not None
            return [i for i in c.race.players if i.player != c.player]

        await host.wait_until(lambda c: others(c)[0].status == "resigned", timeout=10)
        bot = others(host)[0]
        assert bot.bot and bot.moves == 7
