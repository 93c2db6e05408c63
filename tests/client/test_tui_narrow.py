"""The terminal UI in a terminal of 80×24 (and 120×40), driven by textual's pilot against a
real server: each player's progress, and each line of the results, fits the side pane (no
line wraps into a zig-zag); the hint under the waiting race follows the race's state (a
quick match counting down is not told to press r); a ticked box looks different from an
unticked one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from rich.cells import cell_len
from textual.widgets import Button, Checkbox, Static

from spider_client import Client
from spider_client.protocol import PlayerInfo, RaceInfo, RatingChange, Result
from spider_race.tui import LobbyScreen, RaceApp, RaceScreen
from spider_race.tui.progress import render_players, render_results
from tests.client.client_helpers import FAST
from tests.client.tui_helpers import text_of, until

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]
LONG = "Bartholomew Longname"
"""A name of 20 cells: the players' list gives names up to 24."""


def keys_shown(app: RaceApp) -> set[str]:
    return {b.binding.action for b in app.screen.active_bindings.values() if b.binding.show}


@pytest.fixture
async def node(redis_server: Any, server_node: Any) -> Any:
    # a quick match counts down long enough to be looked at (nothing waits for it to end)
    return await server_node(
        redis_server.url,
        **FAST,
        match_wait=3.0,
        match_gather=0.5,
        match_turn=0.05,
        match_countdown=120,
    )


def _race(state: str) -> RaceInfo:
    players = [
        PlayerInfo(player="p1", name="ada", ready=True, status="playing", moves=123, score=1234),
        PlayerInfo(player="p2", name=LONG, status="won", time=201, runs=8, moves=1, bot=True),
        PlayerInfo(player="p3", name="cy", status="abandoned", connected=False, turned_up=44),
        PlayerInfo(player="p4", name="dee" * 10, ghost=True, status="playing"),
    ]
    return RaceInfo(
        code="K7QX2",
        variant="spider4",
        state=state,
        version=5,
        creator="p1",
        max_players=4,
        time_limit=600,
        undo=True,
        live_boards=False,
        countdown=0,
        players=players,
        spectators=2,
    )


@pytest.mark.parametrize("state", ["open", "running"])
def test_every_player_line_fits_its_width(state: str) -> None:
    """At every width from 20 cells up, no line is wider than the pane (none is wrapped by
    the terminal), each player's first line starts with their mark and name, and the lines
    under it are indented, so that the names stay in one column."""
    race = _race(state)
    for width in range(20, 131):
        lines = render_players(race, sets=8, cards=104, me="p1", width=width).plain.splitlines()
        assert all(cell_len(line) <= width for line in lines), (width, lines)
        starts = [i for i, line in enumerate(lines) if line[:2] in ("▶ ", "◌ ") or line[2:3] != " "]
        assert len(starts) == len(race.players) + 1, (width, lines)  # and "2 watching"
        for i, info in zip(starts, race.players, strict=False):
            assert lines[i][2:].startswith(info.name[:8]), (width, lines)
        if width >= 30:  # each status whole
            text = "\n".join(lines)
            words = ("not ready",) if state == "open" else ("playing", "won in 3:21", "abandoned")
            for word in words:
                assert word in text, (width, lines)


def test_every_result_line_fits_its_width() -> None:
    results = [
        Result(rank=1, player="p2", name=LONG, status="won", time=201, runs=8, moves=130, score=9),
        Result(
            rank=2, player="p1", name="ada", status="resigned", time=None, runs=0, moves=1, score=4
        ),
    ]
    changes = [
        RatingChange(
            player="p1",
            name="ada",
            tag="",
            pool="spider1",
            before=1500,
            after=1468,
            provisional=False,
        ),
        RatingChange(
            player="p2",
            name=LONG,
            tag="",
            pool="spider1",
            before=1500,
            after=1532,
            provisional=False,
        ),
    ]
    wide = render_results(results, changes=changes).plain.splitlines()
    assert len(wide) == 3 and "rating 1500 -> 1532 (+32)" in wide[1]
    for width in range(20, 131):
        lines = render_results(results, changes=changes, width=width).plain.splitlines()
        assert all(cell_len(line) <= width for line in lines), (width, lines)
        if width >= len(wide[1]):
            assert lines == wide
        elif width >= 30:
            if width >= 33:  # the status and time beside the name
                assert lines[1] == f" 1. {LONG} won 3:21", (width, lines)
            else:  # under it
                assert lines[1] == f" 1. {LONG}", (width, lines)
                assert lines[2].startswith("    won 3:21  8 runs"), (width, lines)
            assert any("rating 1500 -> 1468 (-32)" in line for line in lines), (width, lines)


