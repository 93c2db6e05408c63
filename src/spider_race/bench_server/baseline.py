"""The baseline: a bare websocket echo server with one Redis transaction per message,
and the load that measures it like the players measure the server."""

from __future__ import annotations

import asyncio
import signal
from typing import TYPE_CHECKING

import msgpack

from .meter import CpuMeter
from .sending import Send, Tally, Timing, drive
from .tools import bounded, close_all, collector_paused

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

__all__ = ["echo_server", "baseline"]


async def echo_server(port: int, redis_url: str) -> None:
    """Serve websocket echo on ``127.0.0.1:port`` (any path) until SIGTERM: each binary
    message is answered with itself after one Redis transaction (``MULTI``, ``INCR``,
    ``EXEC``). The websocket options are the server's; the Redis client is the server's."""
    from websockets.asyncio.server import ServerConnection, serve

    from spider_server.settings import Settings
    from spider_server.store.redisconn import connect

    settings = Settings()
    redis = connect(redis_url)
    key = "{bench}:echo"

    async def handle(ws: ServerConnection) -> None:
        async for frame in ws:
            async with redis.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                await pipe.execute()
            await ws.send(frame)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with serve(
        handle,
        "127.0.0.1",
        port,
        max_size=max(settings.max_frame * 16, 65536),
        ping_interval=settings.ping_interval,
        ping_timeout=settings.ping_timeout,
        compression=None,
    ):
        await stop.wait()
    await redis.aclose()


async def baseline(
    url: str,
    *,
    senders: int,
    silent: int,
    rate: float | None,
    seconds: float,
    meter: CpuMeter | None = None,
    warmup: float = 0.0,
) -> Tally:
    """The echo server's rate with ``senders`` connections sending (and ``silent`` ones
    open), in the same rate mode; ``meter`` measures the CPU time of the timed phase."""
    from websockets.asyncio.client import connect

    conns_or = await bounded(
        range(senders + silent),
        lambda _: connect(url, compression=None, max_size=2**22, open_timeout=60),
        concurrency=100,
    )
    conns: list[ClientConnection] = [c for c in conns_or if not isinstance(c, BaseException)]
    if len(conns) != senders + silent:
        raise RuntimeError("could not connect to the echo server")
    frame = msgpack.packb({"type": "move", "code": "ABCDE", "seq": 1, "move": "f1c"})
    tally = Tally()

    def sender(ws: ClientConnection) -> Send:
        async def send(k: int) -> None:
            await ws.send(frame)
            await ws.recv()

        return send

    timing = Timing.from_now(warmup, seconds)
    with collector_paused():
        await drive([sender(ws) for ws in conns[:senders]], rate, timing, tally, meter=meter)
    await close_all(conns)
    return tally
