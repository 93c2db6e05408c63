"""Ratings, the rematch and the profile in Chromium against a real server node: two pages
race a rated race, see their rating changes on the end screen and press Rematch into the
same new race; a profile page after three races shows the three."""

from __future__ import annotations

from spider_client import Client
from tests.web.layout import check_screen
from tests.web.web_helpers import PAGE_WAIT_MS, Player, open_page


async def _resign(player: Player) -> None:
    """Deal once (a move: a race nobody played is an abort, unrated), then resign."""
    page = player.page
    await page.wait_for_selector("#board .card", timeout=30_000)
    await page.keyboard.press("s")
    await player.wait_moves(1)
    await page.wait_for_function("() => !window.spiderRace.session.busy()")  # acked
    await page.click("#resign")
    await page.click("#resign")


async def _code(player: Player) -> str:
    return (await player.page.inner_text("#code")).strip()


async def test_a_rated_race_then_a_rematch_with_two_players(
    browser, redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, rematch_wait=30)
    ann = await open_page(browser, "ann", "player", node.http_url)
    bob = await open_page(browser, "bob", "player", node.http_url)
    a, b = ann.page, bob.page
    await a.fill("#name", "Ann")
    await a.check("#rated")
    await a.click("#create")
    await a.wait_for_selector("#ready")
    code = await _code(ann)
    await b.goto(f"{node.http_url}/r/{code}")
    await b.wait_for_selector("#conn[data-state=connected]")
    await b.fill("#name", "Ann")  # the same name: the results tell them apart
    await b.click("#join")
    await b.wait_for_selector("#ready")
    assert "rated" in await a.inner_text("#settings")
    await a.click("#ready")
    await b.click("#ready")
    await _resign(bob)
    await _resign(ann)
    for page in (a, b):
        await page.wait_for_selector("#results")
        await page.wait_for_selector("#rating-changes li", timeout=PAGE_WAIT_MS)
        assert await page.locator("#rating-changes li").count() == 2
        text = await page.inner_text("#rating-changes")
        assert "1500 →" in text and "#" in text  # the shared name with its tag
        names = await page.locator("#results .profile-link").all_inner_texts()
        assert len(names) == 2 and names[0] != names[1]
    await check_screen(ann, "end-rated")

    # -- rematch: both press it, both land in the same new race ----------------------------
    await a.click("#rematch")
    await a.wait_for_selector("#rematch-accepted")
    await b.click("#rematch")
    for player in (ann, bob):
        await player.page.wait_for_function(
            f"window.spiderRace.app.code && window.spiderRace.app.code !== '{code}'",
            timeout=PAGE_WAIT_MS,
        )
    new = await a.evaluate("window.spiderRace.app.code")
    assert new == await b.evaluate("window.spiderRace.app.code")
    await a.wait_for_selector("#board .card", timeout=30_000)
    await b.wait_for_selector("#board .card", timeout=30_000)
    assert ann.errors == [] and bob.errors == []


async def test_the_profile_shows_three_races(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url, rematch_wait=30)
    dana = await open_page(browser, "dana", "player", node.http_url)
    page = dana.page
    await page.fill("#name", "Dana")
    await page.click("#create")
    await page.wait_for_selector("#ready")
    codes = [await _code(dana)]
    async with await Client.connect(node.url, name="Eve") as eve:
        await eve.join(codes[0])
        await eve.ready()
        await page.click("#ready")
        for race in range(3):  # a rematch's players are ready: its countdown runs at once
            await eve.wait_until(lambda c: c.view is not None, timeout=30)
            await eve.resign()
            await _resign(dana)
            await page.wait_for_selector("#results")
            if race < 2:  # the next race: a rematch, Eve through the client library
                await page.click("#rematch")
                codes.append(await eve.rematch(timeout=20))
                await page.wait_for_function(
                    f"window.spiderRace.app.code === '{codes[-1]}'", timeout=PAGE_WAIT_MS
                )
        await page.click("#new-race")
        await page.click("#my-profile")
        await page.wait_for_selector("#profile-races li")
        for _ in range(50):  # the last race's results are written just after its finish
            if await page.locator("#profile-races li").count() == 3:
                break
            await page.click("#profile-back")
            await page.click("#my-profile")
            await page.wait_for_selector("#profile-races li")
        shown = await page.locator("#profile-races li").evaluate_all(
            "items => items.map((li) => li.dataset.code)"
        )
        assert shown == codes[::-1]
        assert await page.inner_text("#profile-variants .played") == "3"
        assert "Dana" in await page.inner_text("#profile-name")
        await check_screen(dana, "profile")
        # the ladder tab: an unrated race puts nobody on it
        await page.click("#ladder-show")
        await page.wait_for_selector("#rating-ladder")
    assert dana.errors == []
