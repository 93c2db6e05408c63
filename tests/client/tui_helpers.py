"""What the terminal's pilot tests share: waiting on a condition, and a widget's text."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from textual.css.query import NoMatches
from textual.widgets import Static

from spider_race.tui import RaceApp


async def until(condition: Callable[[], bool], *, timeout: float = 20.0) -> None:
    """Wait until ``condition()`` holds (TimeoutError after ``timeout`` seconds)."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


def text_of(app: RaceApp, selector: str) -> str:
    """The text of a widget of the screen shown ("" while it is not composed yet)."""
    try:
        return str(app.screen.query_one(selector, Static).render())
    except NoMatches:
        return ""
