"""Reconnecting with a token and ``since``; resent actions are applied once."""

from __future__ import annotations

from redis import Redis

from spider_client import protocol as p
from tests.server.server_helpers import Client, Player, start_race


async def test_reconnect_with_token_and_since_catches_up(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, (a, b), (w,) = await start_race(node.url, players=2, spectators=1)
    pa = Player(a, code, (await a.join(code)).view, seed=3)
    pb = Player(b, code, (await b.join(code)).view, seed=4)
    for _ in range(3):
        await pa.step()
    await a.drain(0.2)
    seen = max(m.version for m in a.events())
    token, last_view, last_seq = a.token, pa.view, pa.seq
    await a.close()
    for _ in range(2):
        await pb.step()
    again = await Client.connect(node.url, token=token, name=None)
    assert again.player == a.player and again.welcome.name == "player1"
    joined = await again.join(code, since=seen)
    assert joined.view == last_view and joined.seq == last_seq
    # b's two moves; and a was away (the close) and is back (the rejoin), for everyone
    progress = [e for e in joined.events if e["type"] == "progress"]
    presence = [(e["type"], e["player"]) for e in joined.events if e["type"] != "progress"]
    assert len(progress) == 2 and presence == [("away", a.player), ("back", a.player)]
    assert [e["version"] for e in joined.events] == list(range(seen + 1, joined.race.version + 1))
    assert all(e["player"]["player"] == b.player for e in progress)
    # and it goes on live from there
    pa = Player(again, code, joined.view, seed=5)
    pa.seq = joined.seq
    await pb.step()
    event = await again.expect("progress", lambda m: m.player.player == b.player)
    assert event.version == joined.race.version + 1
    # a spectator rejoining with a since that the stream still holds gets the gap filled
    await w.drain(0.2)
    wseen = max(m.version for m in w.events())
    j = await w.join(code, role="spectator", since=wseen - 2)
    assert j.race.version == wseen
    assert [e["version"] for e in j.events] == [wseen - 1, wseen]


async def test_resent_action_is_applied_once(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, (a,), _ = await start_race(node.url, players=1)
    pa = Player(a, code, (await a.join(code)).view, seed=7)
    acks = [await pa.step() for _ in range(4)]
    r = Redis.from_url(redis_server.url)
    game_key = f"{{race:{code}}}:game:{a.player}"
    assert int(r.hget(game_key, "seq")) == 4
    version = int(r.hget(f"{{race:{code}}}:meta", "version"))
    # resend the last and an older action, as a client that lost the acks would
    again = await Client.connect(node.url, token=a.token)
    await again.join(code)
    for old in (acks[3], acks[1]):
        await again.send(p.MoveAction(code=code, seq=old.seq, move=old.move))
        dup = await again.expect(("ack", "error"), lambda m, s=old.seq: m.seq == s)
        assert dup.type == "ack" and dup.duplicate
        assert (dup.view, dup.move, dup.moves, dup.score) == (
            old.view,
            old.move,
            old.moves,
            old.score,
        )
    assert int(r.hget(game_key, "seq")) == 4
    assert int(r.hget(f"{{race:{code}}}:meta", "version")) == version
    assert r.llen(f"{{race:{code}}}:actions:{a.player}") == 4
    # a seq from the future is refused
    await again.send(p.MoveAction(code=code, seq=9, move=pa.pick() or "+"))
    err = await again.expect("error", lambda m: m.seq == 9)
    assert err.error == "out_of_order"
    r.close()
