"""Ending the connections of a deleted account, or of a revoked API token, on every node.

:meth:`Endings.run` listens to :class:`~..store.endings.EndingStore`'s channel and closes
this node's matching connections: each is told ``bad_token`` (why) and closed with 1008.
A connection that is not an account's (a guest's) is never touched. A message lost while
Redis does not answer leaves the connection open until it closes (a new hello with its
token or session is refused anyway).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Iterable
from typing import Any

from ..errors import Unavailable
from ..store.endings import EndingStore
from ..store.redisconn import raise_if_cancelled
from ..transport import CLOSE_POLICY

__all__ = ["Endings", "end_matching"]

log = logging.getLogger(__name__)

_WHY = {
    "player": "this account was deleted: its connections end",
    "token": "this API token was revoked: its connections end",
}


def end_matching(sessions: Iterable[Any], what: str, ident: str) -> int:
    """End the ``sessions`` (:class:`~..session.Session`) that ``what`` (``player`` or
    ``token``) and ``ident`` name; how many."""
    ended = 0
    for session in sessions:
        who = getattr(session, "identity", None)
        if who is None or not who.account:
            continue
        if (what == "player" and who.player == ident) or (
            what == "token"
            and getattr(session, "token_id", None) is not None
            and str(session.token_id) == ident
        ):
            session.error("bad_token", _WHY[what])
            session.close(CLOSE_POLICY, _WHY[what][:100])
            ended += 1
    return ended


class Endings:
    """This node's side of the channel: ``connections`` are the node's (each with its
    ``session``), as they are when a message comes."""

    def __init__(self, store: EndingStore, connections: Collection[Any]) -> None:
        self.store = store
        self.connections = connections

    async def run(self) -> None:
        """Listen until cancelled (again after an error, half a second later)."""
        while True:
            try:
                async for what, ident in self.store.messages():
                    if what in _WHY:
                        sessions = [getattr(c, "session", None) for c in list(self.connections)]
                        end_matching([s for s in sessions if s is not None], what, ident)
            except Unavailable:
                raise_if_cancelled()
                await asyncio.sleep(0.5)
            except Exception:
                raise_if_cancelled()
                log.exception("the accounts' endings feed failed")
                await asyncio.sleep(0.5)
