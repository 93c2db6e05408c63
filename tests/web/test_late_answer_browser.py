"""An answer that comes after the page stopped waiting for it, in Chromium against a real
node: the page said "the server did not answer" when its request timed out, and the late
answer (here an error) is dropped instead of being said again out of context in the
lobby. The request is held by the test (its frame never reaches the node) and the page's
clock is Playwright's, moved past the request's timeout: no wait."""

from __future__ import annotations

from typing import Any

import msgpack

from tests.web.web_helpers import open_page

CODE = "ZZZZZ"

LISTING = {
    "code": "QQQQQ",
    "variant": "spider1",
    "players": 1,
    "max_players": 4,
    "time_limit": 600,
    "created_at": 0.0,
    "creator_name": "Bob",
    "creator_guest": True,
    "creator_rating": None,
    "creator_provisional": True,
    "rated": False,
    "live_boards": False,
    "humans_only": False,
}


async def test_an_error_after_the_page_gave_up_is_not_said_again(
    browser, redis_server, server_node
) -> None:
    handle = await server_node(redis_server.url)
    player = await open_page(browser, "Ann", "player", handle.http_url)
    page = player.page
    held: list[Any] = []  # (the route, the join's req): never sent to the node

    def route(ws: Any) -> None:
        server = ws.connect_to_server()

        def from_page(message: str | bytes) -> None:
            msg = msgpack.unpackb(message) if isinstance(message, bytes) else {}
            if isinstance(msg, dict) and msg.get("type") == "join" and msg.get("code") == CODE:
                held.append((ws, msg["req"]))
            else:
                server.send(message)

        ws.on_message(from_page)

    await page.route_web_socket(lambda url: True, route)
    await page.reload()  # the page's connection now goes through the route
    await page.wait_for_selector("#conn[data-state=connected]")
    await page.clock.install()
    await page.evaluate(
        "(code) => { window.asked = window.spiderRace.session"
        ".request({ type: 'join', code, role: 'player', since: null })"
        ".then(() => 'answered', (e) => e.code); }",
        CODE,
    )
    await page.wait_for_function("() => window.spiderRace.session.requests.size === 1")
    assert len(held) == 1
    await page.clock.fast_forward(16_000)  # past the request's timeout (15 s)
    assert await page.evaluate("window.asked") == "timeout"
    assert await page.evaluate("window.spiderRace.session.requests.size") == 0

    ws, req = held[0]
    late = {"type": "error", "req": req, "error": "not_found", "message": f"no race {CODE}"}
    ws.send(msgpack.packb(late))
    # then a frame whose effect shows: the page took the late answer before it (one
    # connection: in order)
    ws.send(msgpack.packb({"type": "open_race", "code": LISTING["code"], "race": LISTING}))
    await page.wait_for_selector(f'#open-race-list li[data-code="{LISTING["code"]}"]')
    assert await page.locator("#lobby-error").count() == 0
    assert f"no race {CODE}" not in await page.inner_text("body")
    assert not player.errors, player.errors
