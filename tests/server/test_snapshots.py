"""A finished race's snapshot is encoded once and its big parts shared by every requester,
and a connection that has not read a big ``joined`` is not queued another copy (a real
node, real sockets; docs/server.md, "Limits")."""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import pytest

from spider_client import protocol as p
from spider_server import race as rules
from spider_server.transport import writing
from tests.client.client_helpers import FAST
from tests.server.attack_helpers import (
    client_frame,
    handshake,
    hello_frame,
    map_frame,
    server_messages,
    wait_for,
)
from tests.server.server_helpers import Client, Player, start_race


async def finished_race(url: str, actions: int) -> str:
    """A one-player race of ``actions`` actions (moves and undos), resigned: its code."""
    code, (client,), _ = await start_race(url, players=1, variant="spider1", undo=True)
    ack0 = next(m for m in client.received if m.type == "ack" and m.seq == 0)
    player = Player(client, code, ack0.view, seed=5)
    while player.seq < actions:
        move = player.pick()
        ack = await (player.undo() if move is None or player.seq % 2 else player.step(move))
        assert ack.type == "ack", ack
    assert (await player.resign()).type == "ack"
    await client.expect("finished")
    await client.close()
    return code


async def test_every_joined_of_a_finished_race_is_the_race_as_it_is(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **FAST)
    code = await finished_race(node.url, 80)  # more events than a finished joined carries
    watchers = [await Client.connect(node.url, name=f"w{i}") for i in range(3)]
    replies = [await w.request(p.Join(req=0, code=code, role="spectator")) for w in watchers]
    assert len(node.node.context.snapshots) == 1  # encoded once, for the three of them
    race = await node.node.store.races.load_race(code)
    now = node.node.now()
    for i, reply in enumerate(replies):
        expected = rules.race_info(race, online=[], spectators=i + 1, now=now)
        assert reply.race == expected
        assert reply.boards == dict(race.final.boards)
        assert reply.events == [] and reply.view is None
    # a rejoin since a version a few events back gets those events; far back, none
    again = await watchers[0].request(
        p.Join(req=0, code=code, role="spectator", since=race.version - 2)
    )
    assert [e["version"] for e in again.events] == [race.version - 1, race.version]
    far = await watchers[0].request(p.Join(req=0, code=code, role="spectator", since=0))
    assert far.events == [] and far.race == again.race
    for w in watchers:
        await w.close()


def _waiting(conn: Any) -> int:
    transport = conn.ws.transport
    return int(conn.queued_bytes + (transport.get_write_buffer_size() if transport else 0))


async def test_no_second_copy_of_a_big_joined_for_a_reader_that_has_not_read_the_first(
    redis_server, server_node, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writing, "BIG_FRAME", 1024)  # a short race's snapshot is big
    node = await server_node(redis_server.url, **FAST)
    code = await finished_race(node.url, 100)
    sock, head = await asyncio.to_thread(handshake, node.node.port, rcvbuf=4096)
    assert b" 101 " in head
    await asyncio.to_thread(sock.sendall, hello_frame("hoarder"))
    assert await wait_for(lambda: any(c.session.identity for c in node.node.connections))
    conn = next(iter(node.node.connections))
    conn.ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)

    def join(req: int) -> bytes:
        return map_frame({"type": "join", "req": req, "code": code, "role": "spectator"})

    # pongs to 500 pings that are not read fill the socket's buffers: what comes next waits
    await asyncio.to_thread(sock.sendall, client_frame(0x9, b"x" * 125) * 500)
    assert await wait_for(lambda: _waiting(conn) > 0)
    await asyncio.to_thread(sock.sendall, join(1))
    assert await wait_for(lambda: conn.unread(code))
    first = _waiting(conn)
    for req in (2, 3):
        await asyncio.to_thread(sock.sendall, join(req))
    assert await wait_for(lambda: node.node.metrics.refused_total["unread"] == 2)
    # the refusals are small: nothing like a second copy waits
    assert _waiting(conn) < first + 1024, (first, _waiting(conn))
    messages = await asyncio.to_thread(server_messages, sock, 4)
    assert [(m["type"], m["req"]) for m in messages[1:]] == [
        ("joined", 1),
        ("error", 2),
        ("error", 3),
    ]
    assert messages[2]["error"] == "rate_limited"
    assert "not been read yet" in messages[2]["message"]
    assert await wait_for(lambda: not conn.unread(code))  # read: asked again, sent again
    await asyncio.to_thread(sock.sendall, join(4))
    (reply,) = await asyncio.to_thread(server_messages, sock, 1)
    assert (reply["type"], reply["req"]) == ("joined", 4)
    sock.close()
