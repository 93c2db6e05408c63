"""Playing on the page, as a player judges it, at 1280×800 and on a 375×667 phone, in
Chromium against a real server node: the hint shown on the board (a spinner while the
server looks, the cards of the solver's first move and their column lit, in words too; a
second press shows the next suggestion),
only a movable group lifts and only legal columns light while dragging, and every button
off when it cannot act — Undo with nothing to undo, Deal with no deal left — its key sending
nothing and saying why; a refused drop's reason with card faces; a hint to deal, said so and
lit on the stock."""

from __future__ import annotations

import re

import pytest

from spider_engine import Board, Move
from spider_engine.solver import hint, rank_moves
from tests.web.layout import SIZES, check_screen
from tests.web.web_helpers import open_page

VARIANT = "spider4+open"
SEED = "hint-1"
BUDGET = 3000

LIT = """() => ({
  cards: [...document.querySelectorAll('#board .card.hint-card')].map((c) => [+c.dataset.col, +c.dataset.index]),
  columns: [...document.querySelectorAll('#board .column.hint-target')].map((c) => +c.dataset.col),
  targets: [...document.querySelectorAll('#board .column.target')].map((c) => +c.dataset.col),
  over: [...document.querySelectorAll('#board .column.drop-over')].map((c) => +c.dataset.col),
  lifted: document.querySelectorAll('#board .card.lifted').length,
  ghost: !!document.querySelector('#ghost'),
})"""


def movable(board: Board, col: int) -> int:
    """How many cards at column ``col``'s end move together."""
    column = board.cols[col]
    return int(board.variant.movable(column, len(column) - board.down[col]))


