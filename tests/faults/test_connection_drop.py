"""A client's connection drops between sending a move and getting its ack, again and again,
while it moves at full speed: after each reconnect the move is applied exactly once."""

from __future__ import annotations

import asyncio

import msgpack

from tests.client.client_helpers import FAST
from tests.client.proxy import CuttingProxy
from tests.faults.fault_helpers import check_exactly_once, start_racers


async def test_cut_between_move_and_ack_at_full_speed(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    port = int(node.url.rsplit(":", 1)[1].split("/")[0])
    proxy = await CuttingProxy(port).start()
    try:
        code, (racer,) = await start_racers(proxy.url, 1)
        stop = asyncio.Event()
        run = asyncio.create_task(racer.flat_out(stop))
        for _ in range(5):  # five cuts, each just after a move reached the server
            proxy.cut_at = proxy.moves_seen + 7
            cuts = proxy.cuts
            async with asyncio.timeout(20):
                while proxy.cuts == cuts:
                    assert not run.done(), run
                    await asyncio.sleep(0.01)
            await racer.client.wait_until(lambda c, n=cuts: c.reconnects > n, timeout=20)
        stop.set()
        await asyncio.wait_for(run, 20)
        assert proxy.cuts == 5 and racer.client.reconnects == 5
        # each cut lost the ack of a move the server had applied; the resend was answered
        # with the same ack, marked duplicate, and not applied again
        lost = [m for m in map(msgpack.unpackb, proxy.dropped) if m["type"] == "ack"]
        assert len(lost) == 5 and not any(m["duplicate"] for m in lost)
        duplicates = [a.seq for a in racer.acks if a.duplicate]
        assert duplicates == [m["seq"] for m in lost]
        check_exactly_once(redis_server.url, code, [racer])
    finally:
        await proxy.close()
