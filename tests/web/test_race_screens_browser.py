"""A race as its players and spectators see it, at 1280×800 and on a 375×667 phone, in
Chromium against a real server node: how to play from the lobby and the board, the panels
closed by their button, Escape or a tap outside, "Link copied." in the room, buttons off
with their reasons, words in the singular for one, the player's place in the race and the
news of the others, a spectator's board at full size and the leader followed, the boards
hidden, the daily deal's room; every screen measured by tests/web/layout.py."""

from __future__ import annotations

import re

import pytest

from spider_client import Client
from spider_engine import Board
from spider_engine.solver import solve
from tests.web.layout import SIZES, check_screen, words_broken
from tests.web.web_helpers import Player, best_destination, open_page

SEED = "screens-race-34"  # a winning line of 102 moves


async def closes(player: Player, opener: str, panel: str) -> None:
    """Panel ``panel`` opened by ``opener`` closes by its button, by Escape and by a tap
    outside it."""
    page = player.page
    for how in ("button", "escape", "outside"):
        await page.click(opener)
        await page.wait_for_selector(f"#{panel}")
        if how == "button":
            await page.click(f"#{panel}-close")
        elif how == "escape":
            await page.keyboard.press("Escape")
        else:
            height = await page.evaluate("window.innerHeight")
            await page.mouse.click(3, height - 3)
        await page.wait_for_selector(f"#{panel}", state="detached")


