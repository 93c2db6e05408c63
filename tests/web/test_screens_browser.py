"""Every deck's board, and the end and replay screens, as a player sees them at 1280×800 and
on a 375×667 phone, in Chromium against a real server node (tests/web/layout.py measures
each screen): no horizontal scroll, no rank clipped, hidden under the next card, below
11 px or in poor contrast, tap targets of 24 px (the strip of a covered card included);
Sparrow's Dragons in their colours, the Tower's next trump, Deal off on the Tower."""

from __future__ import annotations

import pytest

from spider_engine import Board
from tests.web.layout import SIZES, check_screen
from tests.web.web_helpers import Player, open_page

DECKS = [
    ("spider4", [], "screens-1"),
    ("spiderette", [], "screens-2"),
    ("myrmex", [], "screens-3"),
    ("wizard", ["weave"], "screens-4"),
    ("sparrow", [], "screens-5"),
    ("starfish", [], "screens-6"),
]


PLAYED_TO_THE_END = """() => {
  const slider = document.querySelector('#replay-slider');
  return slider.value === slider.max && document.querySelector('#replay-play').textContent === 'Play'
    && document.querySelector('#replay-moves li.on')?.dataset.step === slider.max;
}"""


async def start_alone(player: Player, base: str, options: list[str], seed: str) -> None:
    """Create a race of one from the lobby, ready, and wait for the deal."""
    page = player.page
    await page.fill("#name", "Solo")
    await page.select_option("#variant", base)
    for option in options:
        await page.check(f"input[name=option][value={option}]")
    if not await page.is_visible("#seed"):
        await page.click("details.more summary")
    await page.fill("#seed", seed)
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")


async def resign(player: Player) -> None:
    await player.page.click("#resign")
    await player.page.click("#resign")
    await player.page.wait_for_selector("#results")


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_every_deck_legible(browser, redis_server, server_node, width, height) -> None:
    node = await server_node(redis_server.url)
    player = await open_page(browser, "decks", "player", node.http_url, width=width, height=height)
    page = player.page
    assert await page.input_value("#variant") == "spider1"  # where a newcomer starts
    await check_screen(player, "lobby")
    for i, (base, options, seed) in enumerate(DECKS):
        await start_alone(player, base, options, seed)
        m = await check_screen(player, f"board-{base}", ranks=True)
        view = Board.from_text(await player.view())
        assert m["ranks"] == sum(len(c) - d for c, d in zip(view.cols, view.down, strict=True))
        if base == "wizard":
            # no stock: Deal is off and says why, and + deals nothing
            assert await page.is_disabled("#deal")
            assert "no stock" in (await page.get_attribute("#deal", "title") or "")
            assert await page.locator("#stock").count() == 0
            await page.keyboard.press("+")
            await page.wait_for_selector("#message.error")
            assert "no stock" in await page.inner_text("#message")
            assert await player.moves() == 0
            # the Tower names the trump it needs next, not a row of T badges
            tower = await page.inner_text("#tower")
            left = view.foundation.count("t")
            assert f"next trump {left}" in tower, tower
            assert "T" not in (await page.inner_text("#foundation")).replace("Tower", "")
        if base == "sparrow":
            colours = await page.evaluate(
                """() => Object.fromEntries([...document.querySelectorAll('#board .card.dragon')].map((c) =>
                     [c.dataset.card, getComputedStyle(c.querySelector('.rank')).color]))"""
            )
            assert colours, "no Dragon face up in this deal"
            for card, colour in colours.items():
                r, g, b = (int(x) for x in colour[4:-1].split(",")[:3])
                red = r > 150 and g < 80 and b < 80
                assert red == (card == "Dc"), (card, colour)  # the red Dragon red, no other
        await resign(player)
        if i == 0:
            await page.wait_for_selector("#replay-board")
            await check_screen(player, "end")
            # the replay of the whole game (its one action, the resign), at the deal
            assert "resign" in await page.inner_text("#replay-moves")
            assert await page.get_attribute("#replay-slider", "max") == "1"
            assert await page.input_value("#replay-slider") == "0"
            await page.click("#replay-play")
            # played by itself to its end, then stopped: waited for as a state, not a time
            await page.wait_for_function(PLAYED_TO_THE_END)
            await check_screen(player, "replay")
        await page.click("#new-race")
        await page.wait_for_selector("#create")
    assert player.errors == []
