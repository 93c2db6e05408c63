"""Bad input of every kind gets an error with a code and changes nothing."""

from __future__ import annotations

import asyncio

import msgpack
import pytest
from redis import Redis

from spider_client import protocol as p
from tests.server.server_helpers import Client, Player, start_race


def _state(r: Redis, code: str, player: str) -> tuple[object, ...]:
    meta = f"{{race:{code}}}:meta"
    return (
        r.hget(meta, "version"),
        r.hget(meta, "state"),
        r.hgetall(f"{{race:{code}}}:game:{player}"),
        r.lrange(f"{{race:{code}}}:actions:{player}", 0, -1),
        r.xlen(f"{{race:{code}}}:events"),
    )


@pytest.fixture
async def running(redis_server, server_node):
    node = await server_node(redis_server.url)
    code, (a, b), (w,) = await start_race(node.url, players=2, spectators=1, undo=False)
    pa = Player(a, code, (await a.join(code)).view, seed=1)
    await pa.step()
    r = Redis.from_url(redis_server.url)
    yield node, code, pa, b, w, r
    r.close()


async def _error(client: Client, data: bytes | str) -> p.Error:
    await client.send_raw(data)
    return await client.expect("error")  # type: ignore[no-any-return]


async def test_malformed_frames(running) -> None:
    node, code, pa, b, w, r = running
    a = pa.client
    before = _state(r, code, a.player)
    cases = [
        (b"\xc1", "bad_frame"),  # never used in msgpack
        (b"\x92\x01\x02", "bad_frame"),  # an array, not a map
        (msgpack.packb({"type": "teleport"}), "bad_frame"),
        (msgpack.packb({"no": "type"}), "bad_frame"),
        (msgpack.packb({1: 2}), "bad_frame"),  # not a map with text keys
        ("a text frame", "bad_frame"),
        (msgpack.packb({"type": "move", "code": code, "seq": "2", "move": "a1b"}), "invalid"),
        (msgpack.packb({"type": "move", "code": code, "seq": 2.0, "move": "a1b"}), "invalid"),
        (msgpack.packb({"type": "move", "code": code, "seq": True, "move": "a1b"}), "invalid"),
        (msgpack.packb({"type": "move", "code": code, "seq": 2}), "invalid"),
        (msgpack.packb({"type": "move", "code": 5, "seq": 2, "move": "a1b"}), "invalid"),
        (msgpack.packb({"type": "join", "req": 7, "code": code, "role": "referee"}), "invalid"),
        (msgpack.packb({"type": "ready", "req": 8, "code": code, "ready": 1}), "invalid"),
        (msgpack.packb({"type": "create_race", "req": 9, "undo": "yes"}), "invalid"),
        (msgpack.packb({"type": "move", "code": code, "seq": 0, "move": "a1b"}), "invalid"),
    ]
    for data, code_expected in cases:
        err = await _error(a, data)
        assert err.error == code_expected, (data, err)
    # the request id is kept where it could be read
    await a.send_map({"type": "join", "req": 7, "code": code, "role": "referee"})
    assert (await a.expect("error")).req == 7
    assert _state(r, code, a.player) == before
    # still served
    assert (await pa.step()).type == "ack"


async def test_bad_requests(running) -> None:
    node, code, pa, b, w, r = running
    a = pa.client
    before = _state(r, code, a.player)
    # a move that is not in the notation, and one that is not legal
    err = await a.move(code, 2, "zz9")
    assert err.type == "error" and err.error == "malformed_move"
    from spider_engine import Board

    board = Board.from_text(pa.view)
    illegal = next(
        f"{s}1{d}"
        for s in "abcdefghij"
        for d in "abcdefghij"
        if s != d and f"{s}1{d}" not in board.legal_moves.texts()
    )
    err = await a.move(code, 2, illegal)
    assert err.type == "error" and err.error == "illegal_move" and err.seq == 2 and err.race == code
    # undo in a race without undo
    await a.send(p.Undo(code=code, seq=2))
    assert (await a.expect("error", lambda m: m.seq == 2)).error == "undo_not_allowed"
    # a spectator may not move, nor a player of another race
    err = await w.move(code, 1, pa.pick())
    assert err.type == "error" and err.error == "not_a_player"
    # ready and join as player in a running race
    assert (await a.request(p.Ready(req=0, code=code))).error == "wrong_state"
    stranger = await Client.connect(node.url, name="stranger")
    assert (await stranger.request(p.Join(req=0, code=code))).error == "wrong_state"
    assert (await stranger.request(p.Join(req=0, code="ZZZZZ"))).error == "not_found"
    assert (await stranger.request(p.Join(req=0, code="not a code"))).error == "not_found"
    err = await stranger.move(code, 1, "+")
    assert err.type == "error" and err.error == "not_a_player"
    # options out of range
    for bad in (
        {"variant": "spider9"},
        {"time_limit": 0},
        {"max_players": 0},
        {"countdown": -1},
        {"seed": ""},
    ):
        reply = await stranger.request(p.CreateRace(req=0, **bad))  # type: ignore[arg-type]
        assert reply.type == "error" and reply.error == "invalid", bad
    assert _state(r, code, a.player) == before


