"""What a new player ran into, in Chromium against a real server node, each measured in the
page (geometry or words, no screenshots):

- Resign is armed exactly while its prompt shows: the prompt gone (its four seconds over,
  or another message in its place), a press arms it again; the prompt still showing (its
  timer late: a tab in the background, a busy machine), a press resigns. Time is the
  page's fake clock (``page.clock``), never a wait.
"""

from __future__ import annotations

from typing import Any

from tests.web.web_helpers import Player, open_page

PROMPT = "Press Resign again to give up this game."

NODE = {"prefetch_per_race": 0, "rate": 1000.0, "burst": 1000}
"""No hint searched before it is asked for (the hint replies here are the test's own), and
no rate limit on the test's clients."""


async def start_alone(player: Player, variant: str, seed: str, *, hints: bool = False) -> None:
    """Create a race of one from the lobby, ready, and wait for the deal."""
    page = player.page
    await page.fill("#name", "Newt")
    await page.select_option("#variant", variant)
    if hints:
        await page.check("#hints")
    if not await page.is_visible("#seed"):
        await page.click("details.more summary")
    await page.fill("#seed", seed)
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")


async def message(page: Any) -> str | None:
    """The message line's text now (None when the screen has none: the game is over)."""
    text = await page.evaluate("() => document.querySelector('#message')?.textContent")
    return None if text is None else str(text).strip()


async def now(page: Any) -> float:
    """The page's clock, in seconds (Playwright's clock takes a number as seconds)."""
    return float(await page.evaluate("Date.now()")) / 1000


async def status(page: Any) -> str | None:
    """This player's status as the board shows it now (None: no board any more)."""
    return await page.evaluate("() => document.querySelector('#board')?.dataset.status ?? null")


# -- Resign: armed while its prompt shows ---------------------------------------------------


async def test_resign_is_armed_while_its_prompt_shows(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **NODE)
    player = await open_page(browser, "newt", "player", node.http_url, width=1280, height=900)
    page = player.page
    await start_alone(player, "spider1", "new-player-1")
    await page.clock.install()
    await page.clock.pause_at(await now(page) + 1)

    # the prompt shows for four seconds, and goes; a press after it arms Resign again
    await page.click("#resign")
    assert await message(page) == PROMPT
    await page.clock.run_for(3_900)
    assert await message(page) == PROMPT
    await page.clock.run_for(200)
    assert await message(page) == ""
    await page.click("#resign")
    assert await message(page) == PROMPT
    assert await status(page) == "playing"

    # another message takes the prompt's place: Resign is not armed any more
    await page.keyboard.press("!")  # a race without hints: the page says so
    assert "without hints" in await message(page)
    await page.click("#resign")
    assert await message(page) == PROMPT, "a press with no prompt showing resigned"
    assert await status(page) == "playing"

    # the prompt still shows though its four seconds are over (its timer late: the wall
    # clock ran on, no timer fired): a press resigns
    await page.clock.set_system_time(await now(page) + 5)
    assert await message(page) == PROMPT
    await page.click("#resign")
    assert await message(page) != PROMPT, "a press with the prompt showing armed Resign again"
    await page.clock.resume()
    await page.wait_for_selector("#results")
    assert player.errors == []
