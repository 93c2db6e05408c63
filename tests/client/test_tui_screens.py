"""The terminal UI as a player and a spectator see it, in a 120×40 terminal, driven by
textual's pilot against a real server: nothing moves when a column is picked, ctrl+c quits,
the lobby's labels, focus and Tab order, and the spectator's boards side by side, their
names whole, their keys, and scrolling without Tab."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from textual.containers import ScrollableContainer
from textual.widgets import Button, Checkbox, Input, Label, Select, Static

from spider_client import Client, GreedyBot, play_race
from spider_race.tui import LobbyScreen, RaceApp, RaceScreen
from tests.client.client_helpers import FAST

SIZE = (120, 40)
PLAYER_KEYS = {"deal", "undo", "ready", "type_move"}


async def until(condition: Callable[[], bool], *, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.005)


def text_of(app: RaceApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


def keys_shown(app: RaceApp) -> set[str]:
    """The actions whose keys the footer shows."""
    return {b.binding.action for b in app.screen.active_bindings.values() if b.binding.show}


@pytest.fixture
async def node(redis_server: Any, server_node: Any) -> Any:
    return await server_node(redis_server.url, **FAST)


@pytest.mark.parametrize(
    ("variant", "seed", "keys", "pending"),
    [("spider4", "1", ["a", "1", "2"], "a12"), ("sparrow", "s6", ["x", "a", "e", "h"], "xaeh")],
)
async def test_picking_a_column_moves_nothing_on_the_screen(
    node: Any, variant: str, seed: str, keys: list[str], pending: str
) -> None:
    app = RaceApp(
        url=node.url,
        name="ada",
        create={"variant": variant, "seed": seed, "countdown": 0, "time_limit": 600},
    )
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
        client = app.client
        assert client is not None
        await pilot.pause()
        players = app.screen.query_one("#players")
        waiting = players.region
        assert "ready" in keys_shown(app)
        await pilot.press("r")
        await until(lambda: client.view is not None)
        await pilot.pause()
        before = players.region
        assert before.x == waiting.x and before.width == waiting.width  # the start moves nothing
        assert "ready" not in keys_shown(app) and "deal" in keys_shown(app)
        for i, key in enumerate(keys, 1):
            await pilot.press(key)
            await pilot.pause()
            assert f"move: {pending[:i]}" in text_of(app, "#board")
            assert players.region == before, key
        await pilot.press("escape")
        await pilot.pause()
        assert "move:" not in text_of(app, "#board")
        assert players.region == before
        if variant == "spider4":  # a refusal names cards as the board shows them
            await pilot.press("e", "f")
            await pilot.pause()
            assert text_of(app, "#message") == "e1f: 2♣ does not go onto 10♠ in column f"
            assert players.region == before
        await pilot.press("q")


async def test_ctrl_c_quits_from_the_lobby() -> None:
    app = RaceApp(url="ws://127.0.0.1:9/ws", name="ada")
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, LobbyScreen)
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0 and app.return_value == 0


async def test_ctrl_c_quits_from_the_move_line(node: Any) -> None:
    app = RaceApp(url=node.url, name="ada", create={"variant": "spider1", "countdown": 0})
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
        await pilot.press("colon", "d")
        assert isinstance(app.focused, Input)
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_value == 0
    assert app.client is not None and not app.client.connected


async def test_the_lobby_labels_its_fields_and_starts_on_the_variant(node: Any) -> None:
    app = RaceApp(url=node.url, name="ada")
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        assert isinstance(screen, LobbyScreen)
        # each text field and the variant choice has its label on its row
        for selector, label in [
            ("#name", "Your name"),
            ("#variant", "Variant"),
            ("#seed", "Seed"),
            ("#minutes", "Time limit"),
            ("#code", "Join code"),
        ]:
            row = screen.query_one(selector).parent
            assert row is not None
            assert label in [str(w.render()) for w in row.query(Label)], selector
        assert "minutes" in [
            str(w.render()) for w in screen.query_one("#minutes").parent.query(Label)
        ]
        # the whole lobby is on the screen
        assert screen.query_one("#lobby").region.bottom <= SIZE[1]
        # focus on the variant choice, spider1 chosen; no text field selected
        variant = screen.query_one("#variant", Select)
        assert variant.has_focus and variant.value == "spider1"
        # Tab goes down the form; a stray Tab and key type nothing into the seed
        order = []
        for _ in range(9):
            await pilot.press("tab")
            order.append(app.focused.id if app.focused else None)
        assert order == [
            "option-keep",
            "option-open",
            "option-relaxed",
            "seed",
            "minutes",
            "undo",
            "live",
            "create",
            "code",
        ]
        variant.focus()
        await pilot.press("tab", "z")
        assert screen.query_one("#seed", Input).value == ""
        # another variant shows its own options; the ticks make the variant id
        variant.value = "wizard"
        await pilot.pause()
        shown = [b.id for b in screen.query(Checkbox) if b.display and b.id.startswith("option-")]
        assert shown == ["option-blind", "option-weave"]
        screen.query_one("#option-weave", Checkbox).value = True
        assert screen.variant() == "wizard+weave"
        variant.value = "spider1"
        await pilot.pause()
        assert screen.variant() == "spider1"
        screen.query_one("#option-relaxed", Checkbox).value = True
        screen.query_one("#option-open", Checkbox).value = True
        screen.query_one("#minutes", Input).value = "2"
        screen.query_one("#create", Button).press()
        await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
        race = app.client.race
        assert race is not None
        assert race.variant == "spider1+open+relaxed" and race.time_limit == 120
        await pilot.press("q")


async def test_the_lobby_creates_spider1_by_default(node: Any) -> None:
    app = RaceApp(url=node.url, name="ada")
    async with app.run_test(size=SIZE) as pilot:
        app.screen.query_one("#create", Button).press()
        await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
        assert app.client.race is not None and app.client.race.variant == "spider1"
        await pilot.press("q")


async def _race_of_three(url: str) -> tuple[list[Client], str]:
    names = ["Ada greedy", "Brian greedy", "Charles greedy"]
    clients = [await Client.connect(url, name=n) for n in names]
    code = await clients[0].create_race(
        variant="spider1", seed="watch", countdown=0, live_boards=True, max_players=3
    )
    for c in clients[1:]:
        await c.join(code)
    return clients, code


async def test_watch_lays_boards_side_by_side_with_names_whole(node: Any) -> None:
    clients, code = await _race_of_three(node.url)
    app = RaceApp(url=node.url, code=code, role="spectator")
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
        await pilot.pause()
        assert not (PLAYER_KEYS & keys_shown(app))  # a spectator is shown no player keys
        assert {"help", "quit"} <= keys_shown(app)
        bots = [asyncio.create_task(play_race(c, GreedyBot(), max_actions=6)) for c in clients]
        await until(lambda: len(app.client.boards) == 3)
        await asyncio.gather(*bots)
        await pilot.pause(0.2)
        players = text_of(app, "#players")
        for c in clients:
            assert c.me is not None and c.me.name in players  # "Charles greedy" whole
        lines = text_of(app, "#boards").splitlines()
        assert all(c.me.name in lines[0] for c in clients if c.me)  # one row of three
        side = app.screen.query_one("#side", ScrollableContainer)
        assert side.max_scroll_x == 0
        assert app.screen.query_one("#boards").region.right <= SIZE[0]
        assert not (PLAYER_KEYS & keys_shown(app))
        await pilot.press("q")
    for c in clients:
        await c.close()


async def test_watch_scrolls_by_keys_without_tab(node: Any) -> None:
    clients, code = await _race_of_three(node.url)
    app = RaceApp(url=node.url, code=code, role="spectator")
    async with app.run_test(size=(120, 14)) as pilot:
        await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
        bots = [asyncio.create_task(play_race(c, GreedyBot(), max_actions=4)) for c in clients]
        await until(lambda: len(app.client.boards) == 3)
        await asyncio.gather(*bots)
        await pilot.pause(0.2)
        side = app.screen.query_one("#side", ScrollableContainer)
        assert side.max_scroll_y > 0  # the boards do not fit
        assert app.focused is side
        await pilot.press("pagedown")
        await pilot.pause()
        assert side.scroll_y > 0
        await pilot.press("q")
    for c in clients:
        await c.close()


async def test_watching_a_missing_race_says_so_once(node: Any) -> None:
    app = RaceApp(url=node.url, code="ZZZZZ", role="spectator")
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: bool(app.exit_message))
        await pilot.pause()
    assert app.return_value == 1
    assert app.exit_message == "spider-race: could not join: no race ZZZZZ"
