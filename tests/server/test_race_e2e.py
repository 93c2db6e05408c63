"""Whole races on one node: several players and spectators, from create to results."""

from __future__ import annotations

import hashlib

from spider_engine import Board, Move
from tests.server.server_helpers import Client, Player, start_race


def _replay(variant: str, seed: str, actions: list[str]) -> Board:
    board = Board.deal(variant, seed)
    for a in actions:
        if a == "undo":
            board.pop()
        elif a != "resign":
            board.push(Move.from_text(a))
    return board


async def test_whole_race_with_players_and_spectators(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, clients, watchers = await start_race(node.url, players=3, spectators=2, variant="spider2")
    players = [Player(c, code, "", seed=i) for i, c in enumerate(clients)]
    # every player's deal view is the same (same seed), and comes as the ack with seq 0
    for pl in players:
        joined = await pl.client.join(code)
        assert joined.seq == 0 and joined.view
        pl.view = joined.view
    # who is there: every player connected, two spectators
    assert joined.race.spectators == 2
    assert [x.connected for x in joined.race.players] == [True, True, True]
    assert len({pl.view for pl in players}) == 1
    for _ in range(6):
        for pl in players:
            await pl.step()
    await players[0].undo()
    await players[1].undo()
    for pl in players:
        await pl.resign()
    finished = []
    for c in clients + watchers:
        finished.append(await c.expect("finished"))
    f = finished[0]
    assert all(x.version == f.version for x in finished)
    assert hashlib.sha256(bytes.fromhex(f.salt) + f.seed.encode()).hexdigest() == f.commitment
    assert len(f.seed) >= 32
    assert {r.player for r in f.results} == {pl.client.player for pl in players}
    for pl in players:
        actions = f.replays[pl.client.player]
        board = _replay("spider2", f.seed, actions)
        assert board.text() == f.boards[pl.client.player]
        assert board.view_text() == pl.view
        result = next(r for r in f.results if r.player == pl.client.player)
        assert result.status == "resigned"
        assert result.moves == len([a for a in actions if a != "resign"])
        assert result.score == board.classic_score(result.moves)
    # every recipient saw the same events in the same order
    # every recipient saw the same events in the same order, each once
    orders = [[(m.version, m.type) for m in c.events()] for c in clients + watchers]
    tail = [o[o.index((f.version - 1, "progress")) :] for o in orders]
    assert all(t == tail[0] for t in tail)
    for order in orders:
        versions = [v for v, _ in order]
        assert versions == sorted(set(versions))
    # the spectators, there from the first player's join on, saw every version
    for order in orders[len(clients) :]:
        assert [v for v, _ in order] == list(range(order[0][0], f.version + 1))
    # a late spectator gets everything in the snapshot
    late = await Client.connect(node.url, name="late")
    j = await late.join(code, role="spectator")
    assert j.race.state == "finished" and j.race.seed == f.seed and j.boards == f.boards


async def test_races_of_other_variants(redis_server, server_node) -> None:
    """Every variant of the spec can be raced, its results checked by replay."""
    node = await server_node(redis_server.url)
    for variant in (
        "spiderette",
        "spider4+keep+relaxed",
        "spider1+open",
        "myrmex",
        "wizard",
        "sparrow",
        "starfish",
    ):
        code, (a,), (w,) = await start_race(node.url, players=1, spectators=1, variant=variant)
        pa = Player(a, code, (await a.join(code)).view, seed=41)
        for _ in range(5):
            if pa.pick() is None:
                break
            await pa.step()
        await pa.resign()
        f = await w.expect("finished")
        board = _replay(variant, f.seed, f.replays[a.player])
        assert board.text() == f.boards[a.player], variant
        assert board.view_text() == pa.view, variant
