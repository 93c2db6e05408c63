"""The lobby in Chromium against real server nodes: two pages press Quick match and land
in the same race; the open-races list shows a public race appear, fill and vanish."""

from __future__ import annotations

import asyncio

from spider_client import Client
from tests.web.web_helpers import open_page

MATCH = {"match_wait": 3.0, "match_gather": 0.3, "match_turn": 0.05, "match_countdown": 2}


async def _race_code(page) -> str:
    await page.wait_for_function("() => window.spiderRace.app.race?.code")
    code: str = await page.evaluate("() => window.spiderRace.app.race.code")
    return code


async def test_two_pages_quick_match_into_one_race(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **MATCH)
    pages = []
    for name in ("Ann", "Bob"):
        player = await open_page(browser, name, "player", node.http_url)
        await player.page.fill("#name", name)
        await player.page.select_option("#quick-variant", "spider1")
        pages.append(player)
    await pages[0].page.click("#quick-match")
    # alone in the queue, a waiting state shows (looked for before the second player comes:
    # with both queued the match may be made before a look finds it)
    await pages[0].page.wait_for_selector("#match-waiting")
    await pages[1].page.click("#quick-match")
    codes = [await _race_code(p.page) for p in pages]
    assert codes[0] == codes[1]
    await pages[0].page.wait_for_selector("#room-players li:nth-child(2)")
    assert not any(p.errors for p in pages), [p.errors for p in pages]


async def test_quick_match_can_be_cancelled(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **MATCH)
    player = await open_page(browser, "Cy", "player", node.http_url)
    page = player.page
    await page.fill("#name", "Cy")
    await page.click("#quick-match")
    await page.wait_for_selector("#cancel-match")
    await page.click("#cancel-match")
    await page.wait_for_selector("#match-waiting", state="detached")
    assert await page.is_enabled("#quick-match")


async def test_open_races_appear_fill_and_vanish(browser, redis_server, server_node) -> None:
    one = await server_node(redis_server.url)
    two = await server_node(redis_server.url)
    viewer = await open_page(browser, "Viewer", "player", two.http_url)
    page = viewer.page
    await page.wait_for_selector("#open-race-list li.empty")
    async with (
        await Client.connect(one.url, name="host") as host,
        await Client.connect(one.url, name="visitor") as guest,
    ):
        code = await host.create_race(variant="spider1", max_players=2, public=True)
        row = f"#open-race-list li[data-code='{code}']"
        await page.wait_for_selector(f"{row}[data-free='1']")
        assert "host" in await page.inner_text(row)
        await guest.join(code)
        await page.wait_for_selector(f"{row}[data-free='0']")
        await host.ready()
        await guest.ready()
        await page.wait_for_selector(row, state="detached")
    assert not viewer.errors, viewer.errors


async def test_the_page_moves_to_its_race_url(browser, redis_server, server_node) -> None:
    """Race affinity: once the page follows a race, the node sees its websocket on
    ``/ws?race=CODE`` (the lobby's connection closed), and the race goes on there."""
    node = await server_node(redis_server.url)
    player = await open_page(browser, "Dot", "player", node.http_url)
    page = player.page
    await page.fill("#name", "Dot")
    await page.click("#create")
    await page.wait_for_selector("#share-link")
    code = (await page.inner_text("#code")).strip()
    await page.wait_for_function(f"() => window.spiderRace.session.url.endsWith('?race={code}')")
    await page.wait_for_function("() => window.spiderRace.session.welcomed")
    for _ in range(200):  # the lobby's connection closes on the server's side too
        paths = sorted(conn.ws.request.path for conn in node.node.connections)
        if paths == [f"/ws?race={code}"]:
            break
        await asyncio.sleep(0.05)
    assert paths == [f"/ws?race={code}"]
    await page.click("#ready")
    await page.wait_for_selector("#room-players li.ready")
    assert not player.errors, player.errors