async def no_singular_plurals(player: Player) -> None:
    text = await player.page.inner_text("body")
    bad = re.findall(r"\b1 (?:moves|actions|hints|runs|deals left)\b", text)
    assert bad == [], bad


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_the_lobby_names_a_missing_race_and_shows_how_to_play(
    browser, redis_server, server_node, width, height
) -> None:
    node = await server_node(redis_server.url)
    pia = await open_page(browser, "pia", "player", node.http_url, width=width, height=height)
    page = pia.page
    await page.fill("#name", "Pia")
    await page.fill("#join-code", "ZZZZZ")
    await page.click("#join")
    await page.wait_for_selector("#lobby-error")
    assert (await page.inner_text("#lobby-error")).count("ZZZZZ") == 1
    await closes(pia, "#lobby-how-to", "howto")
    await page.click("#lobby-how-to")
    assert "Start here" in await page.inner_text("#howto")  # spider1, the lobby's default
    await page.select_option("#howto-base", "wizard")
    assert "next" in await page.inner_text("#howto-variant")
    await check_screen(pia, "howto")
    await page.keyboard.press("Escape")
    await page.wait_for_selector("#howto", state="detached")
    assert pia.errors == []


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_watching_a_race_whose_boards_stay_hidden(
    browser, redis_server, server_node, width, height
) -> None:
    node = await server_node(redis_server.url)
    rita = await Client.connect(node.url, name="Rita")
    ravi = await Client.connect(node.url, name="Ravi")
    try:
        hidden = await rita.create_race(variant="spider2", live_boards=False, countdown=0)
        await ravi.join(hidden)
        wanda = await open_page(
            browser, "wanda", "spectator", node.http_url, width=width, height=height
        )
        wpage = wanda.page
        await wpage.fill("#name", "Wanda")
        await wpage.fill("#join-code", hidden)
        await wpage.click("#watch")
        await wpage.wait_for_selector("#room-players li:nth-child(2)")
        await rita.ready()
        await ravi.ready()
        await wpage.wait_for_selector("#watch-grid .player")
        assert await wpage.locator("#watch-grid .board").count() == 0
        await check_screen(wanda, "watch-hidden")
        assert wanda.errors == []
    finally:
        await rita.close()
        await ravi.close()


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_a_race_seen_by_players_and_spectators(
    browser, redis_server, server_node, width, height
) -> None:
    node = await server_node(redis_server.url, rate=1000.0, burst=1000)  # Ravi plays at once
    pia = await open_page(browser, "pia", "player", node.http_url, width=width, height=height)
    page = pia.page
    await page.fill("#name", "Pia")

    # -- the room: the link copied -------------------------------------------------------------
    await page.select_option("#variant", "spider1")
    await page.uncheck("#undo")
    await page.check("#live-boards")
    await page.click("details.more summary")
    await page.fill("#seed", SEED)
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.wait_for_selector("#share-link")
    code = (await page.inner_text("#code")).strip()
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await page.click("#copy-link")
    await page.wait_for_selector("#message:has-text('Link copied.')")
    await check_screen(pia, "room")
    rita = await Client.connect(node.url, name="Rita")
    ravi = await Client.connect(node.url, name="Ravi")
    rex = await Client.connect(node.url, name="Rex")
    wanda = await open_page(
        browser, "wanda", "spectator", f"{node.http_url}/r/{code}", width=width, height=height
    )
    wpage = wanda.page
    try:
        await rita.join(code)
        await ravi.join(code)
        await rex.join(code)
        await wpage.fill("#name", "Wanda")
        await wpage.click("#watch")
        await wpage.wait_for_selector("#room-players li:nth-child(4)")
        await check_screen(wanda, "room-watching")
        for client in (rita, ravi, rex):
            await client.ready()
        await page.click("#ready")
        await page.wait_for_selector("#board .card")

        # -- the board: what cannot act is off, and says why -----------------------------------
        assert await page.is_disabled("#undo")
        assert await page.get_attribute("#undo", "title") == "This race has no undo."
        assert await page.is_disabled("#hint")
        assert "without hints" in (await page.get_attribute("#hint", "title") or "")
        await page.keyboard.press("!")
        await page.wait_for_selector("#message.error")
        assert "without hints" in await page.inner_text("#message")
        await closes(pia, "#keys", "help")
        await page.keyboard.press("?")
        await page.wait_for_selector("#help")
        await check_screen(pia, "keys")
        await page.keyboard.press("?")
        await page.wait_for_selector("#help", state="detached")
        await page.click("#how-to")
        assert "Spider, one suit" in await page.inner_text("#howto")
        await page.keyboard.press("Escape")

        # -- one move: "1 move"; a place in the race ---------------------------------------------
        board = Board.from_text(await pia.view())
        click = next(
            m
            for m in board.legal_moves
            if m.kind == "move" and best_destination(board, m.src, m.count) == m.dst
        )
        await pia.click_card(click.src, click.count)
        await pia.wait_moves(1)
        await page.wait_for_selector('#players .stat:has-text("1 move")')
        await no_singular_plurals(pia)
        assert re.match(r"You are 1st of 4", await page.inner_text("#place"))
        await check_screen(pia, "race-board", ranks=True)

        # -- the spectator: live boards, one at full size, the leader followed ------------------------
        me = await page.evaluate("window.spiderRace.session.player")
        await wpage.wait_for_selector(f'#watch-grid .player[data-player="{me}"][data-moves="1"]')
        await check_screen(wanda, "watch-live", ranks=True)
        await wpage.click(f'.open-board[data-player="{me}"]')
        await wpage.wait_for_selector(f'#focus-board[data-player="{me}"]')
        await check_screen(wanda, "watch-focus", ranks=True)

        # -- Rita resigns: Pia and Wanda are told; Pia's place --------------------------------------
        await rita.wait_until(lambda c: c.view is not None, timeout=10)
        await rita.resign()
        await page.wait_for_selector("#race-notice.on:has-text('Rita resigned.')")
        await wpage.wait_for_selector("#race-notice.on:has-text('Rita resigned.')")
        rita_card = page.locator(f'#players .player[data-player="{rita.player}"] .place')
        assert await rita_card.inner_text() == "4th of 4"
        assert re.match(r"You are 1st of 4", await page.inner_text("#place"))

        # -- Ravi wins: told too; Pia is 2nd of 4; the spectator follows the leader -----------------
        await wpage.check("#follow-leader")
        await wpage.wait_for_selector(f'#watch-focus[data-player="{me}"]')
        line = solve(Board.deal("spider1", SEED), budget=200_000).line
        assert line
        await ravi.wait_until(lambda c: c.view is not None, timeout=10)
        for move in line:
            await ravi.move(move.text())
        await page.wait_for_selector("#race-notice.on:has-text('Ravi won in')")
        await wpage.wait_for_selector("#race-notice.on:has-text('Ravi won in')")
        await page.wait_for_selector("#place:has-text('You are 2nd of 4 · leading: Ravi')")
        await wpage.wait_for_selector(f'#watch-focus[data-player="{ravi.player}"]')
        await no_singular_plurals(wanda)

        # -- Pia resigns: every button is off, and says so; keys send nothing -------------------------
        await page.click("#resign")
        await page.click("#resign")
        await page.wait_for_selector("#game-over")
        for button in ("undo", "deal", "hint", "resign"):
            assert await page.is_disabled(f"#{button}"), button
            assert await page.get_attribute(f"#{button}", "title") == "Your game is over."
        moves = await pia.moves()
        await page.keyboard.press("+")
        await page.wait_for_selector("#message:has-text('Your game is over.')")
        assert await pia.moves() == moves

        # -- the end, for a player and a spectator -----------------------------------------------------
        await rex.wait_until(lambda c: c.view is not None, timeout=10)
        await rex.resign()
        for p in (pia, wanda):
            await p.page.wait_for_selector("#replay-moves li")
            await check_screen(p, f"end-{p.name}")
        assert "from" in await wpage.inner_text("#replay-moves")
        assert pia.errors == [] and wanda.errors == []
    finally:
        await rita.close()
        await ravi.close()
        await rex.close()


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_the_daily_deal_on_a_phone(
    browser, redis_server, server_node, daily_seeds, width, height
) -> None:
    node = await server_node(redis_server.url, pool_size=0, rate=1000.0, burst=1000)
    player = await open_page(browser, "daily", "player", node.http_url, width=width, height=height)
    page = player.page
    await page.fill("#name", "Dana")
    await page.select_option("#daily-variant", "spider1")
    await page.click("#daily-board")
    await page.wait_for_selector("#daily-leaderboard")
    await check_screen(player, "daily-lobby")
    await page.click("#daily-play")
    await page.wait_for_selector("#daily-note")
    assert await words_broken(page, "#daily-note") == []
    await check_screen(player, "daily-room")
    await page.click("#ready")
    await page.wait_for_selector("#board .card", timeout=30_000)
    await check_screen(player, "daily-board", ranks=True)
    await page.click("#resign")
    await page.click("#resign")
    await page.wait_for_selector("#results")
    await page.wait_for_selector("#daily-hidden")
    await check_screen(player, "daily-end")
    assert player.errors == []
