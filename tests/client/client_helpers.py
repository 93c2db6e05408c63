"""Helpers for the client's tests against real server nodes."""

from __future__ import annotations

import asyncio
from typing import Any

from spider_client import Client
from spider_engine import Board

__all__ = ["Collector", "server_view", "server_game", "FAST"]

FAST: dict[str, Any] = {"rate": 2000.0, "burst": 2000}
"""Node settings for tests that play many moves quickly (the default rate limit is for
people)."""


async def server_game(node: Any, code: str, player: str) -> Any:
    """The player's game as the server keeps it in Redis."""
    game = await node.node.store.races.load_game(code, player)
    assert game is not None
    return game


async def server_view(node: Any, code: str, player: str) -> str:
    """The server's view of the player: their game in Redis, as the player may see it."""
    game = await server_game(node, code, player)
    return Board.from_text(game.position).view_text()


class Collector:
    """Collects everything ``client.events()`` yields, in the background."""

    def __init__(self, client: Client) -> None:
        self.events: list[Any] = []
        self._new = asyncio.Event()
        self.task = asyncio.create_task(self._run(client))

    async def _run(self, client: Client) -> None:
        async for event in client.events():
            self.events.append(event)
            self._new.set()

    def of(self, kind: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    async def wait_for(self, kind: type, *, timeout: float = 20.0) -> Any:
        async with asyncio.timeout(timeout):
            while True:
                found = self.of(kind)
                if found:
                    return found[0]
                self._new.clear()
                await self._new.wait()
