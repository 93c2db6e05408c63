"""The lobby's *Your races* in Chromium against a real server node: five races created and
abandoned (the page goes back to the lobby without leaving them) are listed with their
state; a sixth is refused with the codes of the five; leaving one from the list lets the
sixth be created. And a bot (its hello said so) is marked as one in the room and the
results."""

from __future__ import annotations

from spider_client import connect_bot
from tests.web.web_helpers import open_page

LIMIT = 5


async def test_your_races_lists_them_and_leaving_one_frees_a_place(
    browser, redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, max_races_per_player=LIMIT)
    player = await open_page(browser, "alice", "player", node.http_url)
    page = player.page
    await page.fill("#name", "Alice")
    codes = []
    for _ in range(LIMIT):
        await page.click("#create")
        await page.wait_for_selector("#room-players")
        codes.append(await page.evaluate("window.spiderRace.app.code"))
        await page.goto(node.http_url + "/")  # abandoned: back to the lobby, not left
        await page.wait_for_selector("#conn[data-state=connected]")
    assert len(set(codes)) == LIMIT

    lines = page.locator("#my-races li")
    await page.wait_for_function(f"document.querySelectorAll('#my-races li').length === {LIMIT}")
    listed = [await lines.nth(i).get_attribute("data-code") for i in range(LIMIT)]
    assert listed == codes[::-1]  # newest first
    for i in range(LIMIT):
        line = lines.nth(i)
        assert await line.get_attribute("data-state") == "open"
        assert "waiting for players" in await line.inner_text()
        assert await line.locator("button.leave-race").count() == 1
    assert f"{LIMIT} of at most {LIMIT}" in await page.inner_text("#my-races-count")
    await player.shot("my-races", full_page=True)

    # a sixth is refused, naming the five
    await page.click("#create")
    error = page.locator("#lobby-error")
    await error.wait_for()
    text = await error.inner_text()
    assert "finish or leave one first" in text
    assert all(code in text for code in codes)

    # leaving the oldest from the list frees its place at once
    await page.click(f'#my-races li[data-code="{codes[0]}"] button.leave-race')
    await page.wait_for_function(
        f"document.querySelectorAll('#my-races li').length === {LIMIT - 1}"
    )
    assert await page.locator(f'#my-races li[data-code="{codes[0]}"]').count() == 0
    race = await node.node.store.races.load_race(codes[0])
    assert race is None  # its only player left: the race is gone
    await page.click("#create")
    await page.wait_for_selector("#room-players")
    sixth = await page.evaluate("window.spiderRace.app.code")
    assert sixth not in codes
    assert player.errors == []


async def test_a_bot_is_marked_in_the_room_and_the_results(
    browser, redis_server, server_node
) -> None:
    node = await server_node(redis_server.url)
    async with await connect_bot(node.url, name="Robo") as robo:
        code = await robo.create_race(variant="spider1", countdown=0)
        player = await open_page(browser, "alice", "player", f"{node.http_url}/r/{code}")
        page = player.page
        await page.fill("#name", "Alice")
        await page.click("#join")
        await page.wait_for_selector("#room-players")
        bot_line = page.locator(f'#room-players li[data-player="{robo.player}"]')
        assert await bot_line.locator(".bot").count() == 1
        assert (await bot_line.locator(".bot").inner_text()).strip() == "bot"  # text, no emoji
        me = await page.evaluate("window.spiderRace.session.player")
        assert await page.locator(f'#room-players li[data-player="{me}"] .bot').count() == 0
        await robo.ready()
        await page.click("#ready")
        await page.wait_for_selector("#board .card")
        await robo.wait_until(lambda c: c.view is not None)
        await robo.resign()
        await page.evaluate("window.spiderRace.session.act('resign')")
        await page.wait_for_selector("#results")
        assert await page.locator(f'#results tr[data-player="{robo.player}"] .bot').count() == 1
        assert await page.locator(f'#results tr[data-player="{me}"] .bot').count() == 0
        assert player.errors == []
