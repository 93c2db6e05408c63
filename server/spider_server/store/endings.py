"""Connections ended by their account, on every node: a deleted account's, a revoked API
token's. A node that deletes or revokes publishes it on :data:`ACCOUNTS_CHANNEL`; every
node hears it (:mod:`..runners.endings`) and closes its matching connections.

The channel's name is kept here rather than in :mod:`.keys` (which is at its size): ::

    {accounts}:ch                 channel pub/sub: ``player\t<id>`` (a deleted account's
                                          connections end) or ``token\t<id>`` (a revoked
                                          API token's)
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from .codec import text
from .guard import as_unavailable
from .redisconn import read_message

__all__ = ["ACCOUNTS_CHANNEL", "EndingStore"]

ACCOUNTS_CHANNEL = "{accounts}:ch"
"""The channel of the connections to end (see the module)."""


class EndingStore:
    """The channel of ended accounts and tokens."""

    def __init__(self, redis: Any) -> None:
        self.redis = redis

    async def account_deleted(self, player: str) -> None:
        """Every node ends the connections that speak for the account of ``player``."""
        with as_unavailable:
            await self.redis.publish(ACCOUNTS_CHANNEL, f"player\t{player}")

    async def token_revoked(self, token: int) -> None:
        """Every node ends the connections that said hello with API token ``token``."""
        with as_unavailable:
            await self.redis.publish(ACCOUNTS_CHANNEL, f"token\t{token}")

    async def messages(self) -> AsyncIterator[tuple[str, str]]:
        """(what, id) of every ending published from the moment of subscribing (a
        connection of its own; ends only by an error)."""
        pubsub = self.redis.pubsub()
        try:
            with as_unavailable:
                await pubsub.subscribe(ACCOUNTS_CHANNEL)
            while True:
                with as_unavailable:
                    message = await read_message(pubsub, ignore_subscribe_messages=True, timeout=1)
                if message is not None and message.get("type") == "message":
                    what, _, ident = text(message["data"]).partition("\t")
                    yield what, ident
        finally:
            with as_unavailable:
                await pubsub.aclose()