async def test_wrong_state_and_full_race(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    a = await Client.connect(node.url, name="a")
    joined = await a.create(max_players=2, variant="spider1")
    code = joined.race.code
    err = await a.move(code, 1, "+")
    assert err.type == "error" and err.error == "wrong_state"
    b = await Client.connect(node.url, name="b")
    await b.join(code)
    c = await Client.connect(node.url, name="c")
    assert (await c.request(p.Join(req=0, code=code))).error == "race_full"
    # c may still watch
    assert (await c.join(code, role="spectator")).race.state == "open"


async def test_hello_first_and_protocol_version(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    c = await Client.connect(node.url, hello=False)
    assert (await c.request(p.CreateRace(req=0))).error == "protocol"
    await c.send(p.Hello(protocol=99, name="x"))
    assert (await c.expect("error")).error == "protocol"
    assert await c.closed_with() == 1002


async def test_hello_together_must_be_a_bool(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    c = await Client.connect(node.url, hello=False)
    for bad in (1, "yes", None):
        await c.send_map({"type": "hello", "protocol": 1, "name": "x", "together": bad})
        error = await c.expect("error")
        assert error.error == "invalid" and "together" in error.message, error
    await c.send_map({"type": "hello", "protocol": 1, "name": "x", "together": True})
    assert (await c.expect("welcome")).name == "x"


async def test_forged_and_altered_tokens(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    real = await Client.connect(node.url, name="real")
    prefix, head, payload, sig = real.token.split(".")  # a guest's: g1.v1.<payload>.<sig>
    assert prefix == "g1"
    import base64
    import json

    body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    body["p"] = "p000000000000"
    other = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=").decode()
    for token in (
        f"{prefix}.{head}.{other}.{sig}",
        f"{prefix}.{head}.{payload}.{sig[:-2]}AA",
        f"{head}.{other}.{sig}",  # a token of before the prefixes, forged
        "v1.abc.def",
        "g1.v1.abc.def",
        "garbage",
        "",
    ):
        c = await Client.connect(node.url, hello=False)
        await c.send(p.Hello(name="x", token=token))
        err = await c.expect(("error", "welcome"))
        assert err.type == "error" and err.error == "bad_token", token
        # the connection may still say hello without a token
        await c.send(p.Hello(name="x"))
        assert (await c.expect("welcome")).player != real.player
    # a token signed with another deployment's secret
    other_node = await server_node(redis_server.url, secret="another-secret")
    c = await Client.connect(other_node.url, hello=False)
    await c.send(p.Hello(token=real.token))
    assert (await c.expect(("error", "welcome"))).error == "bad_token"


async def test_oversized_frames_then_close(running) -> None:
    node, code, pa, b, w, r = running
    a = pa.client
    before = _state(r, code, a.player)
    big = msgpack.packb(
        {"type": "move", "code": code, "seq": 2, "move": "x" * (p.MAX_CLIENT_FRAME + 10)}
    )
    err = await _error(a, big)
    assert err.error == "bad_frame"
    await a.send_raw(big)
    assert await a.closed_with() == 1009
    assert _state(r, code, a.player) == before


async def test_flood_is_closed_with_policy_violation(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, rate=5.0, burst=5, flood_strikes=20)
    c = await Client.connect(node.url, name="flood")
    frame = p.encode(p.Ready(req=1, code="AAAAA"))
    for _ in range(200):
        try:
            await c.send_raw(frame)
        except Exception:
            break
    code = await c.closed_with()
    assert code == 1008
    assert any(
        p.decode(f).type == "error" and p.decode(f).error == "rate_limited" for f in c.frames
    )
    # the node is still up
    d = await Client.connect(node.url, name="calm")
    assert d.welcome is not None
    await asyncio.sleep(0)


async def test_too_many_races_per_player(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, max_races_per_player=2)
    a = await Client.connect(node.url, name="busy")
    first = (await a.create(variant="spider1")).race.code
    await a.create(variant="spider1")
    reply = await a.request(p.CreateRace(req=0))
    assert reply.type == "error" and reply.error == "too_many_races"
    other = await Client.connect(node.url, name="host")
    third = (await other.create(variant="spider1")).race.code
    assert (await a.request(p.Join(req=0, code=third))).error == "too_many_races"
    assert (await a.request(p.Join(req=0, code=third, role="spectator"))).type == "joined"
    assert (await a.request(p.Leave(req=0, code=first))).type == "done"
    assert (await a.request(p.Join(req=0, code=third))).type == "joined"


async def test_silent_connections_are_closed(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, hello_timeout=0.2, idle_timeout=0.3)
    mute = await Client.connect(node.url, hello=False)
    assert await mute.closed_with() == 1008
    idle = await Client.connect(node.url, name="idle")
    assert await idle.closed_with() == 1001
    # a connection that watches a race is not idle
    watcher = await Client.connect(node.url, name="watcher")
    code = (await watcher.create(variant="spider1")).race.code
    await asyncio.sleep(0.5)
    assert (await watcher.request(p.Ready(req=0, code=code))).type == "done"


async def test_a_connection_follows_a_bounded_number_of_races(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, max_watched=2)
    codes = []
    for _ in range(3):
        other = await Client.connect(node.url, name="creator")
        codes.append((await other.create(variant="spider1")).race.code)
    fan = await Client.connect(node.url, name="fan")
    await fan.join(codes[0], role="spectator")
    await fan.join(codes[1], role="spectator")
    await fan.join(codes[1], role="spectator")  # again: the same race, no more
    assert (
        await fan.request(p.Join(req=0, code=codes[2], role="spectator"))
    ).error == "too_many_races"
    assert (await fan.request(p.Leave(req=0, code=codes[0]))).type == "done"
    assert (await fan.join(codes[2], role="spectator")).race.code == codes[2]
