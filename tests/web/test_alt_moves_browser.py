"""The other decks' own moves by drag, in Chromium against a real server node: Starfish's
Joker (a card that is not free dragged to a column, a Joker dragged from the Troupe onto a
card) and Sparrow's sets (a tile of a set dropped on the foundation), each with an illegal drop that
snaps back with the server's reason.

Each seed deals a position where such a move is legal at once (found with the engine:
``Board.deal(variant, seed).legal_moves``). After every drop the page must show the view
the server acked, equal to the engine's view after the same move, with the move counted;
at the end the server's replay of the race holds exactly the moves dragged.
"""

from __future__ import annotations

from typing import Any

from spider_client import Client
from spider_engine import Board, Move
from tests.web.web_helpers import Player, assert_no_leaks, open_page

STARFISH_SEED = "drag-starfish-0"
SPARROW_SEED = "drag-sparrow-51"
"""Its deal has one set to take off at once (``xcdfj``: four Flowers and Seasons); after it,
columns c and d end in a West Wind each, which is no set."""


async def start_race(player: Player, variant: str, seed: str) -> None:
    """Create a one-player race of ``variant`` on ``seed`` from the lobby and start it."""
    page = player.page
    await page.fill("#name", "Dragger")
    await page.select_option("#variant", variant)
    await page.click("details.more summary")
    await page.fill("#seed", seed)
    await page.fill("#countdown", "0")
    await page.click("#create")
    await page.click("#ready")
    await page.wait_for_selector("#board .card")


def movable(board: Board, col: int) -> int:
    column = board.cols[col]
    return board.variant.movable(column, len(column) - board.down[col])


def troupe_pick(board: Board, src: int, depth: int) -> Move | None:
    """Where a Joker dropped from the Troupe on that card sends it (docs/web.md: as a click
    would, one rank higher in its own suit first, then any column, else an empty one)."""
    jokers = [
        m for m in board.legal_moves if m.kind == "joker" and (m.src, m.count) == (src, depth)
    ]
    card = board.cols[src][-depth]
    v = board.variant
    for m in jokers:
        if board.cols[m.dst] and v.follows(board.cols[m.dst][-1], card):
            return m
    onto = [m for m in jokers if board.cols[m.dst]]
    return (onto or jokers or [None])[0]


async def replay_of(node: Any, code: str, name: str) -> list[str]:
    """The server's record of a finished race: the actions of the player named ``name``."""
    checker = await Client.connect(node.url, name="checker")
    try:
        race = (await checker.join(code, role="spectator")).race
    finally:
        await checker.close()
    assert race.state == "finished" and race.replays is not None and race.results
    player = next(r.player for r in race.results if r.name == name)
    return list(race.replays[player])


async def resign(player: Player) -> str:
    """Give up (the race of one ends); the race's code."""
    page = player.page
    code = (await page.inner_text("#code")).strip()
    await page.click("#resign")
    await page.click("#resign")
    await page.wait_for_selector("#results")
    return code


async def test_starfish_joker_moves_by_drag(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    player = await open_page(browser, "starfish", "player", node.http_url, width=1280, height=720)
    page = player.page
    await start_race(player, "starfish", STARFISH_SEED)
    board = Board.deal("starfish", STARFISH_SEED)
    await player.expect_board(board, 0)
    done: list[str] = []

    # -- a card that is not free, dragged to a column: a Joker takes its place -------------------
    card_move = next(
        m for m in board.legal_moves if m.kind == "joker" and m.count > movable(board, m.src)
    )
    await player.drag(card_move.src, card_move.count, card_move.dst, shot="drag-joker-card")
    board.push(card_move)
    done.append(card_move.text())
    await player.expect_board(board, len(done))
    assert await page.get_attribute("#troupe", "data-jokers") == "5"

    # -- an illegal drop of such a card snaps back, with the server's reason ----------------------
    src, depth = next(
        (m.src, m.count)
        for m in board.legal_moves
        if m.kind == "joker" and m.count > movable(board, m.src)
    )
    wrong = next(
        j
        for j in range(len(board.cols))
        if j != src and board.cols[j] and not board.is_legal(Move("joker", src, depth, j))
    )
    await player.drag(src, depth, wrong)
    await page.wait_for_selector("#message.error")
    reason = await page.inner_text("#message")
    assert f"illegal move *{chr(97 + src)}{depth}{chr(97 + wrong)}" in reason, reason
    assert "does not go onto" in reason, reason
    await page.wait_for_selector("#ghost", state="detached")  # snapped back
    await player.expect_board(board, len(done))

    # -- a Joker from the Troupe dropped on a card: the card goes where a click would send it -----
    spot = next(
        (m.src, m.count)
        for m in board.legal_moves
        if m.kind == "joker" and troupe_pick(board, m.src, m.count)
    )
    troupe_move = troupe_pick(board, *spot)
    assert troupe_move is not None
    target = await (await player.card(*spot)).bounding_box()
    await player.drag_to(
        page.locator("#troupe .joker-chip"),
        (target["x"] + target["width"] / 2, target["y"] + 6),
        shot="drag-joker-troupe",
    )
    board.push(troupe_move)
    done.append(troupe_move.text())
    await player.expect_board(board, len(done))
    assert await page.get_attribute("#troupe", "data-jokers") == "4"

    code = await resign(player)
    assert await replay_of(node, code, "Dragger") == [*done, "resign"]
    assert_no_leaks("starfish", [player], secrets=(STARFISH_SEED,))
    assert player.errors == []


async def test_sparrow_set_off_by_drag(browser, redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    player = await open_page(browser, "sparrow", "player", node.http_url, width=1280, height=720)
    page = player.page
    await start_race(player, "sparrow", SPARROW_SEED)
    board = Board.deal("sparrow", SPARROW_SEED)
    await player.expect_board(board, 0)
    sets = [m for m in board.legal_moves if m.kind == "set"]
    assert [m.text() for m in sets] == ["xcdfj"]
    the_set = sets[0]

    # -- a tile of the set dropped on the foundation takes the four tiles off -------------------
    foundation = await page.locator("#foundation").bounding_box()
    drop = (foundation["x"] + foundation["width"] / 2, foundation["y"] + foundation["height"] / 2)
    await player.drag_to(await player.card(the_set.columns[1], 1), drop, shot="drag-sparrow-set")
    board.push(the_set)
    await player.expect_board(board, 1)
    assert await page.inner_text("#runs-count") == "1/18"

    # -- a Wind that is in no set snaps back, with the server's reason ----------------------------
    v = board.variant
    lone = next(j for j, c in enumerate(board.cols) if c and v.cards.tokens[c[-1]] == "Ww")
    await player.drag_to(await player.card(lone, 1), drop)
    await page.wait_for_selector("#message.error")
    reason = await page.inner_text("#message")
    assert "a set is the four different Winds" in reason, reason
    await player.expect_board(board, 1)

    code = await resign(player)
    assert await replay_of(node, code, "Dragger") == [the_set.text(), "resign"]
    assert_no_leaks("sparrow", [player], secrets=(SPARROW_SEED,))
    assert player.errors == []