async def centre(page, selector: str) -> tuple[float, float]:
    box = await page.locator(selector).bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 40)


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_hint_lift_and_buttons(browser, redis_server, server_node, width, height) -> None:
    node = await server_node(redis_server.url, hint_budget=BUDGET)
    player = await open_page(browser, "hinter", "player", node.http_url, width=width, height=height)
    page = player.page
    await page.fill("#name", "Hana")
    await page.select_option("#variant", "spider4")
    await page.check("input[name=option][value=open]")
    await page.check("#hints")
    await page.click("details.more summary")
    await page.fill("#seed", SEED)
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    full = Board.deal(VARIANT, SEED)
    board = Board.from_text(full.view_text())
    await player.expect_board(board, 0)
    await check_screen(player, "hint-board", ranks=True)

    # -- nothing to undo yet: Undo is off and says why; u sends nothing -------------------------
    assert await page.is_disabled("#undo")
    assert await page.get_attribute("#undo", "title") == "Nothing to undo."
    await page.keyboard.press("u")
    await page.wait_for_selector("#message.error")
    assert "Nothing to undo" in await page.inner_text("#message")
    assert await player.moves() == 0

    # -- a mixed group does not lift: the drag ends at once, saying why ---------------------------
    src = next(c for c in range(len(board.cols)) if len(board.cols[c]) > movable(board, c))
    count = movable(board, src) + 1  # the run at the column's end and the card above it
    dst = next(j for j in range(len(board.cols)) if j != src)
    card = await player.card(src, count)
    box = await card.bounding_box()
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 5)
    await page.mouse.down()
    await page.mouse.move(*(await centre(page, f'#board .column[data-col="{dst}"]')), steps=5)
    lit = await page.evaluate(LIT)
    assert not lit["ghost"] and lit["lifted"] == 0 and lit["targets"] == [], lit
    assert "not free" in await page.inner_text("#message")
    await page.mouse.up()
    assert await player.moves() == 0

    # -- a movable card lifts, and only the columns that take it light up ---------------------------
    columns = range(len(board.cols))
    src, count = next(
        (c, 1)
        for c in columns
        if any(board.is_legal(Move.column_move(c, 1, j)) for j in columns if j != c)
    )
    legal = [j for j in columns if j != src and board.is_legal(Move.column_move(src, 1, j))]
    wrong = next(j for j in columns if j != src and j not in legal)
    card = await player.card(src, count)
    box = await card.bounding_box()
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 5)
    await page.mouse.down()
    await page.mouse.move(*(await centre(page, f'#board .column[data-col="{wrong}"]')), steps=5)
    lit = await page.evaluate(LIT)
    assert lit["ghost"] and sorted(lit["targets"]) == legal and lit["over"] == [], lit
    await page.mouse.move(*(await centre(page, f'#board .column[data-col="{legal[0]}"]')), steps=5)
    assert (await page.evaluate(LIT))["over"] == [legal[0]]
    await player.shot(f"drag-targets-{width}")
    # dropped back on its own column: nothing is sent
    await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 5, steps=5)
    await page.mouse.up()
    await page.wait_for_selector("#ghost", state="detached")
    assert await player.moves() == 0
    # dropped on a column that does not take it: sent, refused, the reason's cards as faces
    await player.drag(src, 1, wrong)
    await page.wait_for_selector("#message.error:has-text('illegal move')")
    reason = await page.inner_text("#message")
    head, tail = reason.split(": ", 1)
    assert head == f"illegal move {Move.column_move(src, 1, wrong).text()}", reason
    tokens = set(board.variant.cards.tokens)
    assert not tokens & set(re.split(r"[\s,.;:()]+", tail)), reason
    assert "does not go onto" in tail, reason
    assert await player.moves() == 0

    # -- the hint: a spinner while the server looks, then the solver's first move lit -----------
    expected = hint(board, full=full, budget=BUDGET)
    assert expected is not None and expected.kind == "move"
    busy = await page.evaluate(
        "() => { document.querySelector('#hint').click(); const b = document.querySelector('#hint');"
        " return b.classList.contains('busy') && b.disabled && getComputedStyle(b.querySelector('.spinner')).display !== 'none'; }"
    )
    assert busy
    await page.wait_for_selector("#board .card.hint-card")
    lit = await page.evaluate(LIT)
    n = len(board.cols[expected.src])
    assert sorted(lit["cards"]) == [[expected.src, i] for i in range(n - expected.count, n)], lit
    assert lit["columns"] == [expected.dst], lit
    words = await page.inner_text("#message")
    letters = f"from {chr(97 + expected.src)} to {chr(97 + expected.dst)}"
    assert letters in words and f"({expected.text()})" in words, words
    assert "T" not in words.split("(")[0], words  # ten reads 10 in words
    await player.shot(f"hint-{width}")
    await page.wait_for_selector('#players .player[data-player] .stat:has-text("1 hint")')
    # a second press on the same position shows the next suggestion (the players' ranking's
    # best other move), lit on the board, without asking the server again
    second = next(m for m in rank_moves(full) if m.text() != expected.text())
    await page.keyboard.press("!")
    await page.wait_for_function(
        "(t) => document.querySelector('#message').innerText.includes(t)", arg=f"({second.text()})"
    )
    words = await page.inner_text("#message")
    assert words.startswith("Or: ") and "2 of 3" in words, words
    lit = await page.evaluate(LIT)
    if second.kind == "move":
        n = len(board.cols[second.src])
        assert sorted(lit["cards"]) == [[second.src, i] for i in range(n - second.count, n)], lit
        assert lit["columns"] == [second.dst], lit
    await page.wait_for_selector('#players .player[data-player] .stat:has-text("1 hint")')
    assert await page.locator('#players .stat:has-text("2 hints")').count() == 0  # not asked

    # -- every deal made: Deal is off, says why, and + deals no more ----------------------------------
    for i in range(board.deals_left()):
        await page.keyboard.press("+")
        await player.wait_moves(i + 1)
    assert (await page.evaluate(LIT))["cards"] == []  # the hint was for another position
    assert await page.is_disabled("#deal")
    assert await page.get_attribute("#deal", "title") == "No deals left."
    assert "blocked" in (await page.get_attribute("#stock", "class") or "")
    await page.keyboard.press("+")
    await page.wait_for_selector("#message.error")
    assert "No deals left" in await page.inner_text("#message")
    await page.click("#stock", force=True)  # aria-disabled: pressed all the same
    assert await player.moves() == 5
    assert await page.is_enabled("#undo")
    assert await page.locator('#players .stat:has-text("5 moves")').count() == 1
    await check_screen(player, "no-deals", ranks=True)
    assert player.errors == []


@pytest.mark.parametrize(("width", "height"), SIZES)
async def test_a_hint_to_deal(browser, redis_server, server_node, width, height) -> None:
    """When the solver's move is a deal, the page says no move helps and lights the stock."""
    variant, seed, budget = "spiderette", "deal-hint-5", 300
    full = Board.deal(variant, seed)
    expected = hint(Board.from_text(full.view_text()), full=full, budget=budget)
    assert expected is not None and expected.text() == "+"
    node = await server_node(redis_server.url, hint_budget=budget)
    player = await open_page(browser, "dealer", "player", node.http_url, width=width, height=height)
    page = player.page
    await page.fill("#name", "Dee")
    await page.select_option("#variant", variant)
    await page.check("#hints")
    await page.click("details.more summary")
    await page.fill("#seed", seed)
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    await page.click("#hint")
    await page.wait_for_selector("#stock.hint-stock")
    assert await page.inner_text("#message") == "No move helps: deal?"
    assert await page.locator("#board .hint-card, #board .hint-target").count() == 0
    await player.shot(f"hint-deal-{width}")
    await page.click("#stock")
    await player.wait_moves(1)
    assert await page.locator("#stock.hint-stock").count() == 0
    assert player.errors == []