@pytest.mark.parametrize("size", SIZES)
async def test_the_players_pane_does_not_wrap(node: Any, size: tuple[int, int]) -> None:
    async with await Client.connect(node.url, name=LONG) as other:
        app = RaceApp(
            url=node.url,
            name="ada",
            create={"variant": "spider1", "countdown": 0, "max_players": 2},
        )
        async with app.run_test(size=size) as pilot:
            await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
            client = app.client
            assert client is not None and client.code is not None
            await other.join(client.code)
            await other.ready()
            await pilot.press("r")
            await until(lambda: client.view is not None)
            await other.move("+")
            await until(lambda: "1 move" in text_of(app, "#players"))
            await pilot.pause()
            players = app.screen.query_one("#players", Static)
            text = text_of(app, "#players")
            lines = text.splitlines()
            # as many rows as lines (and the empty one after the last): none wrapped
            assert players.size.height == len(text.split("\n")), lines
            assert all(cell_len(line) <= players.size.width for line in lines), lines
            assert players.region.right <= size[0]
            assert lines[0].startswith("  " + LONG) or lines[0].startswith("▶ ada")
            assert sum("playing" in line for line in lines) == 2, lines
            # the results, once both have resigned, fit the pane as well
            await other.resign()
            await client.resign()
            await until(lambda: "Results" in text_of(app, "#results"))
            await pilot.pause()
            results = app.screen.query_one("#results", Static)
            text = text_of(app, "#results")
            assert results.size.height == len(text.split("\n")), text
            assert all(cell_len(line) <= results.size.width for line in text.splitlines())
            assert LONG in text  # the results show names whole
            await pilot.press("ctrl+c")


async def test_a_quick_match_counting_down_is_not_told_to_press_r(node: Any) -> None:
    async with await Client.connect(node.url, name="Ann") as ann:
        app = RaceApp(url=node.url, name="Tess")
        async with app.run_test(size=(80, 24)) as pilot:
            app.screen.query_one("#quick-match", Button).press()
            await until(lambda: app.queued)
            code = await asyncio.wait_for(ann.quick_match("spider1"), 30)
            await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
            client = app.client
            assert client is not None and client.code == code
            await until(lambda: client.race is not None and client.race.state == "countdown")
            await until(lambda: code in text_of(app, "#board"))
            await pilot.pause()
            board = text_of(app, "#board")
            assert "Press r" not in board, board
            assert "starts" in board, board
            assert "ready" not in keys_shown(app)  # r does nothing once counting down
            await pilot.press("ctrl+c")


async def test_the_hint_of_an_open_race_follows_ready(node: Any) -> None:
    async with await Client.connect(node.url, name="Ann") as ann:
        app = RaceApp(url=node.url, name="Tess", create={"variant": "spider1", "max_players": 2})
        async with app.run_test(size=(80, 24)) as pilot:
            await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
            client = app.client
            assert client is not None and client.code is not None
            await ann.join(client.code)
            await until(lambda: "Press r when ready" in text_of(app, "#board"))
            assert "Friends join with this code" in text_of(app, "#board")
            assert "ready" in keys_shown(app)
            await pilot.press("r")
            await until(lambda: client.me is not None and client.me.ready)
            await until(lambda: "You are ready" in text_of(app, "#board"))
            assert "Press r when ready" not in text_of(app, "#board")
            await pilot.press("ctrl+c")


@pytest.mark.parametrize("size", SIZES)
async def test_a_ticked_box_looks_ticked(size: tuple[int, int]) -> None:
    app = RaceApp(url="ws://127.0.0.1:9/ws", name="ada")
    async with app.run_test(size=size) as pilot:
        screen = app.screen
        assert isinstance(screen, LobbyScreen)
        undo = screen.query_one("#undo", Checkbox)  # ticked from the start
        live = screen.query_one("#live", Checkbox)  # unticked
        assert undo.value and not live.value

        def box(checkbox: Checkbox) -> str:
            return str(checkbox.render())[:3]

        assert box(undo) != box(live), (box(undo), box(live))
        ticked, unticked = box(undo), box(live)
        live.focus()
        await pilot.press("space")
        await pilot.pause()
        assert live.value and box(live) == ticked
        await pilot.press("space")
        await pilot.pause()
        assert not live.value and box(live) == unticked
        await pilot.press("ctrl+c")
