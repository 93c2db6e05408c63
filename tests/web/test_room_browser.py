"""The race room on the page, drawn again while a player presses Ready: the press counts.

The room is drawn again on every event of its race (a player joins, a spectator comes, a
player is ready). A click is a mouse press and its release on the same element: were the
room replaced between them, the release would land on a new Ready button and the click
would be lost (seen on a busy machine: the race never started). Here the other player gets
ready between the press and the release, deterministically: the press, then their ready,
then the release once the room shows it (nothing on the page moves).
"""

from __future__ import annotations

from tests.server.server_helpers import Client
from tests.web.web_helpers import assert_no_leaks, create_on_page, open_page

VARIANT = "spider1"


async def test_ready_pressed_while_the_room_is_drawn_again(
    browser, redis_server, server_node
) -> None:
    node = await server_node(redis_server.url)
    player = await open_page(browser, "racer", "player", node.http_url)
    page = player.page
    code = await create_on_page(player, "Ray", VARIANT)
    other = await Client.connect(node.url, name="Ola")
    try:
        await other.join(code)
        await page.wait_for_selector("#room-players li:nth-child(2)")
        ready = page.locator("#ready")
        assert await ready.inner_text() == "Ready"
        await ready.evaluate("(el) => { el.pressedHere = true; }")  # a mark on this element
        box = await ready.bounding_box()
        assert box is not None
        await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        await page.mouse.down()
        await other.ready(code)
        await page.wait_for_selector("#room-players li.ready")
        # the room was drawn again: the button under the mouse is still the one pressed
        assert await page.evaluate("document.getElementById('ready').pressedHere") is True
        assert await ready.bounding_box() == box
        await page.mouse.up()
        await page.wait_for_selector("#board .card")
    finally:
        await other.close()
    assert player.errors == []
    assert_no_leaks(VARIANT, [player])
