"""The terminal UI on the Spiders of other decks: a race on each, in a 120×40 terminal,
driven by textual's pilot against a real server; a move of each game's own kind made by
keys; a screenshot of each board in ``test-artifacts/tui/``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.containers import VerticalScroll
from textual.widgets import Static

from spider_engine import Board, Move
from spider_engine.moves import column_letter
from spider_race.tui import RaceApp, RaceScreen
from spider_race.tui.render import card_name, card_text
from tests.client.client_helpers import FAST

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "tui"
SIZE = (120, 40)

MYRMEX_SEED = "m0"
"""``d1b`` is legal at the start."""
WIZARD_SEED = "w0"
"""Column a's end card may go to the reserve (as any column's)."""
SPARROW_SEED = "s6"
"""The four Winds lie at the ends of columns a, e, h and j at the start: ``xaehj``."""
STARFISH_SEED = "j0"
"""``*a3k``: a Joker may replace column a's third card from the end at the start."""


async def until(condition: Callable[[], bool], *, timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.005)


def text_of(app: RaceApp, selector: str) -> str:
    return str(app.screen.query_one(selector, Static).render())


async def start_race(app: RaceApp, pilot: Any, variant: str, seed: str) -> Board:
    """Wait for the race screen, mark ready, wait for the deal; the full board dealt."""
    await until(lambda: isinstance(app.screen, RaceScreen) and app.client is not None)
    client = app.client
    assert client is not None
    await pilot.press("r")
    await until(lambda: client.view is not None)
    full = Board.deal(variant, seed)
    assert client.view is not None and client.view.text() == full.view_text()
    await pilot.pause()
    return full


async def play_keys(app: RaceApp, pilot: Any, keys: list[str], full: Board, move: str) -> None:
    """Press ``keys``, which should make ``move``; check the view the server sent back."""
    client = app.client
    assert client is not None
    seq = client.seq
    await pilot.press(*keys)
    await until(lambda: client.seq == seq + 1)
    full.push(Move.from_text(move))
    assert client.view is not None and client.view.text() == full.view_text(), move
    await pilot.pause()


def check_layout(app: RaceApp, columns: int, *, reserve: bool = False) -> list[str]:
    """The board shows every column's letter and fits the terminal: no scrolling sideways,
    nothing past its right edge. The board's lines."""
    lines = text_of(app, "#board").splitlines()
    header = lines[0].split()
    letters = [column_letter(i) for i in range(columns)]
    assert header == (letters + ["│", "z"] if reserve else letters)
    pane = app.screen.query_one("#board-pane", VerticalScroll)
    assert pane.max_scroll_x == 0
    assert pane.region.right <= SIZE[0]
    board = app.screen.query_one("#board", Static)
    assert board.region.width >= max(len(line) for line in lines)
    return lines


