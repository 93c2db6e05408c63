"""Helpers of the browser tests: pages with their websocket frames recorded, the page's
board read back from the DOM, moves made by click, drag or keys, screenshots, and every
frame a page received scanned for cards it had not seen."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spider_engine import Board, Move
from tests.leakscan import LeakScanner

__all__ = [
    "ARTIFACTS",
    "STATIC",
    "Player",
    "assert_no_leaks",
    "best_destination",
    "blank_page",
    "open_page",
    "screenshot_folder",
]

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "web"
STATIC = ROOT / "server" / "spider_server" / "static"
PAGE_WAIT_MS = 60_000
"""How long a page's wait for a state may take (Playwright's own default is 30 s): the
bound for a busy machine, where a reconnect and its catching up have taken over 15 s."""

DOM_TABLEAU = """() => [...document.querySelectorAll('#board .column')].map((c) => {
  const cards = [...c.querySelectorAll('.card:not(.slot-empty)')];
  const down = cards.filter((x) => x.classList.contains('down')).length;
  return (down ? '*' + down : '') + '|' + cards.filter((x) => x.classList.contains('up')).map((x) => x.dataset.card).join('');
}).join('/')"""
"""The tableau field of the position the page shows, read from its cards."""
SHOWN = f"""() => {{
  const board = document.querySelector('#board');
  return {{ moves: board?.dataset.moves, view: board?.dataset.view, tableau: ({DOM_TABLEAU})() }};
}}"""
"""The board's move count and view, and its tableau read from its cards, in one look."""
SETTLED = """(n) => {
  const s = window.spiderRace?.session, board = document.querySelector('#board');
  return Boolean(s && s.code && s.code === window.spiderRace.app.code && !s.busy()
                 && board && +board.dataset.moves >= n);
}"""
"""In one look: the page has joined its race as a player (its kept actions are read then:
before, a page just reloaded holds none), none waits for its ack, and the board shows at
least ``n`` actions."""


BLANK = "<!doctype html><meta charset=utf-8><title>modules</title>"


async def blank_page(browser: Any, url: str) -> Any:
    """A page of ``url``'s origin (the ``static_url`` fixture's) with nothing in it: the
    static folder's modules are imported from it by ``page.evaluate``."""
    page = await browser.new_page()
    await page.route(
        "**/blank.html", lambda route: route.fulfill(body=BLANK, content_type="text/html")
    )
    await page.goto(url + "/blank.html")
    return page


def best_destination(board: Board, src: int, count: int) -> int | None:
    """Where a click sends ``count`` cards of column ``src`` (docs/web.md): a column ending
    one rank higher in the moving card's suit first, then any column that takes it, else
    the first empty column."""
    v = board.variant
    card = board.cols[src][-count]
    legal = [
        j
        for j in range(len(board.cols))
        if j != src and board.is_legal(Move.column_move(src, count, j))
    ]
    for j in legal:
        if board.cols[j] and v.follows(board.cols[j][-1], card):
            return j
    for j in legal:
        if board.cols[j]:
            return j
    return legal[0] if legal else None


def screenshot_folder() -> Path | None:
    """Where the tests save screenshots: the folder ``SPIDER_SCREENSHOTS`` names
    (``1``: ``test-artifacts/web/``), or None when it is unset or empty."""
    value = os.environ.get("SPIDER_SCREENSHOTS", "")
    if not value:
        return None
    return ARTIFACTS if value == "1" else Path(value)


