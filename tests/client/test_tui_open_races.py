"""The terminal lobby's open races, public toggle and Quick match, driven by textual's pilot
against a real server: a public race made elsewhere appears, its seats change as players
join, it vanishes when it starts, and Enter on it joins it; a race made public in the
terminal is listed for others; Quick match lands in the race the server made, and Cancel
leaves its queue; a name changed in the lobby keeps the player."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from textual.widgets import Button, Checkbox, Input, Select, Static

from spider_client import Client
from spider_client.protocol import OpenRace
from spider_race.tui import LobbyScreen, RaceApp, RaceScreen
from spider_race.tui.openraces import EMPTY, OpenRaceList, open_race_line
from tests.client.client_helpers import FAST

SIZE = (150, 60)
MATCH = {"match_wait": 3.0, "match_gather": 0.5, "match_turn": 0.05, "match_countdown": 1}


async def until(condition: Callable[[], bool], *, timeout: float = 30.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def listed(app: RaceApp) -> OpenRaceList:
    return app.screen.query_one("#open-race-list", OpenRaceList)


def line_of(app: RaceApp, code: str) -> str:
    races = listed(app)
    return str(races.get_option(code).prompt)


def empty_line(app: RaceApp) -> Static:
    return app.screen.query_one("#open-races-empty", Static)


@pytest.fixture
async def node(redis_server: Any, server_node: Any) -> Any:
    return await server_node(redis_server.url, **FAST, **MATCH)


async def test_a_public_race_appears_changes_vanishes_and_joins(node: Any) -> None:
    async with (
        await Client.connect(node.url, name="Ann") as ann,
        await Client.connect(node.url, name="Ann") as other_ann,
        await Client.connect(node.url, name="Bob") as bob,
        await Client.connect(node.url, name="Cy") as cy,
    ):
        app = RaceApp(url=node.url, name="Tess")
        async with app.run_test(size=SIZE) as pilot:
            assert isinstance(app.screen, LobbyScreen)
            private = await ann.create_race(variant="spider1", max_players=2)
            first = await ann.create_race(
                variant="spider2", max_players=3, time_limit=600, undo=False, public=True
            )
            await until(lambda: first in listed(app).codes())
            line = line_of(app, first)
            assert "spider2" in line and "1/3 seats, 2 free" in line
            assert "10 min, no undo" in line and "by Ann" in line
            assert not empty_line(app).display
            # another creator of the same name: each gets the id's last characters
            second = await other_ann.create_race(variant="spider1", max_players=2, public=True)
            await until(lambda: second in listed(app).codes())
            assert listed(app).codes() == [first, second]  # the longest waiting first
            assert f"Ann #{ann.player[-4:]}" in line_of(app, first)
            assert f"Ann #{other_ann.player[-4:]}" in line_of(app, second)
            assert private not in listed(app).codes()
            # a player joins: the seats change in place
            await bob.join(first)
            await until(lambda: "2/3 seats, 1 free" in line_of(app, first))
            # the second race starts: it leaves the list
            await cy.join(second)
            await other_ann.ready()
            await cy.ready()
            await until(lambda: second not in listed(app).codes())
            assert listed(app).codes() == [first]
            # Enter on the race joins it, as its code does
            listed(app).focus()
            listed(app).highlighted = 0
            await pilot.press("enter")
            await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
            assert app.client is not None and app.client.code == first
            race = app.client.race
            assert race is not None and app.client.player in {p.player for p in race.players}
            assert "Tess" in {p.name for p in race.players}
            await pilot.press("q")


async def test_the_list_empties_when_its_last_race_starts(node: Any) -> None:
    async with (
        await Client.connect(node.url, name="Ann") as ann,
        await Client.connect(node.url, name="Bob") as bob,
    ):
        app = RaceApp(url=node.url, name="Tess")
        async with app.run_test(size=SIZE):
            code = await ann.create_race(variant="spider1", max_players=2, public=True)
            await until(lambda: code in listed(app).codes())
            assert listed(app).display and not empty_line(app).display
            await bob.join(code)
            await ann.ready()
            await bob.ready()
            await until(lambda: not listed(app).codes())
            await until(lambda: bool(empty_line(app).display))
            assert str(empty_line(app).render()) == EMPTY
            assert not listed(app).display
            await app.quit_app()


async def test_a_race_ticked_public_is_listed_for_others(node: Any) -> None:
    async with await Client.connect(node.url, name="Ann") as ann:
        app = RaceApp(url=node.url, name="Tess")
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            screen.query_one("#public", Checkbox).value = True
            screen.query_one("#create", Button).press()
            await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
            assert app.client is not None and app.client.race is not None
            code = app.client.code
            assert app.client.race.public
            races = await ann.open_races()
            assert [(r.code, r.creator, r.creator_name) for r in races] == [
                (code, app.client.player, "Tess")
            ]
            await pilot.press("q")


async def test_a_race_not_ticked_public_is_not_listed(node: Any) -> None:
    async with await Client.connect(node.url, name="Ann") as ann:
        app = RaceApp(url=node.url, name="Tess")
        async with app.run_test(size=SIZE) as pilot:
            app.screen.query_one("#create", Button).press()
            await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
            assert app.client is not None and app.client.race is not None
            assert not app.client.race.public
            assert await ann.open_races() == []
            await pilot.press("q")


async def test_quick_match_from_the_terminal(node: Any) -> None:
    async with await Client.connect(node.url, name="Ann") as ann:
        app = RaceApp(url=node.url, name="Tess")
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            screen.query_one("#quick-variant", Select).value = "spider2"
            screen.query_one("#quick-match", Button).press()
            await until(
                lambda: (
                    "Looking for players (spider2)"
                    in str(screen.query_one("#quick-match-state", Static).render())
                )
            )
            assert screen.query_one("#cancel-match", Button).display
            code = await asyncio.wait_for(ann.quick_match("spider2"), 30)
            await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
            assert app.client is not None and app.client.code == code
            race = app.client.race
            assert race is not None and race.variant == "spider2" and race.quick
            assert {p.player for p in race.players} == {ann.player, app.client.player}
            await pilot.press("q")


async def test_cancel_leaves_the_quick_match_queue(node: Any) -> None:
    async with await Client.connect(node.url, name="Ann") as ann:
        app = RaceApp(url=node.url, name="Tess")
        async with app.run_test(size=SIZE) as pilot:
            screen = app.screen
            screen.query_one("#quick-match", Button).press()
            await until(lambda: app.queued)
            cancel = screen.query_one("#cancel-match", Button)
            await until(lambda: cancel.region.width > 0)  # shown, and laid out
            await pilot.click("#cancel-match")
            await until(lambda: not app.queued)
            assert not screen.query_one("#cancel-match", Button).display
            assert not screen.query_one("#quick-match", Button).disabled
            # nobody is queued: Ann, alone in the queue, is matched with no one
            with pytest.raises(TimeoutError):
                await ann.quick_match("spider1", timeout=MATCH["match_wait"] + 1)
            assert isinstance(app.screen, LobbyScreen)
            await app.quit_app()


async def test_a_name_changed_in_the_lobby_joins_as_the_same_player(node: Any) -> None:
    async with await Client.connect(node.url, name="Ann") as ann:
        app = RaceApp(url=node.url, name="Tess")
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: app.client is not None and app.client.player is not None)
            assert app.client is not None
            player = app.client.player
            code = await ann.create_race(variant="spider1", public=True)
            await until(lambda: code in listed(app).codes())
            app.screen.query_one("#name", Input).value = "Tessa"
            listed(app).focus()
            listed(app).highlighted = 0
            await pilot.press("enter")
            await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
            assert app.client.player == player and app.client.code == code
            assert app.client.race is not None
            assert {(p.player, p.name) for p in app.client.race.players} == {
                (ann.player, "Ann"),
                (player, "Tessa"),
            }
            await pilot.press("q")


def _listing(code: str, creator: str, name: str, **changes: Any) -> OpenRace:
    race = OpenRace(
        code=code,
        variant="spider1+open",
        state="open",
        players=1,
        max_players=4,
        time_limit=1800,
        undo=True,
        countdown=3,
        winnable=False,
        hints=False,
        creator=creator,
        creator_name=name,
        created_at=1.0,
        version=1,
    )
    return replace(race, **changes)


def test_a_listed_race_reads_as_one_entry() -> None:
    rated = _listing(
        "K7M2Q",
        "p3f9a2c41d0b7",
        "alice",
        creator_rating=1519.6,
        creator_provisional=False,
        hints=True,
    )
    assert open_race_line(rated) == (
        "K7M2Q  spider1+open  1/4 seats, 3 free\n       30 min, hints · by alice (1520)"
    )
    new = replace(rated, creator_rating=1500.0, creator_provisional=True)
    assert open_race_line(new).endswith("by alice (1500?)")
    unrated = _listing("Q4XJ9", "p81d0c2aa9e11", "alice", winnable=True, players=4)
    line = open_race_line(unrated, [rated, unrated])
    assert line.endswith("30 min, winnable deal · by alice #9e11")
    assert "4/4 seats, 0 free" in line
    assert open_race_line(unrated, [rated, unrated], me="p81d0c2aa9e11").endswith("by you")
    kinds = replace(unrated, rated=True, live_boards=True, humans_only=True)
    assert "winnable deal, rated, live boards, humans only · by" in open_race_line(kinds)
