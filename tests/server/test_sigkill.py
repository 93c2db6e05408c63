"""Acceptance: a node dies with SIGKILL mid-race; its player resumes on another node."""

from __future__ import annotations

from spider_engine import Board, Move
from tests.server.server_helpers import Client, Player


async def test_player_resumes_on_another_node_after_sigkill(
    redis_server, server_node, server_process
) -> None:
    node1 = await server_process(redis_server.url)
    node2 = await server_node(redis_server.url)
    a = await Client.connect(node1.url, name="alice")
    code = (await a.create(variant="spider2", countdown=0, time_limit=600)).race.code
    b = await Client.connect(node2.url, name="bob")
    await b.join(code)
    w = await Client.connect(node2.url, name="watcher")
    await w.join(code, role="spectator")
    await a.ready(code)
    await b.ready(code)
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=21)
    pb = Player(b, code, (await b.expect("ack", lambda m: m.seq == 0)).view, seed=22)
    for _ in range(10):
        await pa.step()
    assert pa.seq == 10
    last_view = pa.view
    since = max(m.version for m in a.events())
    node1.kill()
    assert await a.closed_with() == 1006  # no close frame: the process is gone
    # B and the spectator, on node 2, carry on meanwhile
    await pb.step()
    # A comes back on node 2 with its token
    a2 = await Client.connect(node2.url, token=a.token, name=None)
    assert a2.player == a.player
    joined = await a2.join(code, since=since)
    assert joined.seq == 10 and joined.view == last_view
    assert [e["player"]["player"] for e in joined.events if e["type"] == "progress"][-1] == b.player
    pa2 = Player(a2, code, joined.view, seed=23)
    pa2.seq = joined.seq
    for _ in range(3):
        await pa2.step()
        await pb.step()
    await pa2.resign()
    await pb.resign()
    finished = [await c.expect("finished") for c in (a2, b, w)]
    assert len({f.version for f in finished}) == 1
    f = finished[0]
    results = {r.player: r for r in f.results}
    assert results[a.player].moves == 13 and results[b.player].moves == 4
    assert {r.rank for r in f.results} <= {1, 2}
    # the replay of A's actions (its 10 acked before the crash among them) gives its final board
    actions = f.replays[a.player]
    assert actions[:10] == [ack.move for ack in pa.acks]
    board = Board.deal("spider2", f.seed)
    for action in actions:
        if action != "resign":
            board.push(Move.from_text(action))
    assert board.text() == f.boards[a.player]
