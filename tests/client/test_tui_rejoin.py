"""Coming back to a race in the terminal, driven by textual's pilot against a real server:
``q`` in a running race asks before it quits (and the game goes on), ``play`` keeps the
player's token in a credentials file (a temporary one here, never the real home) so that
``play CODE`` and the lobby's unfinished races rejoin as the same player, and a token the
server refuses is dropped for a new player, with a message."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, OptionList

from spider_race.tui import LobbyScreen, RaceApp, RaceScreen
from tests.client.client_helpers import FAST
from tests.client.tui_helpers import text_of, until

SIZES = [pytest.param((80, 24), id="80x24"), pytest.param((120, 40), id="120x40")]


def asking(app: RaceApp) -> bool:
    """Whether the question before quitting is on the screen."""
    return bool(app.screen.query("#quit-dialog"))


def play_app(store: Path, url: str, *args: str) -> RaceApp:
    """The app ``spider-race play ARGS --url URL --credentials STORE`` runs."""
    from spider_race import cli

    return cli.play_app(
        cli.build_parser().parse_args(["play", *args, "--url", url, "--credentials", str(store)])
    )


@pytest.fixture
async def node(redis_server: Any, server_node: Any) -> Any:
    return await server_node(redis_server.url, **FAST)


async def _running(app: RaceApp, pilot: Any) -> None:
    """Wait for the race screen, press ready, and wait for the deal."""
    await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
    client = app.client
    assert client is not None
    await pilot.press("r")
    await until(lambda: client.view is not None)


@pytest.mark.parametrize("size", SIZES)
async def test_q_in_a_running_race_asks_first(node: Any, size: tuple[int, int]) -> None:
    app = RaceApp(url=node.url, name="ada", create={"variant": "spider1", "countdown": 0})
    async with app.run_test(size=size) as pilot:
        await _running(app, pilot)
        client = app.client
        assert client is not None and client.code is not None
        code = client.code
        await pilot.press("q")
        await until(lambda: asking(app) or not client.connected)
        assert client.connected, "q quit the running race at once"
        dialog = app.screen.query_one("#quit-dialog")
        assert dialog.region.right <= size[0] and dialog.region.bottom <= size[1]
        question = text_of(app, "#quit-text")
        assert f"race {code} goes on without you" in question
        assert "60 s" in question  # the race's away grace, before out as abandoned
        assert app.focused is not None and app.focused.id == "quit-stay"
        # stay: back on the board, the game going on
        await pilot.press("escape")
        await until(lambda: isinstance(app.screen, RaceScreen))
        assert client.connected and client.status == "playing"
        await pilot.press("q")
        await until(lambda: asking(app))
        app.screen.query_one("#quit-stay", Button).press()
        await until(lambda: isinstance(app.screen, RaceScreen))
        assert client.connected
        # quit, leaving the game running
        await pilot.press("q")
        await until(lambda: asking(app))
        app.screen.query_one("#quit-leave", Button).press()
        await until(lambda: not client.connected)
    assert app.return_value == 0
    assert f"race {code} goes on without you" in app.exit_message


async def test_play_comes_back_as_the_same_player(node: Any, tmp_path: Path) -> None:
    store = tmp_path / "config" / "spider-race" / "credentials.json"
    # play: the lobby, a race created and started, q and quit
    app = play_app(store, node.url, "--name", "ada")
    async with app.run_test(size=(80, 24)) as pilot:
        assert isinstance(app.screen, LobbyScreen)
        app.screen.query_one("#create", Button).press()
        await _running(app, pilot)
        client = app.client
        assert client is not None and client.code is not None
        code, player = client.code, client.player
        await pilot.press("q")
        await until(lambda: asking(app))
        come_back = f"spider-race play {code} --url {node.url} --credentials {store}"
        assert come_back in text_of(app, "#quit-text")
        await pilot.press("y")
        await until(lambda: not client.connected)
    assert come_back in app.exit_message
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600
    saved = json.loads(store.read_text())["servers"][node.url]
    assert saved["player"] == player and saved["token"] and saved["name"] == "ada"

    # play CODE: the same player again, not a spectator (the name is the stored one)
    again = play_app(store, node.url, code.lower())
    async with again.run_test(size=(80, 24)) as pilot:
        await until(lambda: isinstance(again.screen, RaceScreen) or bool(again.exit_message))
        assert not again.exit_message, again.exit_message
        client = again.client
        assert client is not None and client.player == player and client.role == "player"
        assert client.name == "ada"
        await until(lambda: client.view is not None)
        await pilot.press("q")
        await until(lambda: asking(again))
        await pilot.press("y")
        await until(lambda: not client.connected)

    # play: the lobby lists the unfinished race; enter on it rejoins
    lobby = play_app(store, node.url)
    async with lobby.run_test(size=(80, 24)) as pilot:
        unfinished = lobby.screen.query_one("#unfinished-list", OptionList)
        await until(lambda: unfinished.option_count > 0)
        assert unfinished.get_option_at_index(0).id == code
        assert code in str(unfinished.get_option_at_index(0).prompt)
        # a key away from coming back (the list shows before the focus, which the app
        # moves on its next turn)
        await until(lambda: lobby.focused is unfinished)
        await pilot.press("enter")
        await until(lambda: isinstance(lobby.screen, RaceScreen))
        client = lobby.client
        assert client is not None and client.player == player and client.role == "player"
        await until(lambda: client.view is not None)
        # a game that is over quits at once
        await pilot.press("colon", *"resign", "enter")
        await until(lambda: client.status == "resigned")
        await pilot.press("escape", "q")  # from the move line to the board, then q
        await until(lambda: not client.connected)
        assert not asking(lobby)


async def test_a_refused_token_makes_a_new_player(node: Any, tmp_path: Path) -> None:
    store = tmp_path / "credentials.json"
    store.write_text(json.dumps({"servers": {node.url: {"token": "forged", "name": "ada"}}}))
    app = play_app(store, node.url)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(lambda: app.client is not None and app.client.player is not None)
        await until(lambda: "new player" in text_of(app, "#lobby-message"))
        assert "refused" in text_of(app, "#lobby-message")
        client = app.client
        assert client is not None and client.name == "ada"
        await pilot.press("ctrl+c")
    saved = json.loads(store.read_text())["servers"][node.url]
    assert saved["token"] not in ("forged", None) and saved["player"] == client.player
    assert stat.S_IMODE(os.stat(store).st_mode) == 0o600


def test_the_credentials_file_is_per_user_and_can_be_moved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spider_race.credentials import ENV, Credentials, default_path

    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert default_path() == tmp_path / "xdg" / "spider-race" / "credentials.json"
    monkeypatch.delenv("XDG_CONFIG_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".config" / "spider-race" / "credentials.json"
    monkeypatch.setenv(ENV, str(tmp_path / "elsewhere.json"))
    assert default_path() == tmp_path / "elsewhere.json"

    store = Credentials(tmp_path / "a" / "b.json")
    assert store.get("ws://one/ws") is None
    store.put("ws://one/ws", token="t1", player="p1", name="ada")
    store.put("ws://two/ws", token="t2", player="p2", name="bob")
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    again = Credentials(store.path)
    one = again.get("ws://one/ws")
    assert one is not None and (one.token, one.player, one.name) == ("t1", "p1", "ada")
    again.drop("ws://one/ws")
    assert Credentials(store.path).get("ws://one/ws") is None
    assert Credentials(store.path).get("ws://two/ws") is not None
    store.path.write_text("not json")
    assert Credentials(store.path).get("ws://two/ws") is None  # unreadable: nothing stored
