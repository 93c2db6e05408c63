"""Quick match in Chromium against a real node: the page joins the race a match made at
once (which confirms its seat); when the other player never joins, the match is called off
once the node's clock passes the confirmation window, and the page says so, queues again
first in line, and lands in the race made with the next player."""

from __future__ import annotations

import asyncio

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


async def test_a_match_called_off_is_queued_for_again(browser, redis_server, server_node) -> None:
    clock = TestClock()
    handle = await server_node(redis_server.url, clock=clock, **MATCH)
    player = await open_page(browser, "Ann", "player", handle.http_url)
    page = player.page
    await page.fill("#name", "Ann")
    await page.select_option("#quick-variant", "spider1")
    no_show = await RawPlayer.connect(handle.url, "ghost", source="127.0.0.2")
    try:
        reply = await no_show.request(lambda req: p.QuickMatch(req=req, variant="spider1"))
        assert isinstance(reply, p.Queued), reply
        await page.click("#quick-match")
        matched = await no_show.wait_for(lambda m: isinstance(m, p.Matched))
        assert await _race(page) == (matched.code, "open")  # joined at once: waiting for the other
        race = await handle.node.store.races.load_race(matched.code)
        assert race is not None and [x for x, e in race.players.items() if e.ready] != []

        clock.move(handle.node.settings.match_confirm + 1)
        await page.wait_for_selector("#match-notice")
        assert "did not join in time" in await page.inner_text("#match-notice")
        await page.wait_for_selector("#match-waiting")
        async with await Client.connect(handle.url, name="Bob") as bob:
            code = await asyncio.wait_for(bob.quick_match("spider1"), 20)
            assert code != matched.code
            await page.wait_for_function(
                "(code) => window.spiderRace.app.race?.code === code", arg=code
            )
        assert not player.errors, player.errors
    finally:
        await no_show.close()
