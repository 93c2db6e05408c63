"""The node's limits per client address, its refusals near the open-files limit, and the
inputs that once made it answer ``internal`` (a real node, real clients; docs/server.md,
"Limits")."""

from __future__ import annotations

import asyncio
import logging
import urllib.error
import urllib.request
from typing import Any

import pytest
from redis.asyncio import Redis

from spider_client import protocol as p
from tests.client.client_helpers import FAST
from tests.server.attack_helpers import handshake, http_status
from tests.server.server_helpers import Client, start_race


def _request(url: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


async def _status(port: int, **kwargs: Any) -> int:
    sock, head = await asyncio.to_thread(handshake, port, **kwargs)
    status = http_status(head)
    if status != 101:
        sock.close()
    else:
        _open.append(sock)
    return status


_open: list[Any] = []


@pytest.fixture(autouse=True)
def _close_sockets(server_node):  # closed before the nodes are
    yield
    while _open:
        _open.pop().close()


async def test_connections_per_address_past_the_limit_get_429(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, address_connections=3)
    port = node.node.port
    assert [await _status(port) for _ in range(3)] == [101, 101, 101]
    assert await _status(port) == 0  # refused at accept: reset before any byte is read
    _open.pop().close()
    await asyncio.sleep(0.2)
    assert await _status(port) == 101


async def test_the_address_is_the_proxys_word_only_when_it_is_trusted(
    redis_server, server_node
) -> None:
    trusting = await server_node(
        redis_server.url, address_connections=2, trusted_proxies="127.0.0.0/8"
    )
    port = trusting.node.port
    alice = {"X-Forwarded-For": "203.0.113.7"}
    bob = {"X-Forwarded-For": "198.51.100.1, 203.0.113.8"}
    assert [await _status(port, headers=alice) for _ in range(2)] == [101, 101]
    assert await _status(port, headers=alice) == 429
    assert trusting.node.metrics.refused_total["address"] == 1
    assert await _status(port, headers=bob) == 101  # the last hop before the proxy counts
    # the PROXY protocol's line names the client too
    line = b"PROXY TCP4 192.0.2.9 127.0.0.1 40000 8765\r\n"
    assert [await _status(port, prefix=line) for _ in range(2)] == [101, 101]
    assert await _status(port, prefix=line) == 429
    # a node that trusts no proxy counts the peer, whatever the header says
    plain = await server_node(redis_server.url, address_connections=2)
    assert await _status(plain.node.port, headers=alice) == 101
    assert await _status(plain.node.port, headers=bob) == 101
    assert await _status(plain.node.port, headers={"X-Forwarded-For": "192.0.2.1"}) == 0


async def test_new_players_per_address_past_the_rate_get_rate_limited(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, address_new_players=3)
    clients = [await Client.connect(node.url, name=f"new{i}") for i in range(3)]
    # a returning player (with their token) is not a new one
    back = await Client.connect(node.url, token=clients[0].token)
    assert back.player == clients[0].player
    extra = await Client.connect(node.url, hello=False)
    await extra.send(p.Hello(name="one too many"))
    error = await extra.expect("error")
    assert error.error == "rate_limited"
    assert "try again in 20 s" in error.message  # 3 a minute: one more in 20 s
    assert await extra.closed_with() == 1013
    assert (extra.ws.close_reason or "").startswith("retry after 20 s")
    assert node.node.metrics.refused_total["new_players"] == 1
    # until then, the address is answered before the upgrade
    sock, head = await asyncio.to_thread(handshake, node.node.port)
    sock.close()
    assert http_status(head) == 429
    assert b"Retry-After: 20" in head or b"Retry-After: 19" in head
    assert node.node.metrics.refused_total["retry_early"] == 1
    for c in [*clients, back]:
        await c.close()


async def test_creations_per_address_and_per_player_get_rate_limited(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, address_creations=3, player_creations=2)
    a = await Client.connect(node.url, name="a")
    for _ in range(2):
        reply = await a.request(p.CreateRace(req=0, variant="spider1"))
        assert reply.type == "joined", reply
    refused = await a.request(p.CreateRace(req=0, variant="spider1"), ("joined", "error"))
    assert refused.type == "error" and refused.error == "rate_limited"  # the player's
    b = await Client.connect(node.url, name="b")
    assert (await b.request(p.CreateRace(req=0, variant="spider1"))).type == "joined"
    refused = await b.request(p.CreateRace(req=0, variant="spider1"), ("joined", "error"))
    assert refused.type == "error" and refused.error == "rate_limited"  # the address's
    # the connection stays: other requests are served
    assert (await b.request(p.Leaderboard(req=0, variant="spider1"), ("leaderboard_reply",))).type
    await a.close()
    await b.close()


async def test_wrong_codes_get_rate_limited_and_leave_nothing_in_redis(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, address_wrong_joins=5)
    code, (owner,), _ = await start_race(node.url, players=1)
    redis = Redis.from_url(redis_server.url)
    keys_before = set(await redis.keys("*"))
    guesser = await Client.connect(node.url, name="guesser")
    answers = []
    for guess in ("AAAAA", "BBBBB", "CCCCC", "DDDDD", "EEEEE", "FFFFF", "GGGGG"):
        if guess == code:
            continue
        reply = await guesser.request(
            p.Join(req=0, code=guess, role="spectator"), ("joined", "error")
        )
        answers.append(reply.error)
    assert answers[:5] == ["not_found"] * 5
    assert set(answers[5:]) == {"rate_limited"}
    # a right code is refused too while the bucket is empty: a guess tells nothing
    right = await guesser.request(p.Join(req=0, code=code, role="spectator"), ("joined", "error"))
    assert right.type == "error" and right.error == "rate_limited"
    await asyncio.sleep(0.3)
    # nothing but the address's bucket of wrong joins, which lives until it is full again
    bucket = b"{limit:a:127.0.0.1}:wrong_join"
    assert set(await redis.keys("*")) - keys_before == {bucket}
    assert 0 < await redis.pttl(bucket) <= 60_000
    await redis.aclose()
    await guesser.close()
    await owner.close()


async def test_near_the_open_files_limit_new_connections_get_503_and_healthz_answers(
    redis_server, server_node, caplog
) -> None:
    node = await server_node(redis_server.url, **FAST)
    code, (player,), _ = await start_race(node.url, players=1)
    caplog.set_level(logging.INFO, logger="spider_server.transport.http")
    node.node.http.open_files.reserve = 1_000_000  # as if every file but a few were open
    node.node.http.open_files._checked = 0.0
    for _ in range(5):
        assert await _status(node.node.port) == 503
        node.node.http.open_files._checked = 0.0  # count again each time
    status, headers, body = await asyncio.to_thread(_request, node.http_url + "/")
    assert status == 503 and headers.get("Retry-After") == "5"
    status, _, body = await asyncio.to_thread(_request, node.http_url + "/healthz")
    assert (status, body) == (200, b"ok\n")
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "open files" in warnings[0].getMessage()
    # the race already under way goes on
    ack0 = next(m for m in player.received if m.type == "ack" and m.seq == 0)
    from spider_engine import Board

    move = Board.from_text(ack0.view).legal_moves.texts()[0]
    assert (await player.move(code, 1, move)).type == "ack"
    node.node.http.open_files.reserve = 64
    node.node.http.open_files._checked = 0.0
    assert await _status(node.node.port) == 101
    assert any("accepted again" in r.getMessage() for r in caplog.records)
    await player.close()


async def test_only_get_and_head_are_served(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    for method in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH"):
        status, headers, _ = await asyncio.to_thread(_request, node.http_url + "/", method)
        assert status == 405, method
        assert headers.get("Allow") == "GET, HEAD"
    status, headers, body = await asyncio.to_thread(_request, node.http_url + "/", "HEAD")
    assert status == 200 and body == b"" and int(headers["Content-Length"]) > 0
    status, _, body = await asyncio.to_thread(_request, node.http_url + "/healthz", "HEAD")
    assert status == 200 and body == b""


async def test_a_static_name_over_255_characters_is_not_found(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    for path in ("/" + "a" * 300, "/" + "a" * 255 + ".js", "/vendor/" + "b" * 1000):
        status, _, _ = await asyncio.to_thread(_request, node.http_url + path)
        assert status == 404, path


async def test_inputs_that_once_failed_get_their_documented_errors(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url)
    c = await Client.connect(node.url, hello=False)
    await c.send(p.Hello(name="x", token="v1.é.abc"))
    assert (await c.expect("error")).error == "bad_token"
    await c.send(p.Hello(name="x", token="v1." + "ü" * 20 + ".sig"))
    assert (await c.expect("error")).error == "bad_token"
    await c.send(p.Hello(name="x"))
    await c.expect("welcome")
    for day in ("9999-12-31", "0001-01-01", "2024-02-30", "99999-01-01"):
        reply = await c.request(
            p.Leaderboard(req=0, variant="spider1", day=day), ("leaderboard_reply", "error")
        )
        assert reply.type == "leaderboard_reply" or reply.error == "invalid", (day, reply)
    reply = await c.request(
        p.Leaderboard(req=0, variant="spider1", day="9999-12-31"), ("leaderboard_reply", "error")
    )
    assert reply.type == "error" and reply.error == "invalid"
    assert node.node.metrics.errors_total["internal"] == 0
    await c.close()


async def test_redis_refusing_writes_for_memory_is_unavailable(redis_server, server_node) -> None:
    from spider_engine import Board

    node = await server_node(redis_server.url)
    code, (player,), _ = await start_race(node.url, players=1)
    c = await Client.connect(node.url)
    view = next(m for m in player.received if m.type == "ack" and m.seq == 0).view
    move = Board.from_text(view).legal_moves.texts()[0]
    redis = Redis.from_url(redis_server.url)
    await redis.config_set("maxmemory", "1")  # every write is over: Redis refuses it (OOM)
    try:
        reply = await c.request(p.CreateRace(req=0, variant="spider1"), ("joined", "error"))
        assert reply.type == "error" and reply.error == "unavailable"
        refused = await player.move(code, 1, move)  # the action script is refused too
        assert refused.type == "error" and refused.error == "unavailable"
    finally:
        await redis.config_set("maxmemory", "0")
    assert (await c.request(p.CreateRace(req=0, variant="spider1"))).type == "joined"
    assert (await player.move(code, 1, move)).type == "ack"  # nothing was changed
    await player.close()
    assert node.node.metrics.errors_total["internal"] == 0
    await redis.aclose()
    await c.close()


async def test_a_chosen_seed_is_said_in_the_race_info(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    c = await Client.connect(node.url)
    chosen = await c.create(variant="spider1", seed="my deal")
    assert chosen.race.seed_chosen is True
    random = await c.create(variant="spider1")
    assert random.race.seed_chosen is False
    watcher = await Client.connect(node.url, name="w")
    seen = await watcher.join(chosen.race.code, role="spectator")
    assert seen.race.seed_chosen is True
    await c.close()
    await watcher.close()


def test_the_embedded_redis_is_private_capped_and_asks_a_password(tmp_path) -> None:
    import os
    import socket
    import stat

    from redis import Redis as SyncRedis

    from spider_server.embedded import PASSWORD_FILE, RedisProcess, redis_password

    folder = tmp_path / "redis"
    password = redis_password(folder)
    assert redis_password(folder) == password  # generated once
    proc = RedisProcess(folder, maxmemory="64mb", password=password)
    proc.start()
    try:
        with socket.create_connection(("127.0.0.1", proc.port), timeout=2) as s:
            s.sendall(b"PING\r\n")
            assert s.recv(64).startswith(b"-NOAUTH")
        r = SyncRedis.from_url(proc.url)
        r.set("k", "v")
        assert r.config_get("maxmemory")["maxmemory"] == str(64 << 20)
        assert r.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
        r.close()
        assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
        files = [f for f in folder.rglob("*") if f.is_file()]
        assert {f.name for f in files} >= {PASSWORD_FILE, "redis.log"}
        assert any(f.name.startswith("spider-race.aof") for f in files)
        for f in files:
            assert stat.S_IMODE(os.stat(f).st_mode) & 0o077 == 0, f
    finally:
        proc.kill()


async def _hint_race(client: Client) -> str:
    """A running spider1 race with hints, ``client`` its one player; its code."""
    joined = await client.create(variant="spider1", seed="h", hints=True, countdown=0)
    code: str = joined.race.code
    await client.ready(code)
    await client.expect("ack", lambda m: m.seq == 0 and m.code == code)
    return code


async def _hint(client: Client, code: str) -> str:
    reply = await client.request(p.Hint(req=0, code=code), ("hint_reply", "error"))
    if reply.type == "hint_reply":
        assert reply.move, reply
        _moves[code] = reply.move
        return "hint_reply"
    return str(reply.error)


_moves: dict[str, str] = {}
"""A race's last hinted move."""


async def test_hints_per_player_and_per_address_get_rate_limited(redis_server, server_node) -> None:
    """Past ``player_hints`` a minute a player's hint is refused, past ``address_hints``
    every player's from that address; a refused hint is not counted, and the connection
    and its race go on. The node's limits run on a clock that stands still here: nothing
    refills while the hints are worked out, however long that takes."""
    node = await server_node(
        redis_server.url,
        pool_size=0,
        player_hints=3,
        address_hints=5,
        hint_budget=500,
        hint_quick_budget=500,
    )
    node.node.addresses.clock = lambda: 0.0  # the buckets' time stands still: none refills
    a = await Client.connect(node.url, name="a")
    code_a = await _hint_race(a)
    assert [await _hint(a, code_a) for _ in range(4)] == ["hint_reply"] * 3 + ["rate_limited"]
    b = await Client.connect(node.url, name="b")
    code_b = await _hint_race(b)
    assert [await _hint(b, code_b) for _ in range(3)] == ["hint_reply"] * 2 + ["rate_limited"]
    assert await node.node.store.races.load_hints(code_a) == {a.player: 3}
    assert await node.node.store.races.load_hints(code_b) == {b.player: 2}
    assert node.node.metrics.refused_total["hints"] == 2
    # the race goes on: the hinted move is acked after the refusals
    ack = await a.move(code_a, 1, _moves[code_a])
    assert ack.type == "ack", ack
    await a.close()
    await b.close()
