"""Quick match in Chromium against a real node: the page joins the race a match made at
once (which confirms its seat); when the other player never joins, the match is called off
once the node's clock passes the confirmation window, and the page says so, queues again
first in line, and lands in the race made with the next player."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgpack
import pytest

from spider_client import Client
from spider_client import protocol as p
from tests.lobby.match_helpers import RawPlayer
from tests.server.clocks import TestClock
from tests.web.web_helpers import open_page

MATCH = {"match_gather": 0.3, "match_turn": 0.05, "match_countdown": 5, "match_max_players": 2}


async def _race(page) -> tuple[str, str]:
    await page.wait_for_function("() => window.spiderRace.app.race?.code")
    found: list[str] = await page.evaluate(
        "() => [window.spiderRace.app.race.code, window.spiderRace.app.race.state]"
    )
    return found[0], found[1]


async def _what_was_seen(player, handle) -> str:
    """The page's quick-match state, the types of the frames it got (the last 30, with
    errors' codes), and the node's count of matches called off."""
    seen = []
    for frame in player.frames[-30:]:
        try:
            msg = msgpack.unpackb(frame, raw=False)
        except Exception:
            seen.append("?")
            continue
        items = msg if isinstance(msg, list) else [msg]
        seen += [
            f"{m.get('type')}"
            + (f" {m.get('error')}: {m.get('message')}" if m.get("type") == "error" else "")
            for m in items
            if isinstance(m, dict)
        ]
    state = await player.page.inner_text("#quick-match-state")
    called_off = handle.node.lobby.matches.called_off
    return (
        f"quick-match state {state!r}; frames {seen}; called off here {called_off}; "
        f"page errors {player.errors}"
    )


MOVED = """() => {
  const s = window.spiderRace.session;
  return s.welcomed && !s.moving && s.leaving === null && s.url.includes("race=");
}"""
"""The page moved to its race's URL (race affinity) and joined the race there: the
connection it left is closed."""


@contextlib.asynccontextmanager
async def _matched(page: Any, handle: Any) -> AsyncIterator[p.Matched]:
    """Ann's page asks for a quick match and is matched with a player who never joins
    (from another address, queued first): the match, while that player stays connected."""
    await page.fill("#name", "Ann")
    await page.select_option("#quick-variant", "spider1")
    no_show = await RawPlayer.connect(handle.url, "ghost", source="127.0.0.2")
    try:
        reply = await no_show.request(lambda req: p.QuickMatch(req=req, variant="spider1"))
        assert isinstance(reply, p.Queued), reply
        await page.click("#quick-match")
        yield await no_show.wait_for(lambda m: isinstance(m, p.Matched))
    finally:
        await no_show.close()


async def _next_match(page: Any, handle: Any, called_off: str) -> None:
    """Bob asks for a quick match: the page, queued again first in line, is matched with
    him and lands in the new race (not the one called off)."""
    async with await Client.connect(handle.url, name="Bob") as bob:
        code = await asyncio.wait_for(bob.quick_match("spider1"), 20)
        assert code != called_off
        await page.wait_for_function(
            "(code) => window.spiderRace.app.race?.code === code", arg=code
        )


async def _until(check: Callable[[], Any]) -> None:
    """Until ``check()`` holds (a route's handler runs in this process, a turn after the
    page's frame): a look every 0.05 s, 30 s at most."""
    for _ in range(600):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("a route's handler never ran")


@pytest.mark.parametrize("when", ["joined", "moving", "rejoining"])
async def test_a_match_called_off_is_queued_for_again(
    browser, redis_server, server_node, when
) -> None:
    """``joined``: the call-off reaches the page on the connection to its race's URL.
    ``moving``: it comes while the page moves there (the new connection held by the test,
    unanswered), so only the connection the page is leaving hears it: the race is deleted,
    so the join on the new one could not tell. ``rejoining``: the new connection is
    welcomed, and its join held by the test until the call-off came on the old one: the
    join's answer ("no race") is the page's to leave unsaid, the lobby telling why."""
    clock = TestClock()
    handle = await server_node(redis_server.url, clock=clock, **MATCH)
    player = await open_page(browser, "Ann", "player", handle.http_url)
    page = player.page
    held: list[Any] = []
    joins: list[Any] = []  # the page's join on its new connection, and where it goes

    def to_race_url(ws: Any) -> None:
        if when == "moving" and not held:
            held.append(ws)  # open for the page, unanswered, until the test closes it
        elif when == "rejoining" and not held:
            held.append(ws)
            server = ws.connect_to_server()

            def from_page(message: str | bytes) -> None:
                if "join" in _kinds(message) and not joins:
                    joins.append((server, message))  # sent on once the call-off came
                else:
                    server.send(message)

            ws.on_message(from_page)
        else:
            ws.connect_to_server()

    await page.route_web_socket(lambda url: "race=" in url, to_race_url)
    async with _matched(page, handle) as matched:
        assert await _race(page) == (matched.code, "open")  # joined at once: waiting for the other
        race = await handle.node.store.races.load_race(matched.code)
        assert race is not None and [x for x, e in race.players.items() if e.ready] != []
        if when == "joined":
            await page.wait_for_function(MOVED)
        else:
            await page.wait_for_function("() => window.spiderRace.session.moving")
            await _until(lambda: held if when == "moving" else joins)
            assert len(held) == 1 and len(joins) == (when == "rejoining")

        clock.move(handle.node.settings.match_confirm + 1)
        try:
            await page.wait_for_selector("#match-notice")
        except Exception as e:  # say what the page and the node saw, to find out why
            raise AssertionError(await _what_was_seen(player, handle)) from e
        assert "did not join in time" in await page.inner_text("#match-notice")
        for server, message in joins:  # the join goes on, to a race no longer there
            server.send(message)
            await page.wait_for_function(
                "() => window.spiderRace.session.requests.size === 0"
                " && window.spiderRace.app.calledOff.size === 1"
            )
            answered = b"".join(player.frames[-5:])  # the race gone, or not yet deleted
            assert b"not_found" in answered or b"not_a_player" in answered, answered
            assert "no race" not in await page.inner_text("body")
            assert await page.locator("#lobby-error").count() == 0
        if when == "moving":  # the held connection lets go: the page connects again, answered
            for ws in held:
                await ws.close()
        await page.wait_for_selector("#match-waiting")
        await _next_match(page, handle, matched.code)
        assert not player.errors, player.errors
        assert "no race" not in await page.inner_text("body")  # the old race not named


def _kinds(message: str | bytes) -> list[Any]:
    """The types of the messages in one frame (an array of events, or one)."""
    if not isinstance(message, bytes):
        return []
    decoded = msgpack.unpackb(message)
    return [m.get("type") for m in (decoded if isinstance(decoded, list) else [decoded])]


async def test_a_call_off_heard_after_the_joins_answer_is_queued_for_again(
    browser, redis_server, server_node
) -> None:
    """The other order (two nodes: the race's node answers the page's join on its URL with
    "no race" before the node of the connection it leaves passes the call-off on): the page
    hears the call-off of the race it was matched to all the same, says so and queues
    again first in line."""
    clock = TestClock()
    handle = await server_node(redis_server.url, clock=clock, **MATCH)
    player = await open_page(browser, "Ann", "player", handle.http_url)
    page = player.page
    joins: list[Any] = []  # the page's join on its new connection, and where it goes
    kept: list[Any] = []  # the call-off on the connection the page leaves, held

    def to_race_url(ws: Any) -> None:
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            if "join" in _kinds(message) and not joins:
                joins.append((server, message))
            else:
                server.send(message)

        ws.on_message(from_page)

    def to_lobby_url(ws: Any) -> None:
        server = ws.connect_to_server()

        def to_page(message: str | bytes) -> None:
            if "match_cancelled" in _kinds(message):
                kept.append((ws, message))
            else:
                ws.send(message)

        server.on_message(to_page)

    await page.route_web_socket(lambda url: "race=" in url, to_race_url)
    await page.route_web_socket(lambda url: "race=" not in url, to_lobby_url)
    await page.reload()  # its connection to the lobby's URL now goes through the route
    await page.wait_for_selector("#conn[data-state=connected]")
    async with _matched(page, handle) as matched:
        await _until(lambda: joins)
        assert len(joins) == 1
        clock.move(handle.node.settings.match_confirm + 1)
        for _ in range(600):  # deleted once the call-off went out; held for the page
            if kept and await handle.node.store.races.load_race(matched.code) is None:
                break
            await asyncio.sleep(0.05)
        assert kept
        server, message = joins[0]
        server.send(message)  # answered first: no race
        await page.wait_for_function("() => window.spiderRace.session.requests.size === 0")
        assert b"not_found" in b"".join(player.frames[-5:])
        for ws, held in kept:  # then the call-off
            ws.send(held)
        await page.wait_for_selector("#match-notice")
        assert "did not join in time" in await page.inner_text("#match-notice")
        await page.wait_for_selector("#match-waiting")
        await _next_match(page, handle, matched.code)
        assert not player.errors, player.errors


async def test_a_join_answered_after_the_call_off_does_not_take_the_page_back(
    browser, redis_server, server_node
) -> None:
    """The page's join on its race's URL is answered ``joined`` (the race was still
    there), but the answer reaches the page only after the call-off came on the connection
    it leaves: the page stays in the lobby, queued again, instead of going back to the
    race, which is deleted."""
    clock = TestClock()
    handle = await server_node(redis_server.url, clock=clock, **MATCH)
    player = await open_page(browser, "Ann", "player", handle.http_url)
    page = player.page
    late: list[Any] = []  # what the race's URL sends the page from its join's answer on
    released: list[bool] = []

    def to_race_url(ws: Any) -> None:
        server = ws.connect_to_server()

        def to_page(message: str | bytes) -> None:
            if not released and (late or "joined" in _kinds(message)):
                late.append((ws, message))
            else:
                ws.send(message)

        server.on_message(to_page)

    await page.route_web_socket(lambda url: "race=" in url, to_race_url)
    async with _matched(page, handle) as matched:
        await _until(lambda: late)
        assert late and "joined" in _kinds(late[0][1])
        clock.move(handle.node.settings.match_confirm + 1)
        await page.wait_for_selector("#match-notice")  # heard on the connection it leaves
        released.append(True)  # from now on the route's messages go straight on
        for ws, message in late:  # the join's answer, then what followed it, in order
            ws.send(message)
        await page.wait_for_function(
            "() => window.spiderRace.session.requests.size === 0"
            " && window.spiderRace.app.screen === 'lobby'"
        )
        assert await page.evaluate("window.spiderRace.app.code") is None
        assert await page.locator("#match-waiting").count() == 1
        assert await handle.node.store.races.load_race(matched.code) is None
        assert not player.errors, player.errors


async def test_a_player_who_leaves_a_matched_race_is_not_queued_again(
    browser, redis_server, server_node
) -> None:
    """Ann leaves her quick match's race before the other matched player joined (a dodge
    that would leave one player: the match is called off, naming her missing): her page
    goes to the lobby without the notice for those left and without queueing her again."""
    handle = await server_node(redis_server.url, **MATCH)
    player = await open_page(browser, "Ann", "player", handle.http_url)
    page = player.page
    async with _matched(page, handle) as matched:
        assert await _race(page) == (matched.code, "open")
        await page.wait_for_function(MOVED)
        await page.click("#leave")
        await page.wait_for_function(
            "() => window.spiderRace.app.screen === 'lobby'"
            " && window.spiderRace.session.requests.size === 0"
            " && window.spiderRace.app.calledOff.size === 1"
        )
        assert await page.locator("#match-notice").count() == 0
        assert await page.locator("#match-waiting").count() == 0
        # not queued for again: the node would have refused her (a dodge waits)
        assert await page.inner_text("#quick-match-state") == ""
        assert b"rate_limited" not in b"".join(player.frames)
        assert await handle.node.store.races.load_race(matched.code) is None
        assert not player.errors, player.errors
