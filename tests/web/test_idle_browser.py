"""The page warns a player before they are out for making no move (rules.md §7a), in
Chromium against a real node whose clock only the test moves
(:class:`~tests.server.clocks.TestClock`); the page's own clock is Playwright's, paused and
set so that its server time is the node's (``page.clock``), never a wait:

- the race's settings say its idle limit;
- no warning while the deadline (``idle_at``) is far; in its last seconds, a warning
  counts down; a deal clears it;
- past the deadline the player is out as ``idle``: the board says the game is over, and
  the other player sees it.
"""

from __future__ import annotations

from typing import Any

from spider_client import Client
from tests.server.clocks import TestClock
from tests.web.web_helpers import open_page

WARNING = "#idle-warning"


async def _server_time(page: Any, clock: TestClock) -> None:
    """Set the page's clock (paused) so that its server time is the node's now (a number
    is seconds to Playwright's clock)."""
    offset = float(await page.evaluate("window.spiderRace.session.serverOffset"))
    await page.clock.set_system_time(clock() - offset)


async def _warning(page: Any) -> str:
    """The warning's text while it shows; empty when it does not."""
    return str(
        await page.evaluate(
            "(s) => { const w = document.querySelector(s);"
            " return w && w.classList.contains('on') ? w.textContent : ''; }",
            WARNING,
        )
    )


async def test_the_page_warns_before_the_idle_limit(browser, redis_server, server_node) -> None:
    clock = TestClock()
    node = await server_node(redis_server.url, clock=clock)
    bob = await Client.connect(node.url, name="bob")
    code = await bob.create_race(variant="spider1", countdown=0, max_players=2, idle_limit=30)
    ann = await open_page(browser, "ann", "player", f"{node.http_url}/r/{code}")
    page = ann.page
    await page.fill("#name", "Ann")
    await page.click("#join")
    await page.wait_for_selector("#ready")
    assert "out after 30 s without a move" in await page.inner_text("#settings")
    await page.click("#ready")
    await bob.ready()
    await page.wait_for_selector("#board .card")
    await page.clock.install()
    await page.clock.pause_at(float(await page.evaluate("Date.now()")) / 1000 + 1)
    await _server_time(page, clock)
    await page.wait_for_function(
        "(s) => document.querySelector(s) !== null && !document.querySelector(s).classList.contains('on')",
        arg=WARNING,
    )

    # 9 s before the deadline: the warning counts down
    clock.move(21)
    await _server_time(page, clock)
    await page.wait_for_function(
        "(s) => document.querySelector(s)?.classList.contains('on')", arg=WARNING
    )
    assert await _warning(page) == "Make a move within 9 s, or you are out of the race."
    clock.move(4)
    await _server_time(page, clock)
    await page.wait_for_function(
        "(s) => document.querySelector(s)?.textContent.includes('within 5 s')", arg=WARNING
    )

    # a deal moves the deadline on (bob deals too: he plays on): the warning goes
    await page.keyboard.press("+")
    await bob.move("+")
    await page.wait_for_function(
        "(s) => !document.querySelector(s)?.classList.contains('on')", arg=WARNING
    )
    assert await _warning(page) == ""

    # bob acts again; ann lets her deadline pass: she is out as idle, and bob sees it
    clock.move(20)
    await bob.move("+")
    clock.move(11)
    await _server_time(page, clock)
    await page.wait_for_selector("#board[data-status=idle]")
    assert "out: no move in time" in await page.inner_text("#game-over")
    assert await _warning(page) == ""
    await bob.wait_until(
        lambda c: c.race is not None and any(i.status == "idle" for i in c.race.players),
        timeout=30,
    )
    assert bob.status == "playing"
    assert ann.errors == []
    await bob.close()
