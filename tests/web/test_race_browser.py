"""Two Chromium pages race each other to the end of a small deal while a third watches,
against two real server nodes sharing a real Redis.

The deal is ``spiderette+open`` with a seed whose winning line the solver found (kept
below, and checked to win by the engine first). Alice plays it with the mouse: a click
where the page's click-to-move picks the line's column, a drag where not, the stock and the
Deal button for deals, an undo, an illegal drop that snaps back with the server's reason, a
reload mid-race, a reload right after a click (before its ack), a dropped connection.
Bob plays at 375×667 with the keyboard alone, and resigns after Alice has won. A spectator watches the progress live and
steps through the replay at the end. Every websocket frame each page received is scanned
for cards that page had not seen (tests/leakscan.py), and the server's own results say who
won.
"""

from __future__ import annotations

import asyncio

import msgpack
import pytest

from spider_client import Client
from spider_engine import Board, Move
from tests.leakscan import messages
from tests.web.web_helpers import PAGE_WAIT_MS, Player, assert_no_leaks, best_destination, open_page

VARIANT = "spiderette+open"
SEED = "browser-race-146"
WINNING_LINE = (
    "b1f b1a e1b a2e d1a d1g g2d g1f b1f g1b e3c + c1g c4a d1e d3b b5c a5b f1a b5a f4b + "
    "a1b a5f e1a a3g e1a e1g a1g c1g c6a + g2e c2g f1c f7d f1a f1c f1e + f1g g4c e4g d7a "
    "d1e g10b e2g g3f g1f g1f g1d g1b d2f d1b b1c b1c e1b e1a b2a c6f f9b a6c c9f"
)
"""A winning line of the deal, found by ``spider_engine.solver.solve``."""
LINE = WINNING_LINE.split()

BOB_FIRST = 5
"""Bob's keyboard moves before Alice plays."""
BOB_LAST = 15
"""Bob's keyboard moves when he resigns, after Alice's win (the whole line, a second time,
would show the page nothing new)."""


def expected_boards() -> list[Board]:
    """The full position before each move of the line, and after the last."""
    from spider_engine.solver import solve

    assert solve(Board.deal(VARIANT, SEED), budget=20_000).verdict == "won"
    board = Board.deal(VARIANT, SEED)
    boards = [board.copy()]
    for move in LINE:
        board.push(Move.from_text(move))
        boards.append(board.copy())
    assert board.is_won()
    return boards


async def check_board(player: Player, board: Board, moves: int, step: str = "") -> None:
    """The page shows exactly the server's view of ``board`` (its own cards included);
    ``step`` names the move in the error when it never shows."""
    from playwright.async_api import TimeoutError as PlaywrightTimeout

    try:
        await player.expect_board(board, moves)
    except PlaywrightTimeout:
        state = await player.page.evaluate(PAGE_STATE)
        raise AssertionError(
            f"{player.name} at {step}: {moves} actions expected (view {board.view_text()}), {state}"
        ) from None


PAGE_STATE = """() => ({ moves: document.querySelector('#board')?.dataset.moves,
    message: document.querySelector('#message')?.textContent,
    connected: window.spiderRace.session.ws?.readyState,
    busy: window.spiderRace.session.busy(), joined: window.spiderRace.session.code,
    seq: window.spiderRace.session.seq, version: window.spiderRace.app.version,
    view: window.spiderRace.app.view })"""
"""What the page shows and holds when a move never shows."""


def clickable(boards: list[Board]) -> list[bool]:
    """For each move of the line, whether a click on its card makes it."""
    out = []
    for board, text in zip(boards, LINE, strict=False):
        m = Move.from_text(text)
        out.append(m.kind == "move" and best_destination(board, m.src, m.count) == m.dst)
    return out


