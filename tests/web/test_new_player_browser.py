"""What a new player ran into, in Chromium against a real server node, each measured in the
page (geometry or words; screenshots only when ``SPIDER_SCREENSHOTS`` asks):

- Resign is armed exactly while its prompt shows: the prompt gone (its four seconds over,
  or another message in its place), a press arms it again; the prompt still showing (its
  timer late: a tab in the background, a busy machine), a press resigns. Time is the
  page's fake clock (``page.clock``), never a wait.
- The keys panel lists every key that deals (``=`` too); a hint that offers other moves
  never says that no move helps; a race everyone resigned names no winner and no place.
- Beside the board at 1280 wide, a short name is whole next to its place; no place and no
  leader before anyone made progress; a leader tied with another is not named alone; a
  bot's mark is text, read with any font (no emoji).
- Every card's corner label (rank and suit) fits its card on a 390×844 phone (touch) and
  at 1280×900, on Wizard's Tower (``10``, ``Pg``, ``Kn`` and a suit) and Sparrow (``W
  wind``, ``D green``, ``D white``): no wider than its box, inside its card, and not under
  the next card.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from spider_client import Client, connect_bot
from spider_engine import Board, Move
from tests.web.web_helpers import Player, blank_page, create_on_page, open_page

PROMPT = "Press Resign again to give up this game."

NODE = {"prefetch_per_race": 0, "rate": 1000.0, "burst": 1000}
"""No hint searched before it is asked for (the hint replies here are the test's own), and
no rate limit on the test's clients."""


async def start_alone(player: Player, variant: str, seed: str, *, hints: bool = False) -> None:
    """Create a race of one from the lobby, ready, and wait for the deal."""
    await create_on_page(player, "Newt", variant, seed=seed, hints=hints)
    await player.page.click("#ready")
    await player.page.wait_for_selector("#board .card")


async def message(page: Any) -> str | None:
    """The message line's text now (None when the screen has none: the game is over)."""
    text = await page.evaluate("() => document.querySelector('#message')?.textContent")
    return None if text is None else str(text).strip()


async def now(page: Any) -> float:
    """The page's clock, in seconds (Playwright's clock takes a number as seconds)."""
    return float(await page.evaluate("Date.now()")) / 1000


async def status(page: Any) -> str | None:
    """This player's status as the board shows it now (None: no board any more)."""
    return await page.evaluate("() => document.querySelector('#board')?.dataset.status ?? null")


# -- Resign: armed while its prompt shows ---------------------------------------------------


async def test_resign_is_armed_while_its_prompt_shows(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **NODE)
    player = await open_page(browser, "newt", "player", node.http_url, width=1280, height=900)
    page = player.page
    await start_alone(player, "spider1", "new-player-1")
    await page.clock.install()
    await page.clock.pause_at(await now(page) + 1)

    # the prompt shows for four seconds, and goes; a press after it arms Resign again
    await page.click("#resign")
    assert await message(page) == PROMPT
    await page.clock.run_for(3_900)
    assert await message(page) == PROMPT
    await page.clock.run_for(200)
    assert await message(page) == ""
    await page.click("#resign")
    assert await message(page) == PROMPT
    assert await status(page) == "playing"

    # another message takes the prompt's place: Resign is not armed any more
    await page.keyboard.press("!")  # a race without hints: the page says so
    assert "without hints" in await message(page)
    await page.click("#resign")
    assert await message(page) == PROMPT, "a press with no prompt showing resigned"
    assert await status(page) == "playing"

    # the prompt still shows though its four seconds are over (its timer late: the wall
    # clock ran on, no timer fired): a press resigns
    await page.clock.set_system_time(await now(page) + 5)
    assert await message(page) == PROMPT
    await page.click("#resign")
    assert await message(page) != PROMPT, "a press with the prompt showing armed Resign again"
    await page.clock.resume()
    await page.wait_for_selector("#results")
    assert player.errors == []


# -- Words: the keys, a hint, the end of a race everyone resigned ---------------------------

HINT_STUB = """(reply) => {
  const s = window.spiderRace.session;
  if (!s.realRequest) {
    s.realRequest = s.request;
    s.request = (msg) => (msg.type === 'hint' ? Promise.resolve(window.hintReply) : s.realRequest(msg));
  }
  window.hintReply = reply;
  window.spiderRace.app.hint = null;
}"""
"""The server's hint reply replaced by ``reply`` (the rest of the session as it is)."""


async def hints_said(page: Any, reply: dict[str, Any], presses: int) -> list[str]:
    """The messages of ``presses`` presses of ``!`` on the same position, the server's
    reply being ``reply``; with whether the stock is lit, after each."""
    await page.evaluate(HINT_STUB, reply)
    said = []
    for _ in range(presses):
        before = await message(page)
        await page.keyboard.press("!")
        await page.wait_for_function(
            """(before) => { const t = document.querySelector('#message').textContent.trim();
                             return t !== before && t !== 'Looking for a move…'; }""",
            arg=before,
        )
        lit = await page.locator("#stock.hint-stock").count()
        said.append(await message(page) + (" [stock lit]" if lit else ""))
    return said


async def test_keys_hint_and_a_race_everyone_resigned(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **NODE)
    player = await open_page(browser, "newt", "player", node.http_url, width=1280, height=900)
    page = player.page
    await start_alone(player, "spider1", "new-player-2", hints=True)

    # -- the keys panel names every key that deals: + = s -----------------------------------------
    await page.keyboard.press("?")
    await page.wait_for_selector("#help")
    keys = await page.evaluate(
        "() => [...document.querySelectorAll('#help dt')].map((dt) => [dt.textContent, dt.nextElementSibling.textContent])"
    )
    deals = [dt for dt, dd in keys if dd.startswith("deal")]
    assert len(deals) == 1 and set(deals[0].replace(",", " ").split()) >= {"+", "=", "s"}, keys
    await page.keyboard.press("Escape")
    await page.wait_for_selector("#help", state="detached")

    # -- a hint with other moves after it never says that no move helps ---------------------------
    board = Board.from_text(await player.view())
    assert board.is_legal(Move.from_text("+"))
    one, two = [m.text() for m in board.legal_moves if m.kind == "move"][:2]
    lost = await hints_said(page, {"move": one, "moves": [one, two], "verdict": "lost"}, 3)
    for text in lost:
        assert "No move helps" not in text, lost
    assert lost[0].startswith("Hint: deal (+) — 1 of 3.") and "[stock lit]" in lost[0], lost
    assert lost[1].startswith("Or: ") and f"({one}) — 2 of 3." in lost[1], lost
    assert lost[2].startswith("Or: ") and f"({two}) — 3 of 3." in lost[2], lost
    assert all("No line wins from here." in text for text in lost), lost
    dealt = await hints_said(page, {"move": "+", "moves": ["+", one], "verdict": "unknown"}, 2)
    assert dealt[0].startswith("Hint: deal (+) — 1 of 2.") and "[stock lit]" in dealt[0], dealt
    assert dealt[1].startswith("Or: ") and f"({one}) — 2 of 2." in dealt[1], dealt
    # the deal alone: no move helps
    alone = await hints_said(page, {"move": "+", "moves": ["+"], "verdict": "lost"}, 1)
    assert alone == ["No move helps: deal? [stock lit]"], alone

    # -- everyone resigned: no winner, and no place claimed ----------------------------------------
    await page.click("#resign")
    await page.click("#resign")
    await page.wait_for_selector("#results")
    headline = await page.inner_text("#headline")
    assert "#1" not in headline and "finished" not in headline, headline
    assert "No winner" in headline and "resigned" in headline, headline
    assert player.errors == []


# -- The players beside the board ------------------------------------------------------------

NAMES_FIT = """() => [...document.querySelectorAll('#players .player')].map((card) => {
  const name = card.querySelector('.name');
  return { text: name.textContent, scroll: name.scrollWidth, client: name.clientWidth,
           place: card.querySelector('.place')?.textContent ?? '' };
})"""


def turning_move(board: Board) -> Move:
    """A move that turns a card up: a column's whole face-up part moved onto another."""
    return next(
        m
        for m in board.legal_moves
        if m.kind == "move"
        and board.down[m.src]
        and m.count == len(board.cols[m.src]) - board.down[m.src]
    )


async def names_fit(page: Any) -> list[dict[str, Any]]:
    cards = await page.evaluate(NAMES_FIT)
    for card in cards:
        assert card["scroll"] <= card["client"], ("name cut", cards)
    return list(cards)


async def test_the_players_beside_the_board(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **NODE)
    bo = await connect_bot(node.url, name="Bo")
    cy = await Client.connect(node.url, name="Cy")
    try:
        code = await bo.create_race(variant="spider1", seed="new-player-3", countdown=0)
        await cy.join(code)
        alice = await open_page(
            browser, "alice", "player", f"{node.http_url}/r/{code}", width=1280, height=900
        )
        page = alice.page
        await page.fill("#name", "Alice")
        await page.click("#join")
        await page.wait_for_selector("#room-players li:nth-child(3)")
        await bo.ready()
        await cy.ready()
        await page.click("#ready")
        await page.wait_for_selector("#board .card")
        await page.wait_for_selector("#players .player:nth-child(4)")  # the heading, then three

        # -- no progress yet: no place, no leader; every name whole ----------------------------------
        assert await page.inner_text("#place") == "", await page.inner_text("#place")
        assert await page.locator("#players .place").count() == 0
        await names_fit(page)

        # -- a bot's mark is text: read with any font ---------------------------------------------
        mark = page.locator(f'#players .player[data-player="{bo.player}"] .bot')
        assert await mark.count() == 1
        text = (await mark.text_content() or "").strip()
        assert re.fullmatch(r"[ -~]+", text) and "bot" in text, text
        assert (await mark.bounding_box())["width"] > 10

        # -- Bo turns a card up: Bo leads; Alice's name whole beside "2nd of 3 (tied)" -----------------
        await bo.wait_until(lambda c: c.view is not None)
        await bo.move(turning_move(bo.view).text())
        await page.wait_for_selector("#place:has-text('leading')")
        assert await page.inner_text("#place") == "You are 2nd of 3 (tied) · leading: Bo"
        cards = await names_fit(page)
        mine = next(c for c in cards if c["text"].startswith("Alice"))
        assert mine["text"] == "Alice (you)" and mine["place"] == "2nd of 3 (tied)", cards

        # -- Cy too: two lead, both named -----------------------------------------------------------------
        await cy.wait_until(lambda c: c.view is not None)
        await cy.move(turning_move(cy.view).text())
        await page.wait_for_selector("#place:has-text('Cy')")
        assert await page.inner_text("#place") == "You are 3rd of 3 · leading: Bo and Cy"
        await names_fit(page)
        await alice.shot("new-player-players")

        # -- everyone resigns: no winner --------------------------------------------------------------
        await bo.resign()
        await cy.resign()
        await page.click("#resign")
        await page.click("#resign")
        await page.wait_for_selector("#results")
        headline = await page.inner_text("#headline")
        assert headline.startswith("No winner") and "everyone resigned" in headline, headline
        assert alice.errors == []
    finally:
        await bo.close()
        await cy.close()


LEVEL_JS = """async (players) => {
  const { standings, placeText, leaders, namesText } = await import('/standings.js');
  const places = standings(players);
  return { texts: players.map((p) => placeText(places, p.player)),
           leaders: namesText(leaders(players).map((p) => p.name)) };
}"""


def entry(player: str, status: str = "playing", *, runs: int = 0, up: int = 0) -> dict:
    return {"player": player, "name": player.upper(), "status": status, "runs": runs,
            "turned_up": up, "time": None, "moves": 0}  # fmt: skip


async def test_places_from_the_first_progress(browser, static_url) -> None:
    """standings.js: no place and no leader while every player is level; leaders tied named
    together."""
    page = await blank_page(browser, static_url)
    level = await page.evaluate(LEVEL_JS, [entry("a"), entry("b"), entry("c")])
    assert level == {"texts": ["", "", ""], "leaders": ""}
    two = await page.evaluate(LEVEL_JS, [entry("a"), entry("b", up=1), entry("c", up=1)])
    assert two == {
        "texts": ["3rd of 3", "1st of 3 (tied)", "1st of 3 (tied)"],
        "leaders": "B and C",
    }
    three = [entry("a", up=2), entry("b", up=2), entry("c", up=2), entry("d", "resigned")]
    assert (await page.evaluate(LEVEL_JS, three))["leaders"] == "A, B and C"


# -- Card labels that fit their cards -----------------------------------------------------------

DESKTOP = (1280, 900)
PHONE = (390, 844)
SPARROW_SEED = "labels-sparrow-0"
"""A deal with a West Wind and the green and white Dragons face up."""
WIZARD_SEED = "labels-wizard-0"
"""Every card is dealt face up on the Tower: 10, Page and Knight of each suit among them."""

LABELS = """() => {
  const out = { cards: 0, cut: [] };
  for (const card of document.querySelectorAll('#board .card.up')) {
    const corner = card.querySelector('.corner');
    out.cards++;
    const c = card.getBoundingClientRect();
    const label = card.dataset.card + ' "' + corner.textContent + '"';
    if (corner.scrollWidth > corner.clientWidth)
      out.cut.push(label + ' scroll ' + corner.scrollWidth + ' > ' + corner.clientWidth);
    for (const part of corner.children) {
      const p = part.getBoundingClientRect();
      if (p.left < c.left - 0.5 || p.right > c.right + 0.5 || p.top < c.top - 0.5 || p.bottom > c.bottom + 0.5)
        out.cut.push(label + ' ' + part.className + ' outside its card');
      // a covered card shows its label in the strip the next card leaves
      const next = card.nextElementSibling;
      if (next && next.classList.contains('card') && p.width && next.getBoundingClientRect().top < p.bottom - 0.5)
        out.cut.push(label + ' ' + part.className + ' under the next card');
    }
  }
  return out;
}"""


@pytest.mark.parametrize(("width", "height"), [PHONE, DESKTOP])
async def test_card_labels_fit_their_cards(
    browser, redis_server, server_node, width, height
) -> None:
    node = await server_node(redis_server.url, **NODE)
    player = await open_page(
        browser,
        "newt",
        "player",
        node.http_url,
        width=width,
        height=height,
        touch=width < 700,
    )
    page = player.page
    for variant, seed, wanted in [
        ("wizard", WIZARD_SEED, ["Tw", "Pc", "Nd", "Ts", "Pw", "Ns"]),
        ("sparrow", SPARROW_SEED, ["Ww", "Db", "Dm", "Dc"]),
    ]:
        await start_alone(player, variant, seed)
        shown = await page.evaluate(
            "() => [...document.querySelectorAll('#board .card.up')].map((c) => c.dataset.card)"
        )
        assert set(wanted) <= set(shown), (variant, shown)
        await player.shot(f"new-player-labels-{variant}-{width}")
        labels = await page.evaluate(LABELS)
        assert labels["cards"] == len(shown)
        assert labels["cut"] == [], (variant, width, labels["cut"])
        await page.click("#resign")
        await page.click("#resign")
        await page.wait_for_selector("#results")
        await page.click("#new-race")
        await page.wait_for_selector("#create")
    assert player.errors == []