def screenshot(app: RaceApp, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = Path(app.save_screenshot(filename=f"{name}.svg", path=str(ARTIFACTS)))
    assert path.stat().st_size > 1000
    return path


def face_up(board: Board) -> list[int]:
    return [c for col, down in zip(board.cols, board.down, strict=True) for c in col[down:]]


@pytest.fixture
async def node(redis_server: Any, server_node: Any) -> Any:
    return await server_node(redis_server.url, **FAST)


def new_app(node: Any, variant: str, seed: str) -> RaceApp:
    return RaceApp(
        url=node.url,
        name="ada",
        create={"variant": variant, "seed": seed, "countdown": 0, "time_limit": 600},
    )


async def test_myrmex_shows_both_suits_of_each_decktet_card(node: Any) -> None:
    app = new_app(node, "myrmex", MYRMEX_SEED)
    async with app.run_test(size=SIZE) as pilot:
        full = await start_race(app, pilot, "myrmex", MYRMEX_SEED)
        lines = check_layout(app, 8)
        text = "\n".join(lines)
        # every face-up two-suit card shows both its suits' symbols, beside its rank
        cards = full.variant.cards
        two_suits = [c for c in face_up(full) if len(cards.suits[c]) == 2]
        assert two_suits
        for card in two_suits:
            rank = cards.tokens[card][0]
            symbols = [
                {"m": "☾", "s": "☀", "w": "≈", "l": "❦", "y": "∿", "k": "⌘"}[s]
                for s in cards.suits[card]
            ]
            assert rank + "".join(symbols) in text, card_name(full, card)
        assert "♛" in text  # a Crown
        assert "stock: 4 deals left" in text
        await play_keys(app, pilot, ["d", "b"], full, "d1b")
        await play_keys(app, pilot, ["plus"], full, "+")
        check_layout(app, 8)
        screenshot(app, "myrmex")
        await pilot.press("q")


async def test_wizard_weave_shows_trumps_the_tower_and_the_reserve(node: Any) -> None:
    app = new_app(node, "wizard+weave", WIZARD_SEED)
    async with app.run_test(size=SIZE) as pilot:
        full = await start_race(app, pilot, "wizard+weave", WIZARD_SEED)
        lines = check_layout(app, 13, reserve=True)
        assert "tower: 0/22 trumps gone, next  0" in lines[-1]
        assert "reserve z: empty" in lines[-1]
        # the trumps at the columns' ends show as their numbers, suit cards with symbols
        ends = lines[len(full.cols[0])]
        cards = full.variant.cards
        for i, col in enumerate(full.cols):
            token = cards.tokens[col[-1]]
            cell = ends[4 * i : 4 * i + 3]
            if token.endswith("t"):
                assert cell == token[:-1].rjust(3)
            else:
                assert cell[-1] in "⚚∪◉⚔"
        # a1z by keys: column a's end card goes to the reserve, then z and a column that
        # takes it plays it back
        end = full.cols[0][-1]
        await play_keys(app, pilot, ["a", "z"], full, "a1z")
        lines = check_layout(app, 13, reserve=True)
        assert lines[1].endswith("│ " + _face(full, end))
        assert "reserve z: " + _face(full, end) in lines[-1]
        await pilot.press("question_mark")
        await pilot.pause()
        assert "z  the reserve, to move from or to" in text_of(app, "#help")
        assert "a … m" in text_of(app, "#help")
        screenshot(app, "wizard-weave")
        back = next(m for m in full.legal_moves.texts() if m.startswith("z"))
        await play_keys(app, pilot, ["z", back[-1]], full, back)
        assert "reserve z: empty" in text_of(app, "#board")
        await pilot.press("q")


def _face(board: Board, card: int) -> str:
    return card_text(board, card).plain


async def test_sparrow_shows_tiles_and_takes_a_set_of_winds_off_by_keys(node: Any) -> None:
    app = new_app(node, "sparrow", SPARROW_SEED)
    async with app.run_test(size=SIZE) as pilot:
        full = await start_race(app, pilot, "sparrow", SPARROW_SEED)
        lines = check_layout(app, 12)
        text = "\n".join(lines)
        for wind in ("E→", "S↓", "W←", "N↑"):
            assert wind in text
        tokens = {full.variant.cards.tokens[c] for c in face_up(full)}
        if {"Db", "Dc", "Dm"} & tokens:
            assert any(f"D{s}" in text for s in "‖●※")
        for suit in "‖●※":
            assert suit in text
        await pilot.press("question_mark")
        await pilot.pause()
        assert "x  then four columns: take a set off" in text_of(app, "#help")
        # x and a column, dropped by escape; then x and the four columns in any order: xaehj
        await pilot.press("x", "a")
        assert "move: xa" in text_of(app, "#board")
        await pilot.press("escape")
        assert "move:" not in text_of(app, "#board")
        await play_keys(app, pilot, ["x", "j", "a", "h", "e"], full, "xaehj")
        assert full.foundation == ["w"]
        lines = check_layout(app, 12)
        assert "foundation: ESWN" in "\n".join(lines)
        screenshot(app, "sparrow")
        await pilot.press("q")


async def test_starfish_shows_six_suits_and_a_joker_placed_by_keys(node: Any) -> None:
    app = new_app(node, "starfish", STARFISH_SEED)
    async with app.run_test(size=SIZE) as pilot:
        full = await start_race(app, pilot, "starfish", STARFISH_SEED)
        lines = check_layout(app, 12)
        text = "\n".join(lines)
        assert "★" in text and "Ψ" in text and "troupe: 6 Jokers" in text
        assert "Jk☆" not in text
        await pilot.press("question_mark")
        await pilot.pause()
        assert "*  column, depth, column: a Joker move" in text_of(app, "#help")
        # *, column a, depth 3, column k: a Joker takes the card's place
        await play_keys(app, pilot, ["asterisk", "a", "3", "k"], full, "*a3k")
        lines = check_layout(app, 12)
        text = "\n".join(lines)
        depth_row = len(full.cols[0]) - 3 + 1  # the header is line 0
        assert lines[depth_row][:3] == "Jk☆"
        assert "troupe: 5 Jokers" in text
        screenshot(app, "starfish")
        await pilot.press("q")
