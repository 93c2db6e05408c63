"""A helper of the quick-match tests: :class:`RawPlayer`, a player that speaks the
protocol over a websocket of its own from a loopback address of its choosing (127.0.0.2,
…), as an attacker's own program would: it says only what it is told to, and keeps every
message the server sends."""

from __future__ import annotations

import asyncio
from typing import Any

from websockets.asyncio.client import ClientConnection, connect

from spider_client import protocol as p


class RawPlayer:
    """One connection: ``hello``, then requests on demand; every message the server sends
    is kept in :attr:`messages` (in order)."""

    def __init__(self, ws: ClientConnection, welcome: p.Welcome) -> None:
        self.ws = ws
        self.player = welcome.player
        self.token = welcome.token
        self.messages: list[Any] = []
        self._req = 0
        self._arrived = asyncio.Event()
        self._reader = asyncio.get_running_loop().create_task(self._read())

    @classmethod
    async def connect(cls, url: str, name: str, *, source: str) -> RawPlayer:
        """Connect to ``url`` from address ``source`` and say hello as a new player."""
        ws = await connect(url, compression=None, local_addr=(source, 0))
        await ws.send(p.encode(p.Hello(name=name)))
        welcome = p.decode(await ws.recv())
        assert isinstance(welcome, p.Welcome), welcome
        return cls(ws, welcome)

    async def _read(self) -> None:
        async for frame in self.ws:
            assert isinstance(frame, bytes)
            self.messages.extend(p.decode_all(frame))
            self._arrived.set()

    async def wait_for(self, check: Any, timeout: float = 20.0) -> Any:
        """The first message kept that ``check`` accepts (waiting for it to come)."""
        async with asyncio.timeout(timeout):
            while True:
                for message in self.messages:
                    if check(message):
                        return message
                self._arrived.clear()
                await self._arrived.wait()

    async def request(self, make: Any) -> Any:
        """Send ``make(req)`` and return its reply (an ``error`` too)."""
        self._req += 1
        req = self._req
        await self.ws.send(p.encode(make(req)))
        return await self.wait_for(lambda m: getattr(m, "req", None) == req)

    async def close(self) -> None:
        await self.ws.close()
        self._reader.cancel()