async def alice_moves(alice: Player, boards: list[Board], upto: int = len(LINE)) -> None:
    """Alice plays the line by mouse (its first ``upto`` moves), with every kind of
    interruption on the way (all of them within the first 22 moves)."""
    from playwright.async_api import Error as PlaywrightError

    page = alice.page
    click = clickable(boards)
    reload_click = click.index(True, 8)
    drop_click = click.index(True, reload_click + 1)
    undo_at = next(i for i in range(drop_click + 1, len(LINE)) if LINE[i] != "+")
    illegal_at = next(i for i in range(4, len(LINE)) if LINE[i] != "+")
    actions = 0
    deals = 0
    for i, text in enumerate(LINE[:upto]):
        board = boards[i]
        if text == "+":
            deals += 1
            await page.click("#stock" if deals % 2 else "#deal")
        else:
            m = Move.from_text(text)
            if i == illegal_at:
                # an illegal drop: it snaps back, with the server's reason
                wrong = next(
                    j
                    for j in range(len(board.cols))
                    if j != m.src
                    and board.cols[j]
                    and not board.is_legal(Move.column_move(m.src, m.count, j))
                )
                await alice.drag(m.src, m.count, wrong)
                await page.wait_for_selector("#message.error")
                reason = await page.inner_text("#message")
                assert "does not go onto" in reason, reason
                await check_board(alice, board, actions)
            if i == reload_click:
                # a reload right after a click, before its ack can arrive
                for _ in range(20):  # until a click is taken, then the reload
                    try:
                        if not await page.evaluate(CLICK_THEN_RELOAD, [m.src, m.count]):
                            await asyncio.sleep(0.1)
                            continue
                    except PlaywrightError:
                        pass  # the reload ended the evaluation
                    break
                else:
                    raise AssertionError("the page took none of 20 clicks before the reload")
                await page.wait_for_load_state("load")
            elif i == drop_click:
                # a dropped connection: the click is kept and sent after the reconnect
                await page.evaluate("window.spiderRace.session.ws.close()")
                await alice.click_card(m.src, m.count)
            elif click[i] and i % 5 != 3:
                await alice.click_card(m.src, m.count)
            else:
                await alice.drag(m.src, m.count, m.dst)
        actions += 1
        await check_board(alice, boards[i + 1], actions, f"move {i} {text}")
        if i == 6:
            await alice.shot("board")
        if i == undo_at:
            # undo, then the same move again
            await page.click("#undo")
            actions += 1
            await check_board(alice, boards[i], actions)
            await alice.drag(m.src, m.count, m.dst)
            actions += 1
            await check_board(alice, boards[i + 1], actions)
        if i == 20:
            await page.reload()
            await page.wait_for_selector("#board")
            await check_board(alice, boards[i + 1], actions)


CLICK_THEN_RELOAD = """([src, count]) => {
    const index = window.spiderRace.app.board.cols[src].length - count;
    const el = document.querySelector(
        `#board .column[data-col="${src}"] .card[data-index="${index}"]`);
    const r = el.getBoundingClientRect();
    const o = { bubbles: true, cancelable: true, pointerId: 1, isPrimary: true, button: 0,
                pointerType: 'mouse', clientX: r.left + 8, clientY: r.top + 5 };
    el.dispatchEvent(new PointerEvent('pointerdown', o));
    el.dispatchEvent(new PointerEvent('pointerup', o));
    if (!window.spiderRace.session.busy()) return false;  // the click was not taken
    location.reload();
    return true;
}"""
"""A click on a card and a reload in one task: the page cannot take the ack in between.
The card is looked up in that same task: a handle taken before may name an element that a
render (another player's progress) has replaced since, and a click on it reaches nothing.
It reloads only once the page took the click (its action waits for an ack): else it says
so (false), and the test clicks again."""


SHORT = 22
"""Alice's moves in ``make test``, every interruption among them: then both resign. The
whole race, won, is in ``make acceptance``."""


