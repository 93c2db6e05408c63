"""A whole path through one node: hello, create, join, ready, deal, move, ack, events."""

from __future__ import annotations

from server_helpers import start_race

from spider_engine import Board


async def test_one_move_reaches_everyone(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, (a, b), (w,) = await start_race(node.url, players=2, spectators=1, seed="1")
    deal = await a.expect("ack") if False else None  # noqa: F841
    view = Board.deal("spider1", "1").view_text()
    started = await w.expect("started")
    assert started.commitment
    legal = Board.from_text(view).legal_moves.texts()
    move = next(m for m in legal if m != "+")
    ack = await a.move(code, 1, move)
    assert ack.type == "ack", ack
    assert ack.seq == 1 and ack.move == move and not ack.duplicate
    for c in (a, b, w):
        prog = await c.expect("progress", lambda m: m.player.player == a.player)
        assert prog.player.moves == 1
    await a.close(), await b.close(), await w.close()
