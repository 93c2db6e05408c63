"""A guest on the page of a server that keeps accounts (Chromium, a real node with Valkey
and PostgreSQL): marked "(guest)" in a race beside an account (who is not), told that its
quick matches are casual and queued so, and told in plain words that rated races are for
accounts when it asks for one."""

from __future__ import annotations

from typing import Any

import pytest

from spider_client import Client
from tests.server.account_helpers import ACCOUNT_SETTINGS, account_token
from tests.web.web_helpers import assert_no_leaks, open_page


@pytest.fixture
async def node(server_node: Any, redis_server: Any, pg_database: Any) -> Any:
    return await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)


async def test_a_guest_beside_an_account_casual_matches_and_no_rated_race(
    browser: Any, node: Any
) -> None:
    gwen = await open_page(browser, "gwen", "player", node.http_url)
    page = gwen.page
    await page.wait_for_function("() => window.spiderRace.session.welcomed")
    async with await Client.connect(node.url, token=await account_token(node, "Ada")) as ada:
        code = await ada.create_race(variant="spider1", countdown=0)
        await page.goto(f"{node.http_url}/r/{code}")
        await page.wait_for_selector("#conn[data-state=connected]")
        await page.fill("#name", "gwen")
        await page.click("#join")
        await page.wait_for_selector("#ready")
        rows = page.locator("li.player")
        await page.wait_for_function("() => document.querySelectorAll('li.player').length === 2")
        texts = [str(t) for t in await rows.all_inner_texts()]
        mine = next(t for t in texts if "gwen" in t)
        theirs = next(t for t in texts if "Ada" in t)
        assert "(guest)" in mine and "(you)" in mine, texts
        assert "(guest)" not in theirs, texts
        await ada.wait_until(lambda c: len(c.race.players) == 2, timeout=20)
        marks = {pl.name: pl.guest for pl in ada.race.players}
        assert marks == {"Ada": False, "gwen": True}

    # the lobby: quick match is casual for a guest, and said so
    await page.goto(node.http_url)
    await page.wait_for_selector("#quick-casual")
    assert "casual" in await page.inner_text("#quick-casual")
    await page.click("#quick-match")
    await page.wait_for_function(
        "() => document.querySelector('#match-waiting')?.textContent.includes('casual')"
    )
    await page.click("#cancel-match")

    # a rated race asked for: refused, in plain words, nothing made
    await page.check("#rated")
    await page.click("#create")
    await page.wait_for_selector("#lobby-error")
    said = await page.inner_text("#lobby-error")
    assert "rated races are for accounts" in said and "sign up or sign in" in said, said
    assert not await page.is_visible("#ready")
    assert_no_leaks("spider1", [gwen])
    assert gwen.errors == []
