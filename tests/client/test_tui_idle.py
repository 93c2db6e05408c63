"""The terminal warns a player before they are out for making no move, driven by textual's
pilot against a real node whose clock only the test moves
(:class:`~tests.server.clocks.TestClock`; the app's client reads the server's time from the
same clock): the top line counts down in the last seconds before the deadline the server
gave (``idle_at``), a move clears it, and past the deadline the player is out as ``idle``."""

from __future__ import annotations

from typing import Any

import pytest

from spider_race.tui import RaceApp, RaceScreen
from spider_race.tui.progress import IDLE_WARNING
from tests.client.tui_helpers import text_of, until
from tests.server.clocks import TestClock

WARNED = "or you are out"


async def test_the_race_screen_warns_before_the_idle_limit(
    redis_server: Any, server_node: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = TestClock()
    node = await server_node(redis_server.url, clock=clock)
    create = {"variant": "spider1", "countdown": 0, "idle_limit": 30}
    app = RaceApp(url=node.url, name="ada", create=create)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
        client = app.client
        assert client is not None
        monkeypatch.setattr(client, "server_now", clock)  # the server's time, as the node's
        await pilot.press("r")
        await until(lambda: client.view is not None and client.me is not None)
        assert client.me is not None and client.me.idle_at == clock() + 30
        await until(lambda: "clock" in text_of(app, "#top"))
        assert WARNED not in text_of(app, "#top")  # 30 s left: no warning yet

        # within the last seconds: the top line counts down
        clock.move(30 - IDLE_WARNING + 1)
        await until(lambda: f"move within {IDLE_WARNING - 1} s {WARNED}" in text_of(app, "#top"))
        clock.move(3)
        await until(lambda: f"move within {IDLE_WARNING - 4} s {WARNED}" in text_of(app, "#top"))
        assert client.status == "playing"

        # a deal moves the deadline on: the warning goes
        await pilot.press("plus")
        await until(lambda: client.me is not None and client.me.idle_at == clock() + 30)
        await until(lambda: WARNED not in text_of(app, "#top"))

        # the deadline passes without an action: out as idle, told on the top line
        clock.move(30)
        await until(lambda: client.status == "idle", timeout=30)
        await until(lambda: "you: idle" in text_of(app, "#top"))
        assert WARNED not in text_of(app, "#top")
        await until(lambda: "idle" in text_of(app, "#players"))
