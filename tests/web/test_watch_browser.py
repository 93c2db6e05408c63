"""Spectating with live boards, and the other decks' boards, in Chromium against a real
server node."""

from __future__ import annotations

import dataclasses

import pytest

from spider_client import Client
from spider_client.protocol import CreateRace
from spider_engine import Board, find_variant
from tests.web.web_helpers import assert_no_leaks, best_destination, open_page

DOM_TABLEAU_OF = """(el) => [...el.querySelectorAll('.column')].map((c) => {
  const cards = [...c.querySelectorAll('.card:not(.slot-empty)')];
  const down = cards.filter((x) => x.classList.contains('down')).length;
  return (down ? '*' + down : '') + '|' + cards.filter((x) => x.classList.contains('up')).map((x) => x.dataset.card).join('');
}).join('/')"""


async def test_a_spectator_sees_live_boards(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    ada = await Client.connect(node.url, name="Ada")
    bo = await Client.connect(node.url, name="Bo")
    try:
        code = await ada.create_race(
            variant="spider4", seed="live-1", live_boards=True, countdown=0
        )
        await bo.join(code)
        watcher = await open_page(browser, "watcher", "spectator", f"{node.http_url}/r/{code}")
        await watcher.page.fill("#name", "Wanda")
        await watcher.page.click("#watch")
        await watcher.page.wait_for_selector("#room-players li:nth-child(2)")
        await ada.ready()
        await bo.ready()
        for client in (ada, bo):
            await client.wait_until(lambda c: c.view is not None, timeout=10)
        move = next(m for m in ada.view.legal_moves.texts() if m != "+")
        ack = await ada.move(move)
        board = watcher.page.locator(f'.board.mini[data-player="{ada.player}"]')
        await watcher.page.wait_for_selector(
            f'.board.mini[data-player="{ada.player}"][data-view="{ack.view}"]'
        )
        assert await board.evaluate(DOM_TABLEAU_OF) == ack.view.split(" ")[1]
        await watcher.page.wait_for_selector(
            f'#watch-grid .player[data-player="{ada.player}"][data-moves="1"]'
        )
        bo_view = bo.view.text()
        bo_board = watcher.page.locator(f'.board.mini[data-player="{bo.player}"]')
        assert await bo_board.evaluate(DOM_TABLEAU_OF) == bo_view.split(" ")[1]
        await watcher.shot("watching-live")
        assert_no_leaks("spider4", [watcher])
        assert watcher.errors == []
    finally:
        await ada.close()
        await bo.close()


HAS_NEWER_OPTIONS = {f.name for f in dataclasses.fields(CreateRace)} >= {"hints", "winnable"}


@pytest.mark.parametrize(
    ("base", "options", "seed"),
    [
        ("myrmex", [], "decks-1"),
        ("wizard", ["weave"], "decks-2"),
        ("sparrow", [], "decks-3"),
        ("starfish", [], "decks-4"),
    ],
)
async def test_the_other_decks(browser, redis_server, server_node, base, options, seed) -> None:
    """Each deck's board fits 1280×720 with every card labelled, and a click moves a card."""
    node = await server_node(redis_server.url)
    player = await open_page(browser, base, "player", node.http_url, width=1280, height=720)
    page = player.page
    await page.fill("#name", "Deckhand")
    await page.select_option("#variant", base)
    for option in options:
        await page.check(f"input[name=option][value={option}]")
    await page.check("#hints")
    await page.click("details.more summary")
    await page.fill("#seed", seed)
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.wait_for_selector("#ready")
    notice = await page.locator(".notice").count()
    assert notice == (0 if HAS_NEWER_OPTIONS else 1)
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    assert await page.locator("#hint").count() == (1 if HAS_NEWER_OPTIONS else 0)
    view = await player.view()
    variant = find_variant("+".join([base, *options]))
    assert view.split(" ")[0] == variant.id
    layout = await page.evaluate(
        """() => ({ page: document.documentElement.scrollWidth,
                    right: Math.max(...[...document.querySelectorAll('#board .column')].map((c) => c.getBoundingClientRect().right)),
                    columns: document.querySelectorAll('#board .column').length,
                    unlabelled: [...document.querySelectorAll('#board .card.up')].filter((c) => !c.querySelector('.corner').textContent.trim() || !c.getAttribute('aria-label')).length })"""
    )
    assert layout["columns"] == variant.columns
    assert layout["right"] <= 1280 and layout["page"] <= 1280, layout
    assert layout["unlabelled"] == 0
    assert await player.dom_tableau() == view.split(" ")[1]
    board = Board.from_text(view)
    click = next(
        m
        for m in board.legal_moves
        if m.kind == "move"
        and m.dst < len(board.cols)
        and m.src < len(board.cols)
        and best_destination(board, m.src, m.count) == m.dst
    )
    await player.click_card(click.src, click.count)
    await player.wait_moves(1)
    assert await player.dom_tableau() == (await player.view()).split(" ")[1]
    await player.shot(f"deck-{base}")
    assert_no_leaks(variant.id, [player], secrets=(seed,))
    assert player.errors == []


async def test_resigning_and_a_race_without_undo(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    player = await open_page(browser, "quitter", "player", node.http_url)
    page = player.page
    await page.fill("#name", "Quinn")
    await page.select_option("#variant", "spider1")
    await page.uncheck("#undo")
    await page.click("details.more summary")
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.wait_for_selector("#ready")
    code = (await page.inner_text("#code")).strip()
    rival = await Client.connect(node.url, name="Rita")
    try:
        await rival.join(code)
        await page.wait_for_selector("#room-players li:nth-child(2)")
        await rival.ready()
        await page.keyboard.press("Enter")  # the Ready button has the focus
        await page.wait_for_selector("#board .card")
        assert await page.is_disabled("#undo")
        await page.keyboard.press("u")
        await page.wait_for_selector("#message.error")
        assert "no undo" in await page.inner_text("#message")
        await page.click("#resign")
        assert await player.moves() == 0  # the first press only asks
        await page.click("#resign")
        await page.wait_for_selector("#game-over")
        assert "resigned" in await page.inner_text("#game-over")
        await rival.wait_until(lambda c: c.view is not None, timeout=10)
        await rival.resign()
        await page.wait_for_selector("#results")
        statuses = await page.eval_on_selector_all(
            "#results tbody tr", "(rows) => rows.map((r) => r.dataset.status)"
        )
        assert statuses == ["resigned", "resigned"]
        assert_no_leaks("spider1", [player])
        assert player.errors == []
    finally:
        await rival.close()
