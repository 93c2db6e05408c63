"""Undo costs the same whatever the game's length, and a game has at most
``SPIDER_RACE_MAX_ACTIONS`` actions (a real node, real clients)."""

from __future__ import annotations

from typing import Any

import pytest

from spider_engine import Board
from spider_server.store.keys import UNDO_MARK
from tests.client.client_helpers import FAST
from tests.server.server_helpers import Player, start_race


@pytest.fixture
def pushes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the engine's checked pushes made in this process (the node's included)."""
    count = [0]
    real = Board.push

    def counted(self: Board, move: Any) -> None:
        count[0] += 1
        real(self, move)

    monkeypatch.setattr(Board, "push", counted)
    return count


async def _walk(player: Player, depth: int) -> list[str]:
    """Moves until ``depth`` moves stand (undoing when stuck); the view after each standing
    move, the deal's first."""
    views = [player.view]
    while len(views) <= depth:
        move = player.pick()
        if move is None:
            ack = await player.undo()
            assert ack.type == "ack", ack
            views.pop()
            continue
        ack = await player.step(move)
        views.append(ack.view)
    return views


async def test_an_undo_replays_at_most_a_mark_of_moves_whatever_the_depth(
    redis_server, server_node, pushes
) -> None:
    node = await server_node(redis_server.url, **FAST)
    code, (client,), _ = await start_race(node.url, players=1, variant="spider1", undo=True)
    ack0 = next(m for m in client.received if m.type == "ack" and m.seq == 0)
    player = Player(client, code, ack0.view, seed=7)
    views = await _walk(player, 6 * UNDO_MARK + 5)
    # undo back down across every mark to the deal: each view is the one before, each undo
    # pushes fewer than a mark's moves (a replay of the game would push hundreds)
    most = 0
    for expected in reversed(views[:-1]):
        before = pushes[0]
        ack = await player.undo()
        assert ack.type == "ack", ack
        most = max(most, pushes[0] - before)
        assert ack.view == expected
    assert most < UNDO_MARK
    assert player.seq > 6 * UNDO_MARK  # the game was long
    nothing = await player.undo()
    assert nothing.type == "error" and nothing.error == "undo_not_allowed"
    await client.close()


async def test_a_game_past_max_actions_gets_too_many_actions_and_may_resign(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, max_actions=100, **FAST)
    code, (client,), _ = await start_race(node.url, players=1, variant="spider1", undo=True)
    ack0 = next(m for m in client.received if m.type == "ack" and m.seq == 0)
    player = Player(client, code, ack0.view, seed=3)
    while player.seq < 100:
        move = player.pick()
        ack = await (player.undo() if move is None else player.step(move))
        assert ack.type == "ack", ack
    move = player.pick() or "+"
    refused = await client.move(code, 101, move)
    assert refused.type == "error" and refused.error == "too_many_actions"
    undo = await player.undo()
    assert undo.type == "error" and undo.error == "too_many_actions"
    done = await player.resign()
    assert done.type == "ack" and done.status == "resigned"
    await client.close()
