"""A spectator that stops reading slows nobody: its queue is bounded, then it is closed,
then cut if it does not take the close either."""

from __future__ import annotations

import asyncio
import socket

from spider_client import Client
from spider_client import protocol as p
from spider_race.bench_server.stalled import stalled_plan, stalled_side, stalled_spectator
from tests.client.client_helpers import FAST
from tests.faults.fault_helpers import start_racers


async def _slow_network(node) -> None:
    """The node's side of the stalled spectator's connection buffers little in the kernel
    (once the node has taken its hello: a busy machine may take a while)."""

    def stalled() -> list:
        return [
            c
            for c in node.node.connections
            if c.session.identity and c.session.identity.name == "stalled"
        ]

    async with asyncio.timeout(30):
        while not stalled():
            await asyncio.sleep(0.02)
    (conn,) = stalled()
    conn.ws.transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)


async def _race_watched(racer, watcher, *, least: int, seconds: float) -> int:
    """The racer moves flat out for ``seconds`` (and ``least`` moves); returns its moves
    once the watcher has seen the last one."""
    stop = asyncio.Event()
    run = asyncio.create_task(racer.flat_out(stop, least=least))
    await asyncio.sleep(seconds)
    stop.set()
    await asyncio.wait_for(run, 30)
    moves: int = racer.client.me.moves if racer.client.me else 0
    await watcher.wait_until(
        lambda c: any(i.moves == moves for i in (c.race.players if c.race else [])),
        timeout=10,
    )
    return moves


async def test_a_spectator_that_never_reads_is_cut_and_slows_nobody(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, send_queue=50, write_timeout=0.5, **FAST)
    code, (racer,) = await start_racers(node.url, 1)
    watcher = await Client.connect(node.url, name="watcher")
    await watcher.join(code, "spectator")
    stalled = await stalled_spectator(node.url, code)
    try:
        await _slow_network(node)  # waits for its hello
        assert len(node.node.connections) == 3
        # the reader went on getting every event
        assert await _race_watched(racer, watcher, least=1000, seconds=0.1) >= 1000
        # the one that never read was closed for it (1008), and then cut
        assert node.node.metrics.closed_total[1008] == 1
        for _ in range(100):
            if len(node.node.connections) == 2:
                break
            await asyncio.sleep(0.05)
        assert len(node.node.connections) == 2
    finally:
        stalled.close()
        await watcher.close()
        await racer.client.close()


async def test_metrics_count_a_reader_that_stopped_and_forget_it_once_gone(
    redis_server, server_node
) -> None:
    from spider_race.bench_server.stalled import gauges, metrics_url

    def backlog() -> tuple[int, int]:
        shown = gauges(metrics)
        assert shown is not None
        return shown["backlogged"], shown["frames"]

    node = await server_node(redis_server.url, **FAST)
    code, (racer,) = await start_racers(node.url, 1)
    watcher = await Client.connect(node.url, name="watcher")
    await watcher.join(code, "spectator")
    stalled = await stalled_spectator(node.url, code)
    metrics = metrics_url(node.url)
    try:
        assert await asyncio.to_thread(backlog) == (0, 0)
        await _slow_network(node)  # waits for its hello
        # it asks for the race again and again and reads none of the replies: once the
        # socket takes no more, the node queues them and says so
        for _ in range(400):
            await stalled.join(code, since=0)
            if node.node.backlog()[1] >= 5:
                break
            await asyncio.sleep(0.005)
        waiting, frames = await asyncio.to_thread(backlog)
        assert waiting == 1 and frames >= 5
        # the reader that reads still gets every move, each in its own progress event
        first = racer.client.me.moves if racer.client.me else 0
        seen: set[int] = set()

        async def watch() -> None:
            async for event in watcher.events():
                if isinstance(event, p.Progress) and event.player.player == racer.client.player:
                    seen.add(event.player.moves)

        reading = asyncio.create_task(watch())
        moves = await _race_watched(racer, watcher, least=20, seconds=0.05)
        assert moves >= first + 20
        await asyncio.sleep(0.05)
        reading.cancel()
        assert set(range(first + 1, moves + 1)) <= seen
        assert node.node.backlog()[1] > frames  # its moves were queued for the stalled one
        stalled.close()
        for _ in range(200):
            if node.node.backlog() == (0, 0):
                break
            await asyncio.sleep(0.05)
        assert await asyncio.to_thread(backlog) == (0, 0)
    finally:
        stalled.close()
        await watcher.close()
        await racer.client.close()


def test_a_move_counts_on_the_side_of_its_slice_and_near_a_toggle_on_neither() -> None:
    plan = stalled_plan(16)
    assert plan == (0, 1, 1, 0, 0, 1, 1, 0)
    assert stalled_plan(60) == (0, 1, 1, 0) * 8 and stalled_plan(1) == plan
    start, slice_s, guard = 100.0, 2.0, 0.1
    for index, side in enumerate(plan):
        middle = start + (index + 0.5) * slice_s
        assert stalled_side(middle, start, slice_s, guard, plan) == side
    # the stalled spectators join as slice 1 starts and leave as slice 3 starts
    assert stalled_side(start + 2.0 - 0.05, start, slice_s, guard, plan) is None
    assert stalled_side(start + 2.0 + 0.05, start, slice_s, guard, plan) is None
    assert stalled_side(start + 2.0 + 0.15, start, slice_s, guard, plan) == 1
    assert stalled_side(start + 6.0 + 0.05, start, slice_s, guard, plan) is None
    assert stalled_side(start + 6.0 - 0.15, start, slice_s, guard, plan) == 1
    # between two watching slices, and between two away ones, nothing changes
    assert stalled_side(start + 4.0, start, slice_s, guard, plan) == 1
    assert stalled_side(start + 8.0, start, slice_s, guard, plan) == 0
    # outside the measured time
    assert stalled_side(start - 0.01, start, slice_s, guard, plan) is None
    assert stalled_side(start + 16.0, start, slice_s, guard, plan) is None