@dataclass
class Player:
    """One browser page (its own context: its own storage, so its own player)."""

    name: str
    role: str
    page: Any
    frames: list[bytes] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    async def moves(self) -> int:
        return int(await self.page.get_attribute("#board", "data-moves") or 0)

    async def view(self) -> str:
        return str(await self.page.get_attribute("#board", "data-view"))

    async def dom_tableau(self) -> str:
        return str(await self.page.evaluate(DOM_TABLEAU))

    async def wait_moves(self, n: int, timeout: float = PAGE_WAIT_MS) -> None:
        await self.page.wait_for_function(
            "(n) => { const b = document.querySelector('#board'); return b && +b.dataset.moves >= n; }",
            arg=n,
            timeout=timeout,
        )

    async def card(self, src: int, count: int) -> Any:
        """The locator of the card ``count`` cards from the end of column ``src``."""
        index = await self.page.evaluate(
            "([s, c]) => window.spiderRace.app.board.cols[s].length - c", [src, count]
        )
        return self.page.locator(f'#board .column[data-col="{src}"] .card[data-index="{index}"]')

    async def click_card(self, src: int, count: int) -> None:
        # the top strip of a card is what a later card leaves visible
        await (await self.card(src, count)).click(position={"x": 8, "y": 5})

    async def drag(self, src: int, count: int, dst: int, *, shot: str | None = None) -> None:
        """Drag the card ``count`` cards from the end of column ``src`` (with the cards on
        it) to column ``dst``; ``shot`` saves a screenshot before the drop."""
        target = await self.page.locator(f'#board .column[data-col="{dst}"]').bounding_box()
        await self.drag_to(
            await self.card(src, count),
            (target["x"] + target["width"] / 2, target["y"] + 40),
            shot=shot,
        )

    async def drag_to(
        self, source: Any, point: tuple[float, float], *, shot: str | None = None
    ) -> None:
        """Press on the top strip of ``source`` (a locator), move to ``point`` and release
        there; ``shot`` saves a screenshot while the drag is held, before the drop."""
        box = await source.bounding_box()
        mouse = self.page.mouse
        await mouse.move(box["x"] + box["width"] / 2, box["y"] + min(5, box["height"] / 2))
        await mouse.down()
        await mouse.move(*point, steps=5)
        if shot:
            await self.shot(shot)
        await mouse.up()

    async def expect_board(self, board: Board, moves: int) -> None:
        """The page shows exactly the server's view of ``board`` after ``moves`` actions:
        the view the server acked, and the cards drawn, with no action of the page's still
        waiting for its ack (after a reload the page may show the server's view from its
        join while the action it kept is resent: until its ack it takes no other)."""
        await self.page.wait_for_function(SETTLED, arg=moves, timeout=PAGE_WAIT_MS)
        shown = await self.page.evaluate(SHOWN)  # one look: the same frame for all three
        view = board.view_text()
        assert int(shown["moves"] or 0) == moves
        assert shown["view"] == view
        assert shown["tableau"] == view.split(" ")[1]

    async def keys(self, move: str) -> None:
        """A move typed: ``+``, or the source column's letter, the count, the destination's
        letter."""
        if move == "+":
            await self.page.keyboard.press("+")
            return
        m = Move.from_text(move)
        await self.page.keyboard.press(chr(97 + m.src))
        for digit in str(m.count):
            await self.page.keyboard.press(digit)
        await self.page.keyboard.press(chr(97 + m.dst))

    async def shot(self, name: str, *, full_page: bool = False) -> Path | None:
        """A screenshot ``name``.png in the folder ``SPIDER_SCREENSHOTS`` names (``1``:
        ``test-artifacts/web/``); none without it."""
        folder = screenshot_folder()
        if folder is None:
            return None
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{name}.png"
        await asyncio.sleep(0.15)  # let the last frame paint
        await self.page.screenshot(path=str(path), full_page=full_page)
        return path


async def open_page(
    browser: Any,
    name: str,
    role: str,
    url: str,
    *,
    width: int = 1280,
    height: int = 800,
    touch: bool = False,
) -> Player:
    """A new context and page at ``url`` whose received websocket frames are recorded;
    ``touch``: a phone's (a touch screen, and a mobile browser's viewport)."""
    context = await browser.new_context(
        viewport={"width": width, "height": height}, has_touch=touch, is_mobile=touch
    )
    context.set_default_timeout(PAGE_WAIT_MS)
    page = await context.new_page()
    player = Player(name, role, page)

    def on_socket(ws: Any) -> None:
        ws.on(
            "framereceived",
            lambda payload: player.frames.append(
                payload if isinstance(payload, bytes) else payload.encode()
            ),
        )

    page.on("websocket", on_socket)
    page.on("pageerror", lambda error: player.errors.append(str(error)))
    await page.goto(url)
    await page.wait_for_selector("#conn[data-state=connected]")
    return player


async def create_on_page(
    player: Player,
    name: str,
    variant: str,
    *,
    countdown: int = 0,
    seed: str | None = None,
    hints: bool = False,
) -> str:
    """The lobby on ``player``'s page: ``name`` creates a race of ``variant`` with the
    countdown given (and ``seed``, and hints); the new race's code, once the room shows its
    Ready button."""
    page = player.page
    await page.fill("#name", name)
    await page.select_option("#variant", variant)
    if hints:
        await page.check("#hints")
    if not await page.is_visible("#countdown"):
        await page.click("details.more summary")
    if seed is not None:
        await page.fill("#seed", seed)
    await page.fill("#countdown", str(countdown))
    await page.click("#create")
    await page.wait_for_selector("#ready")
    return str(await page.inner_text("#code")).strip()


def assert_no_leaks(
    variant: str,
    players: list[Player],
    *,
    secrets: tuple[str, ...] = (),
    kept: tuple[str, ...] = (),
) -> None:
    """No page received a card it had not seen (tests/leakscan.py), nor a secret before the
    finish (``secrets``), nor ever (``kept``: a daily deal's seed stays secret all day)."""
    scanner = LeakScanner(variant, secrets=secrets + kept)
    for player in players:
        assert player.frames, player.name
        scanner.feed_all(player.name, player.role, player.frames)
        for frame in player.frames:
            for secret in kept:
                assert secret.encode() not in frame, (player.name, secret)
    assert scanner.leaks == [], scanner.leaks
