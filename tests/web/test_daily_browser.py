"""The daily deal in Chromium against a real server node: the lobby's *Daily deal* shows the
day's leaderboard and starts the day's race of a variant; the page plays it to a win (the
first moves by keys and by drag, the rest of the solver's line through the page's own
session), and the end screen and the lobby then show the player on the day's leaderboard.

The day's seed is proved by the server's pool (``spider1`` proves in about a second); the
test reads it from Redis, as tests/server/test_solver_races.py does, to find the winning
line. It must never reach the page: not even the finish reveals it before the day is over.
"""

from __future__ import annotations

import time

import redis.asyncio as aioredis

from spider_client import Client
from spider_engine import Board
from spider_engine.solver import solve
from spider_server.runners.seeds import utc_day
from spider_server.store import keys
from tests.web.web_helpers import assert_no_leaks, open_page

VARIANT = "spider1"

PLAY_REST = """async (moves) => {
  const { session } = window.spiderRace;
  for (const move of moves) {
    while (session.busy()) await new Promise((resolve) => setTimeout(resolve, 2));
    session.act("move", move);
  }
}"""
"""The rest of the line through the page's session, each move once the last is acked."""


async def test_daily_deal_and_its_leaderboard(
    browser, redis_server, server_node, daily_seeds
) -> None:
    node = await server_node(redis_server.url, pool_size=0, rate=1000.0, burst=1000)
    player = await open_page(browser, "daily", "player", node.http_url, width=1280, height=720)
    page = player.page
    await page.fill("#name", "Dana")
    await page.select_option("#daily-variant", VARIANT)

    # -- nobody on today's leaderboard yet -----------------------------------------------------
    await page.click("#daily-board")
    await page.wait_for_selector("#daily-leaderboard")
    day = utc_day(time.time())
    assert await page.get_attribute("#daily-leaderboard", "data-day") == day
    assert "nobody has won" in await page.inner_text("#daily-leaderboard")

    # -- today's race: one player, ready when you are ------------------------------------------
    await page.click("#daily-play")
    await page.wait_for_selector("#daily-note")
    assert f"daily deal of {day}" in await page.inner_text("#settings")
    assert await page.locator("#share-link").count() == 0
    await page.click("#ready")
    await page.wait_for_selector("#board .card", timeout=30_000)
    assert await page.inner_text("#daily-badge") == f"daily deal {day}"

    r = aioredis.from_url(redis_server.url)
    try:
        seed = (await r.get(keys.daily(VARIANT, day))).decode()
    finally:
        await r.aclose()
    board = Board.deal(VARIANT, seed)
    line = solve(board.copy(), budget=200_000).line
    assert line
    await player.expect_board(board, 0)
    # the first moves as a player makes them: by keys, then a drag
    for i, move in enumerate(line[:4]):
        if i < 3 or move.kind != "move":
            await player.keys(move.text())
        else:
            await player.drag(move.src, move.count, move.dst)
        board.push(move)
        await player.expect_board(board, i + 1)
    await player.shot("daily-board")
    await page.evaluate(PLAY_REST, [m.text() for m in line[4:]])

    # -- the end: the race's result, and the day's leaderboard with the player on it -------------
    me = await page.evaluate("window.spiderRace.session.player")
    await page.wait_for_selector("#results", timeout=60_000)
    await page.wait_for_selector(f'#end-leaderboard tr.me[data-player="{me}"]')
    assert "You won the daily deal" in await page.inner_text("#headline")
    row = await page.inner_text("#end-leaderboard tr.me")
    assert "Dana" in row and str(len(line)) in row, row
    assert "once its day" in await page.inner_text("#daily-hidden")  # no seed, no replay yet
    await player.shot("daily-end")

    # -- back in the lobby, the leaderboard shows the win too --------------------------------------
    await page.click("#new-race")
    await page.select_option("#daily-variant", VARIANT)
    await page.click("#daily-board")
    await page.wait_for_selector("#daily-leaderboard tr.me")
    assert await page.get_attribute("#daily-leaderboard tr.me", "data-rank") == "1"
    await page.evaluate("document.querySelector('#daily-form').scrollIntoView()")
    await player.shot("daily-lobby")

    # the server agrees: the win, with its moves, on the day's leaderboard
    checker = await Client.connect(node.url, name="checker")
    try:
        entries = await checker.leaderboard(VARIANT)
    finally:
        await checker.close()
    assert [(e.player, e.name, e.moves) for e in entries] == [(me, "Dana", len(line))]
    assert_no_leaks(VARIANT, [player], kept=(seed,))
    assert player.errors == []
