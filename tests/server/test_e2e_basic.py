"""The shortest whole path through one node: hello, create, join, ready, deal, move, ack,
and the progress event to every player and spectator."""

from __future__ import annotations

from spider_engine import Board
from tests.server.server_helpers import start_race


async def test_one_move_reaches_everyone(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, (a, b), (w,) = await start_race(node.url, players=2, spectators=1, seed="1")
    view = Board.deal("spider1", "1").view_text()
    deal = next(m for m in a.received if m.type == "ack")
    assert deal.seq == 0 and deal.view == view and deal.move == ""
    started = await w.expect("started")
    assert started.commitment
    move = next(m for m in Board.from_text(view).legal_moves.texts() if m != "+")
    ack = await a.move(code, 1, move)
    assert ack.type == "ack", ack
    assert ack.seq == 1 and ack.move == move and not ack.duplicate
    expected = Board.deal("spider1", "1")
    expected.push_text(move)
    assert ack.view == expected.view_text()
    for c in (a, b, w):
        progress = await c.expect("progress", lambda m: m.player.player == a.player)
        assert progress.player.moves == 1 and progress.player.status == "playing"
