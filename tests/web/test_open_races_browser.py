"""The page's open-races list in Chromium against a real node: each listing says what kind
of race it is (rated, live boards, humans only) and its creator's rating, the longest
waiting race first."""

from __future__ import annotations

from spider_client import Client
from tests.web.web_helpers import open_page


async def test_a_listing_says_what_kind_of_race_it_is(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    viewer = await open_page(browser, "Viewer", "player", node.http_url)
    page = viewer.page
    await page.wait_for_selector("#open-race-list li.empty")
    async with (
        await Client.connect(node.url, name="plain") as plain,
        await Client.connect(node.url, name="fancy") as fancy,
    ):
        first = await plain.create_race(variant="spider1", max_players=2, public=True)
        second = await fancy.create_race(  # rated: on the server's terms (no live boards)
            variant="spider1", public=True, rated=True, humans_only=True, time_limit=600,
            countdown=3,
        )  # fmt: skip
        third = await plain.create_race(variant="spider1", public=True, live_boards=True)
        rows = "#open-race-list li[data-code]"
        await page.wait_for_selector(f"{rows}[data-code='{third}']")
        texts = await page.eval_on_selector_all(rows, "rows => rows.map(r => r.innerText)")
        codes = await page.eval_on_selector_all(rows, "rows => rows.map(r => r.dataset.code)")
        assert codes == [first, second, third]
        assert "rated" not in texts[0] and "live boards" not in texts[0]
        assert "humans only" not in texts[0]
        for kind in ("rated", "humans only", "by fancy (1500?)"):
            assert kind in texts[1], texts[1]
        assert "live boards" in texts[2] and "rated" not in texts[2]
    assert not viewer.errors, viewer.errors
