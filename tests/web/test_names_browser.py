"""The page and names the server refuses (docs/web.md, "The lobby"; docs/protocol.md,
"Names"), in Chromium against a real server node: the lobby says the reason and creates
nothing, and a refused name kept in the browser from before is dropped, not sent again
and again."""

from __future__ import annotations

import json

from tests.web.web_helpers import open_page

NODE = {"rate": 1000.0, "burst": 1000}


async def _lobby_error(page) -> str:
    await page.wait_for_selector("#lobby-error")
    return str(await page.inner_text("#lobby-error")).strip()


async def test_a_refused_name_is_said_in_the_lobby(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **NODE)
    player = await open_page(browser, "alice", "player", node.http_url)
    page = player.page
    await page.wait_for_function("() => window.spiderRace.session.welcomed")
    await page.fill("#name", "\u0430lice")  # a Cyrillic a
    await page.click("#create")
    assert await _lobby_error(page) == "The name mixes Cyrillic and Latin letters."
    assert not await page.is_visible("#ready")  # no race created
    # the page is still welcomed, and a name it may take creates the race
    await page.fill("#name", "alice")
    await page.click("#create")
    await page.wait_for_selector("#ready")
    assert await page.evaluate("() => window.spiderRace.session.welcomedName") == "alice"


async def test_a_refused_name_kept_from_before_is_dropped(
    browser, redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **NODE)
    player = await open_page(browser, "bob", "player", node.http_url)
    page = player.page
    await page.wait_for_function("() => window.spiderRace.session.welcomed")
    kept = json.dumps(json.dumps("Bob!"))
    await page.evaluate(f"localStorage.setItem('spider-race.name', {kept})")
    await page.reload()
    await page.wait_for_function("() => window.spiderRace.session.welcomed")
    assert await _lobby_error(page) == (
        "The name contains U+0021 EXCLAMATION MARK: a name has letters, digits, spaces "
        "and - _ . only."
    )
    name = await page.evaluate("() => window.spiderRace.session.welcomedName")
    assert name and name != "Bob!"
    assert await page.evaluate("() => localStorage.getItem('spider-race.name')") == json.dumps(name)