@pytest.mark.parametrize(
    "won", [pytest.param(False, id="short"), pytest.param(True, id="won", marks=pytest.mark.slow)]
)
async def test_two_pages_race_while_a_third_watches(
    browser, redis_server, server_node, won
) -> None:
    boards = expected_boards()
    # A player's page gets progress that comes within `progress_interval` of the last one
    # held, and sent together (several events in one frame) when the interval is over or
    # before the next other event. Alice and the spectator are on a node whose interval
    # outlasts the race: there, every progress after the first on a connection is held
    # until `finished`, which makes one frame of Alice's last progress and Bob's certain,
    # whatever the machine's pace. Bob is on a second node, which holds progress for half a
    # second: his page sees Alice's progress live.
    node = await server_node(redis_server.url, progress_interval=3600)
    other_node = await server_node(redis_server.url, progress_interval=0.5)
    url = node.http_url

    # -- the lobby: Alice creates the race -------------------------------------------------
    alice = await open_page(browser, "alice", "player", url)
    page = alice.page
    await page.fill("#name", "Alice")
    await page.select_option("#variant", "spiderette")
    await page.check("input[name=option][value=open]")
    await page.click("details.more summary")
    await page.fill("#seed", SEED)
    await page.fill("#countdown", "2")
    await alice.shot("lobby")
    await page.click("#create")
    await page.wait_for_selector("#share-link")
    code = (await page.inner_text("#code")).strip()
    link = await page.get_attribute("#share-link", "href")
    assert link == f"{url}/r/{code}"

    # -- Bob follows the link on a phone-sized screen, by keyboard alone ---------------------
    bob_link = link.replace(url, other_node.http_url)
    bob = await open_page(browser, "bob", "player", bob_link, width=375, height=667)
    await bob.page.wait_for_selector("#join-form")
    await bob.page.keyboard.press("Control+A")
    await bob.page.keyboard.type("Bob")
    await bob.page.keyboard.press("Enter")  # joins the linked race
    await bob.page.wait_for_selector("#ready")

    # -- a spectator follows the same link ----------------------------------------------------
    watcher = await open_page(browser, "watcher", "spectator", link)
    await watcher.page.fill("#name", "Wanda")
    await watcher.page.click("#watch")
    await watcher.page.wait_for_selector("#room-players")

    await page.wait_for_selector("#room-players li:nth-child(2)")
    assert "Bob" in await page.inner_text("#room-players")
    await alice.shot("room")
    await page.click("#ready")
    await page.wait_for_selector("#room-players li.ready")
    assert await bob.page.evaluate("document.activeElement.id") == "ready"
    await bob.page.keyboard.press("Enter")
    await page.wait_for_selector("#countdown")
    for player in (alice, bob):
        await player.page.wait_for_selector("#board .card")
    await watcher.page.wait_for_selector("#watch-grid .player")

    # -- Bob: every column fits at 375×667, five moves by keyboard ------------------------------
    widths = await bob.page.evaluate(
        """() => ({ page: document.documentElement.scrollWidth,
                    right: Math.max(...[...document.querySelectorAll('#board .column')].map((c) => c.getBoundingClientRect().right)),
                    columns: document.querySelectorAll('#board .column').length })"""
    )
    assert widths["columns"] == 7 and widths["right"] <= 375 and widths["page"] <= 375, widths
    for i in range(BOB_FIRST):
        await bob.keys(LINE[i])
        await check_board(bob, boards[i + 1], i + 1)
    await bob.shot("board-phone")

    # -- Alice plays the whole line; the spectator sees her progress live -------------------------
    if won:
        await alice_moves(alice, boards)
        await page.wait_for_selector("#game-over")
        await watcher.page.wait_for_selector("#watch-grid .player[data-status=won]")
        await watcher.shot("watching")
        # Bob's page has Alice's progress too, her last included
        await bob.page.wait_for_selector("#players .player[data-status=won]:not(.me)")
    else:
        await alice_moves(alice, boards, SHORT)
        # Bob's page has Alice's progress live (his node holds it for half a second at most)
        await bob.page.wait_for_function(
            "(n) => +document.querySelector('#players .player:not(.me)')?.dataset.moves >= n",
            arg=SHORT,
        )

    # -- Bob plays on by keyboard, then resigns (twice: the button asks first) -------------------
    for i in range(BOB_FIRST, BOB_LAST):
        await bob.keys(LINE[i])
        await check_board(bob, boards[i + 1], i + 1)
    await bob.page.click("#resign")
    await bob.page.click("#resign")
    if not won:
        await bob.page.wait_for_selector("#game-over")
        await page.click("#resign")
        await page.click("#resign")

    # -- the end: the ranking, by the server's results; the replay --------------------------------
    for player in (alice, bob, watcher):
        await player.page.wait_for_selector("#results", timeout=PAGE_WAIT_MS)
    await alice.shot("end")
    spectator = await Client.connect(node.url, name="checker")
    try:
        race = (await spectator.join(code, role="spectator")).race
    finally:
        await spectator.close()
    assert race.state == "finished" and race.results is not None
    ranking = {r.name: (r.rank, r.status) for r in race.results}
    wpage = watcher.page
    if won:
        assert ranking == {"Alice": (1, "won"), "Bob": (2, "resigned")}
        assert "You won the race" in await page.inner_text("#headline")
        assert "#2" in await bob.page.inner_text("#headline")
        assert "Alice won" in await wpage.inner_text("#headline")
    else:
        assert {name: status for name, (_, status) in ranking.items()} == {
            "Alice": "resigned",
            "Bob": "resigned",
        }
        assert sorted(rank for rank, _ in ranking.values()) == [1, 2]
    assert "matches the commitment" in await wpage.inner_text("#fairness")
    alice_id = next(r.player for r in race.results if r.name == "Alice")
    await wpage.click(f'#replay .tabs button[data-player="{alice_id}"]')
    await wpage.wait_for_selector("#replay-board")
    assert await wpage.get_attribute("#replay-board", "data-position") == boards[0].text()
    for _ in range(3):
        await wpage.click("#replay-next")
    assert await wpage.get_attribute("#replay-board", "data-position") == boards[3].text()
    await wpage.keyboard.press("End")
    assert "ends on the server's final board" in await wpage.inner_text("#replay-check")
    await wpage.keyboard.press("Home")
    await wpage.click("#replay-next")
    await watcher.shot("replay", full_page=True)

    # -- no page ever received a card it had not seen ----------------------------------------------
    assert_no_leaks(VARIANT, [alice, bob, watcher], secrets=(SEED,))
    for player in (alice, bob, watcher):
        types = {m["type"] for f in player.frames for m in messages(f)}
        assert "finished" in types
    # Alice's page took her last progress and Bob's in one frame, in version order, just
    # before `finished` (see the nodes' intervals above); the spectator's page never gets
    # events together
    together = {
        p.name: [msgpack.unpackb(f) for f in p.frames if isinstance(msgpack.unpackb(f), list)]
        for p in (alice, bob, watcher)
    }
    ids = {r.player for r in race.results}
    both = [
        events
        for events in together["alice"]
        if {e["player"]["player"] for e in events if e["type"] == "progress"} == ids
    ]
    assert both, "Alice's page got no frame with both players' progress"
    for events in both:
        versions = [e["version"] for e in events]
        assert versions == sorted(versions) and len(set(versions)) == len(versions), versions
    assert not together["watcher"]
    for player in (alice, bob, watcher):
        assert player.errors == [], (player.name, player.errors)
    await asyncio.sleep(0)
