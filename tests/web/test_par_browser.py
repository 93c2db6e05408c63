"""Par on the page: the end screen shows the deal's par against the winner's moves once the
server has it, and the replay viewer plays the par line."""

from __future__ import annotations

import pytest

from spider_engine import Board, Move
from spider_engine.solver import solve
from tests.web.test_ghost_browser import PLAY
from tests.web.web_helpers import open_page

BUDGET = 20_000
DEALS = [
    pytest.param("spiderette", "par-page-5", id="spiderette"),  # a winning line of 74 moves
    pytest.param("spider1", "par-page-1", id="spider1", marks=pytest.mark.slow),  # of 137
]
"""The deals raced to their par: a short one in ``make test``, a longer in acceptance."""

WATCH_PAR = """() => {
  window.parSeen = [];
  new MutationObserver(() => {
    const par = document.querySelector('#par');
    const last = window.parSeen[window.parSeen.length - 1];
    if (par && (!last || last[0] !== par.dataset.state || last[1] !== par.textContent))
      window.parSeen.push([par.dataset.state, par.textContent]);
  }).observe(document.body, { childList: true, subtree: true, characterData: true });
}"""
"""Keeps each state and text the end screen's par shows, in order."""


@pytest.mark.parametrize(("variant", "seed"), DEALS)
async def test_the_end_screen_shows_par_and_plays_its_line(
    browser, redis_server, server_node, variant, seed
) -> None:
    node = await server_node(redis_server.url, par_budget=BUDGET)
    player = await open_page(browser, "racer", "player", node.http_url)
    page = player.page
    await page.fill("#name", "Pam")
    await page.select_option("#variant", variant)
    await page.click("details.more summary")
    await page.fill("#seed", seed)
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")
    line = solve(Board.deal(variant, seed), budget=BUDGET).line
    assert line
    await page.evaluate(WATCH_PAR)
    await page.evaluate(PLAY, [[m.text() for m in line], 0])
    await page.wait_for_selector("#results", timeout=60_000)
    # the par comes later, in the background: then the end screen shows it
    await page.wait_for_selector("#par[data-state='known']", timeout=90_000)
    # before it, at once, the winner's line was the par "so far"
    seen = await page.evaluate("window.parSeen")
    states = [state for state, _ in seen]
    assert "provisional" in states and states.index("provisional") < states.index("known")
    assert seen[states.index("provisional")][1] == (
        f"par {len(line)} so far · you {len(line)} (±0) · looking for a shorter line…"
    )
    par = await page.evaluate("window.spiderRace.app.race.par")
    moves = par["moves"]
    assert moves == len(par["line"]) and moves <= par["first"] == len(line)
    mine = await page.inner_text("#results tbody tr.me td:nth-child(6)")
    diff = int(mine) - moves
    sign = "±0" if diff == 0 else f"+{diff}" if diff > 0 else f"−{-diff}"
    assert await page.inner_text("#par") == f"par {moves} · you {mine} ({sign})"
    await player.shot("par-end")
    # the replay viewer plays the par line, to its won end
    await page.click("#replay-par")
    assert await page.get_attribute("#replay-par", "aria-selected") == "true"
    assert await page.locator("#replay-moves li").count() == moves
    await page.click("#replay-last")
    board = Board.deal(variant, seed)
    for text in par["line"]:
        board.push(Move.from_text(text))
    assert board.is_won()
    assert await page.get_attribute("#replay-board", "data-position") == board.text()
    await player.shot("par-replay")
    assert player.errors == []
