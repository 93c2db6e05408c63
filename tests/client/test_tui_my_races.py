"""The terminal's lobby lists the player's races with their states and leaves one by code;
its players' lists and results mark a bot as a bot."""

from __future__ import annotations

import asyncio
from typing import Any

from textual.widgets import Input, OptionList, Static

from spider_client import Client, connect_bot
from spider_client.protocol import PlayerInfo, RaceInfo, Result
from spider_race.tui import RaceApp
from spider_race.tui.progress import BOT_MARK, render_players, render_results
from tests.client.client_helpers import FAST


def text_of(app: RaceApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def until(condition: Any, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_the_lobby_lists_your_races_and_leaves_one(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with await Client.connect(node.url, name="Tess") as tess:
        waiting = await tess.create_race(variant="spider1")
        running = await tess.create_race(variant="spider2", countdown=0, max_players=2)
        async with await Client.connect(node.url, name="Other") as other:
            await other.join(running)
            await other.ready()
            await tess.ready()
            await tess.wait_until(lambda c: c.view is not None)
            app = RaceApp(url=node.url, name="Tess", client_options={"token": tess.token})
            async with app.run_test(size=(100, 60)) as pilot:
                # the unfinished races show at the top once connected (the form moves down)
                unfinished = app.screen.query_one("#unfinished-list", OptionList)
                await until(lambda: unfinished.option_count == 2)
                assert [unfinished.get_option_at_index(i).id for i in range(2)] == [
                    running,
                    waiting,
                ]
                await pilot.pause()
                await pilot.click("#my-races")
                await until(lambda: waiting in text_of(app, "#my-races-list"))
                lines = text_of(app, "#my-races-list").splitlines()
                assert lines[0].startswith(running) and "running" in lines[0]
                assert lines[1].startswith(waiting) and "waiting for players" in lines[1]
                assert "1 player" in lines[1] and "2 players" in lines[0]
                app.screen.query_one("#code", Input).value = waiting.lower()
                await pilot.click("#leave")
                await until(lambda: waiting not in text_of(app, "#my-races-list"))
                assert f"you left {waiting}" in text_of(app, "#lobby-message")
                assert running in text_of(app, "#my-races-list")
                await until(lambda: unfinished.option_count == 1)  # the race left is gone
                assert app.client is not None and app.client.player == tess.player
                await app.quit_app()


async def test_a_bot_in_the_terminal_is_marked(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with await connect_bot(node.url, name="Robo") as robo:
        await robo.create_race(variant="spider1")
        assert robo.race is not None
        race: RaceInfo = robo.race
    race.players.append(PlayerInfo(player="p2", name="Ann"))
    lines = render_players(race, sets=8, cards=104).plain.splitlines()
    assert BOT_MARK.strip() in lines[0] and "Robo" in lines[0]
    assert BOT_MARK.strip() not in lines[1]
    results = [
        Result(
            rank=1,
            player="p1",
            name="Robo",
            status="won",
            time=9,
            runs=8,
            moves=1,
            score=1,
            bot=True,
        ),
        Result(
            rank=2, player="p2", name="Ann", status="stuck", time=None, runs=0, moves=3, score=5
        ),
    ]
    shown = render_results(results).plain.splitlines()
    assert "Robo [bot]" in shown[1] and "[bot]" not in shown[2]
