"""The terminal UI, driven by textual's pilot against a real server."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from textual import events
from textual.widgets import Input, Select, Static

from spider_client import Client
from spider_engine import Board, Move
from spider_race.tui import RaceApp, RaceScreen
from tests.client.client_helpers import FAST
from tests.client.winning_line import winning_line

SEED = "tui-acceptance"


async def until(pilot: Any, condition: Callable[[], bool], *, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.002)


KEY_NAMES = {"+": "plus", ":": "colon", "enter": "enter", "escape": "escape"}


def type_keys(app: RaceApp, keys: list[str]) -> None:
    """Post key events to the app as its terminal driver does, in order, without the
    pilot's wait for idle after each (the caller waits for what the keys should do)."""
    for key in keys:
        name = KEY_NAMES.get(key, key)
        char = {"enter": "\r", "escape": "\x1b"}.get(key, key if len(key) == 1 else None)
        app.post_message(events.Key(name, char))


def text_of(app: RaceApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


SHORT = 30
"""Moves of the winning line played in ``make test``; ``make acceptance`` plays all of them
to the win."""


@pytest.mark.parametrize(
    "moves", [pytest.param(SHORT, id="short"), pytest.param(None, id="won", marks=pytest.mark.slow)]
)
async def test_a_spider1_race_by_keystrokes_alone(redis_server, server_node, moves) -> None:
    """Keys alone: the lobby, ready, a typed move and its undo, then the winning line (typed
    one move in ten, picked with column keys otherwise), each view checked; the whole line
    wins, the short run resigns after its moves."""
    node = await server_node(redis_server.url, **FAST)
    line = winning_line(Board.deal("spider1", SEED))
    assert line is not None and len(line) > SHORT
    line = line[:moves]
    full = Board.deal("spider1", SEED)

    app = RaceApp(url=node.url, name="ada")
    async with app.run_test(size=(150, 60)) as pilot:
        # the lobby: variant spider1 (chosen from the start), our seed, enter
        variant = app.screen.query_one("#variant", Select)
        assert variant.has_focus and variant.value == "spider1"
        app.screen.query_one("#seed", Input).focus()
        await pilot.press(*SEED, "enter")
        await until(pilot, lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
        client = app.client
        assert client is not None and client.race is not None
        assert client.race.variant == "spider1"
        code = client.race.code
        # the race screen draws its top line once mounted: waited for, not read at once
        await until(pilot, lambda: code in text_of(app, "#top"))

        watcher = await Client.connect(node.url, name="watcher")
        await watcher.join(code, "spectator")

        await pilot.press("r")  # ready: the countdown, then the deal
        await until(pilot, lambda: client.view is not None)
        assert client.view.text() == full.view_text()

        async def play(keys: list[str], seq: int, *, pilot_keys: bool = False) -> None:
            if pilot_keys:
                await pilot.press(*keys)
            else:
                type_keys(app, keys)
            await until(pilot, lambda: client.seq == seq)

        def column_keys(move: Move, board: Board) -> list[str]:
            src, dst = chr(97 + move.src), chr(97 + move.dst)
            if board.cols[move.dst]:
                return [src, dst]  # the run that fits is found by the screen
            return [src, *str(move.count), dst]  # into an empty column: say how many

        seq = 0
        first = line[0]
        # type the first move, take it back with one undo, then type it again
        seq += 1
        await play([":", *first, "enter"], seq, pilot_keys=True)
        await pilot.press("escape")
        seq += 1
        await play(["u"], seq, pilot_keys=True)
        assert client.view.text() == full.view_text()
        for i, text in enumerate(line):
            move = Move.from_text(text)
            typed = i % 10 == 0
            if text == "+":
                keys = ["+"]
            elif typed:
                keys = [":", *text, "enter", "escape"]  # a typed move
            else:
                keys = column_keys(move, full)  # picked with column keys
            seq += 1
            await play(keys, seq, pilot_keys=typed)
            full.push(move)
            assert client.view.text() == full.view_text(), text
        status = "won" if moves is None else "resigned"
        if moves is None:
            assert full.is_won()
        else:
            assert not full.is_won()
            await play([":", *"resign", "enter"], seq + 1, pilot_keys=True)

        await until(pilot, lambda: client.status == status)
        await until(pilot, lambda: client.finished)
        await watcher.wait_until(lambda c: c.finished, timeout=30)
        # the server's results confirm the end
        results = watcher.race.results
        assert results is not None and len(results) == 1
        assert results[0].player == client.player
        assert results[0].status == status
        assert (results[0].runs == 8) == (moves is None)
        await pilot.pause(0.1)
        assert "Results" in text_of(app, "#results")
        assert status in text_of(app, "#results")
        await watcher.close()
        await pilot.press("q")


async def test_watch_shows_progress_live_boards_and_results(redis_server, server_node) -> None:
    from spider_client import GreedyBot, RandomBot, play_race

    node = await server_node(redis_server.url, **FAST)
    a = await Client.connect(node.url, name="greta")
    b = await Client.connect(node.url, name="randall")
    code = await a.create_race(variant="spider2", seed="w", countdown=0, live_boards=True)
    await b.join(code)

    app = RaceApp(url=node.url, code=code, role="spectator")
    async with app.run_test(size=(150, 80)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, RaceScreen))
        await pilot.pause()
        assert not app.screen.query_one("#board-pane").display  # no board of its own
        players = text_of(app, "#players")
        assert "greta" in players and "randall" in players and "not ready" in players
        bots = [
            asyncio.create_task(play_race(a, GreedyBot(), max_actions=40)),
            asyncio.create_task(play_race(b, RandomBot(3), max_actions=40)),
        ]
        await until(pilot, lambda: len(app.client.boards) == 2)
        await pilot.pause()
        boards = text_of(app, "#boards")
        assert boards.count("▒×") >= 10  # face-down cards as counted backs
        assert "greta" in boards and "randall" in boards
        await asyncio.gather(*bots)
        await until(pilot, lambda: app.client.finished)
        await pilot.pause()
        assert "Results" in text_of(app, "#results")
        assert "runs" in text_of(app, "#players")
        await pilot.press("q")
    await a.close()
    await b.close()
