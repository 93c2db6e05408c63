"""No single client can slow, stall or bloat a node: each attack runs against a real node
with real sockets while an honest player races, and the node bounds it (docs/server.md,
"Limits"). What is asserted does not depend on the machine's speed: the bounds, the close
codes and errors, the honest player's acks, and the node's memory once the attacker is
gone (at most 50 MB above what it was before)."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import Any

from tests.client.client_helpers import FAST
from tests.server.attack_helpers import (
    client_frame,
    handshake,
    hello_frame,
    map_frame,
    rss_mb,
    wait_for,
)
from tests.server.server_helpers import Player, start_race


async def _honest(url: str) -> tuple[str, Player]:
    """A one-player race under way: its player."""
    code, (client,), _ = await start_race(url, players=1, variant="spider1", undo=True)
    ack0 = next(m for m in client.received if m.type == "ack" and m.seq == 0)
    return code, Player(client, code, ack0.view, seed=5)


async def _play(player: Player) -> None:
    """One honest action, acked."""
    move = player.pick()
    ack = await (player.undo() if move is None else player.step(move))
    assert ack.type == "ack", ack


def _node_side(node: Any, sock: socket.socket) -> Any:
    """The node's connection of a raw client socket."""
    port = sock.getsockname()[1]
    for conn in node.node.connections:
        if conn.ws.remote_address[1] == port:
            return conn
    return None


def _waiting_bytes(conn: Any) -> int:
    transport = conn.ws.transport
    buffered = transport.get_write_buffer_size() if transport is not None else 0
    return int(conn.queued_bytes + buffered)


def _send_all(sock: socket.socket, data: bytes) -> bool:
    """Send; False once the node stopped taking (closed, or reads no more)."""
    try:
        sock.sendall(data)
        return True
    except OSError:  # includes the timeout of a node that reads no more
        return False


async def test_pings_never_read_close_the_connection_at_its_byte_bound(
    redis_server, server_node
) -> None:
    bound = 256 * 1024
    node = await server_node(redis_server.url, send_bytes=bound, write_timeout=0.5, **FAST)
    code, player = await _honest(node.url)
    before = rss_mb()
    sock, head = await asyncio.to_thread(handshake, node.node.port, rcvbuf=4096)
    assert b" 101 " in head
    assert await wait_for(lambda: _node_side(node, sock) is not None)
    conn = _node_side(node, sock)
    conn.ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    sock.settimeout(2)
    pings = client_frame(0x9, b"x" * 125) * 500  # 500 pings: 63 kB of pongs to write
    most, sent, acks = 0, 0, 0
    for _ in range(400):  # up to 25 MB of pongs, were they all answered
        if not await asyncio.to_thread(_send_all, sock, pings):
            break
        sent += 1
        if conn in node.node.connections:
            most = max(most, _waiting_bytes(conn))
        await _play(player)
        acks += 1
    # it was closed as too slow, within a read's worth of pongs over the bound
    assert node.node.metrics.refused_total["too_slow"] == 1
    assert node.node.metrics.closed_total[1008] == 1
    assert most <= bound + 300_000, most
    assert sent < 400
    assert await wait_for(lambda: conn not in node.node.connections)
    # the honest player's moves went on all along, and go on
    assert acks == sent
    await _play(player)
    sock.close()
    assert rss_mb() <= before + 50
    await player.client.close()


async def _slow_joiner(node: Any, code: str, joins: int) -> tuple[int, bool]:
    """A spectator that asks for the race's whole history again and again and never
    reads; the most bytes the node had waiting for it, and whether it was closed."""
    sock, head = await asyncio.to_thread(handshake, node.node.port, rcvbuf=4096)
    assert b" 101 " in head
    assert await wait_for(lambda: _node_side(node, sock) is not None)
    conn = _node_side(node, sock)
    conn.ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    sock.settimeout(2)
    await asyncio.to_thread(_send_all, sock, hello_frame("hoarder"))
    most = 0
    for i in range(joins):
        join = map_frame(
            {"type": "join", "req": i + 1, "code": code, "role": "spectator", "since": 0}
        )
        if not await asyncio.to_thread(_send_all, sock, join):
            break
        await asyncio.sleep(0.01)
        if conn in node.node.connections:
            most = max(most, _waiting_bytes(conn))
    closed = await wait_for(lambda: conn not in node.node.connections)
    sock.close()
    return most, closed


async def test_a_reader_of_big_frames_that_never_reads_is_closed_at_its_byte_bound(
    redis_server, server_node
) -> None:
    bound = 1 << 20
    node = await server_node(
        redis_server.url, send_bytes=bound, send_queue=10_000_000, write_timeout=0.5, **FAST
    )
    code, player = await _honest(node.url)
    for _ in range(200):  # a history of 200 progress events: each joined is ~45 kB, under
        await _play(player)  # BIG_FRAME (a big joined unread is refused, not queued)
    before = rss_mb()
    task = asyncio.create_task(_slow_joiner(node, code, 200))  # 10 MB, were it all queued
    while not task.done():
        await _play(player)
        await asyncio.sleep(0.01)
    most, closed = await task
    assert node.node.metrics.refused_total["unread"] == 0  # the frames were queued, not refused
    assert closed
    assert node.node.metrics.refused_total["too_slow"] == 1
    assert most <= bound + 100_000, most  # the bound, and at most the frame that passed it
    assert node.node.writes.queued_bytes == 0
    await _play(player)
    assert rss_mb() <= before + 50
    await player.client.close()


async def test_the_node_bounds_the_bytes_of_all_its_slow_readers(redis_server, server_node) -> None:
    node_bound = 1 << 20
    node = await server_node(
        redis_server.url,
        send_bytes=16 << 20,
        node_send_bytes=node_bound,
        send_queue=10_000_000,
        write_timeout=0.5,
        **FAST,
    )
    code, player = await _honest(node.url)
    for _ in range(200):  # joined frames under BIG_FRAME, as above
        await _play(player)
    tasks = [asyncio.create_task(_slow_joiner(node, code, 100)) for _ in range(3)]
    while not all(t.done() for t in tasks):
        assert node.node.writes.queued_bytes <= node_bound
        await _play(player)
        await asyncio.sleep(0.01)
    results = [t.result() for t in tasks]
    assert node.node.metrics.refused_total["unread"] == 0
    assert all(closed for _, closed in results)
    assert node.node.metrics.refused_total["too_slow"] == 3
    assert node.node.writes.queued_bytes == 0
    await _play(player)
    await player.client.close()


async def test_raw_floods_leave_the_honest_race_alone(redis_server, server_node) -> None:
    """Bytes that are not websocket frames, and oversized frames: closed, nothing else."""
    node = await server_node(redis_server.url, **FAST)
    code, player = await _honest(node.url)
    sock, head = await asyncio.to_thread(handshake, node.node.port)
    assert b" 101 " in head
    with contextlib.suppress(OSError):
        sock.sendall(b"\xff" * 10_000)
    await _play(player)
    sock.close()
    await player.client.close()
