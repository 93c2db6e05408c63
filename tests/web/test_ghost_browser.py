"""Ghosts on the page: a finished race raced again against your own run, and the day's
leader raced during the day (progress only: no card of the deal in any frame)."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio as aioredis

from spider_client import protocol as p
from spider_engine import Board
from spider_engine.solver import solve
from spider_server.runners.seeds import utc_day
from spider_server.store import keys
from tests.server.server_helpers import Client
from tests.web.layout import SIZES
from tests.web.web_helpers import assert_no_leaks, open_page

VARIANT = "spider1"
SEED = "ghost-page-41"  # a line of 109 moves: the ghost replays it on the race's clock

PLAY = """async ([moves, pause]) => {
  const { session } = window.spiderRace;
  for (const move of moves) {
    while (session.busy()) await new Promise((resolve) => setTimeout(resolve, 2));
    session.act("move", move);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}"""
"""Play a line through the page's session, each move once the last is acked, a pause apart."""


async def ghost_card(page, where: str) -> None:
    await page.wait_for_selector(f".player[data-ghost='1']{where}", timeout=60_000)


GHOST_CARD_BOXES = """() => {
  const box = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return { ghost: box(document.querySelector(".player[data-ghost='1']")),
           me: box(document.querySelector('#players .player.me')),
           position: getComputedStyle(document.querySelector(".player[data-ghost='1']")).position,
           width: document.documentElement.clientWidth };
}"""


async def ghost_card_in_place(page) -> None:
    """The ghost's progress card sits in the players' panel like any other: shown, inside
    the page's width, over no other card (the player's own included)."""
    boxes = await page.evaluate(GHOST_CARD_BOXES)
    (gl, gt, gr, gb), (ml, mt, mr, mb) = boxes["ghost"], boxes["me"]
    assert gr > gl and gb > gt and mr > ml and mb > mt, boxes  # both cards are on screen
    assert boxes["position"] != "fixed", boxes
    assert gl >= 0 and gr <= boxes["width"], boxes
    assert gr <= ml or mr <= gl or gb <= mt or mb <= gt, boxes  # no overlap


async def test_race_your_own_run_as_a_ghost(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    player = await open_page(browser, "racer", "player", node.http_url)
    page = player.page
    await page.fill("#name", "Gus")
    await page.select_option("#variant", VARIANT)
    await page.click("details.more summary")
    await page.fill("#seed", SEED)
    await page.fill("#countdown", "0")
    await page.check("#hints")
    await page.click("#create")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    line = solve(Board.deal(VARIANT, SEED), budget=200_000).line
    assert line
    await page.evaluate(PLAY, [[m.text() for m in line], 20])
    await page.wait_for_selector("#results", timeout=60_000)

    # -- the end screen offers the run, with its times in the replay ---------------------------
    button = page.locator("#ghost-races button.ghost-race")
    assert await button.inner_text() == "Race this deal again against your run"
    first = page.locator("#replay-moves li[data-step='1']")
    ms = int(await first.get_attribute("data-ms"))
    assert f"0:{ms // 1000:02d}.{ms % 1000 // 100}" in await first.inner_text()
    await player.shot("ghost-end")
    await button.click()

    # -- the new race: the ghost is in it, ready; it moves on the race's clock and finishes -----
    await page.wait_for_selector("#ready")
    assert "(ghost)" in await page.inner_text(".room")
    # the race's settings carry, its hints included
    again = await page.evaluate("window.spiderRace.app.race")
    assert (again["variant"], again["hints"], again["countdown"]) == (VARIANT, True, 0), again
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    await ghost_card(page, ":not([data-moves='0'])")
    await player.shot("ghost-moving")
    await ghost_card(page, "[data-status='won']")
    await ghost_card_in_place(page)
    await page.evaluate("window.spiderRace.session.act('resign')")
    await page.wait_for_selector("#results", timeout=30_000)
    row = await page.inner_text("#results tbody tr[data-player='ghost1']")
    assert (
        "(ghost)" in row
        and await page.get_attribute("#results tbody tr[data-player='ghost1']", "data-rank") == "1"
    )
    assert player.errors == []


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_the_days_leader_as_a_ghost_shows_progress_only(
    browser, redis_server, server_node, daily_seeds, width, height
) -> None:
    node = await server_node(redis_server.url, pool_size=0, rate=1000.0, burst=1000)
    leader = await Client.connect(node.url, name="Lea")
    reply = await leader.request(p.DailyRace(req=0, variant=VARIANT))
    if reply.race.preparing:
        await leader.expect("prepared", timeout=30)
    r = aioredis.from_url(redis_server.url)
    try:
        seed = (await r.get(keys.daily(VARIANT, utc_day(time.time())))).decode()
    finally:
        await r.aclose()
    code = reply.race.code
    await leader.ready(code)
    await leader.expect("ack", lambda m: m.seq == 0)
    line = solve(Board.deal(VARIANT, seed), budget=200_000).line
    assert line
    for seq, move in enumerate(line, start=1):
        assert (await leader.move(code, seq, move.text())).type == "ack"
        await asyncio.sleep(0.01)
    await leader.expect("finished")

    phone = width < 600
    player = await open_page(
        browser, "chaser", "player", node.http_url, width=width, height=height, touch=phone
    )
    page = player.page
    await page.fill("#name", "Cy")
    await page.select_option("#daily-variant", VARIANT)
    await page.click("#daily-board")
    await page.click("#daily-leaderboard button.race-run")
    await page.wait_for_selector("#daily-note")
    assert "(ghost)" in await page.inner_text(".room")
    # a ghost takes no place of the race's: one player of one
    assert "Players (1/1)" in await page.inner_text(".room h2")
    await page.click("#ready")
    await page.wait_for_selector("#board .card", timeout=30_000)
    await ghost_card(page, ":not([data-moves='0'])")
    await ghost_card(page, "[data-status='won']")
    await ghost_card_in_place(page)
    await player.shot(f"daily-ghost-{width}")
    await page.evaluate("window.spiderRace.session.act('resign')")
    await page.wait_for_selector("#results", timeout=30_000)
    assert "(ghost)" in await page.inner_text("#results tbody tr[data-player='ghost1']")
    assert await page.locator("#ghost-races").count() == 0  # the deal stays hidden today
    assert_no_leaks(VARIANT, [player], kept=(seed,))
    assert player.errors == []
