"""Race affinity: the client's connection goes to its race's URL (``?race=CODE``).

Once the client follows a race, every URL it opens carries ``?race=CODE``
(:func:`race_url`), so that a load balancer hashing on that parameter puts a race's players
and spectators on one node (deploy/README.md): the node then has every member of the race
and publishes nothing for it. After creating, joining or being matched to a race, the
client moves there (:meth:`RaceAffinity._follow`): it opens the race's URL, says hello
with its token, rejoins from the last version seen, and only then leaves the old
connection, so nothing is lost and no :class:`~spider_client.events.Disconnected` is told.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from . import protocol as p
from .errors import ServerError
from .mirror import RaceMirror
from .outbox import Outbox

__all__ = ["CONNECT_ERRORS", "RaceAffinity", "race_of", "race_url"]

log = logging.getLogger("spider_client")

CONNECT_ERRORS = (
    OSError,
    InvalidHandshake,
    InvalidURI,
    ConnectionClosed,
    TimeoutError,
    ServerError,
    ValueError,
)
"""What a failed attempt to connect and say hello may raise."""


def race_url(url: str, code: str | None) -> str:
    """``url`` with its ``race`` query parameter set to ``code`` (the other parameters
    kept); ``url`` itself when ``code`` is None."""
    if code is None:
        return url
    parts = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k != "race"]
    query.append(("race", code))
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))


def race_of(url: str | None) -> str | None:
    """The ``race`` query parameter of ``url`` (None without one)."""
    if url is None:
        return None
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("race")
    return values[-1] if values else None


class RaceAffinity:
    """The moving part of :class:`~spider_client.connection.Connection` (its base)."""

    mirror: RaceMirror
    url: str | None
    affinity: bool
    """Open the followed race's URL (``?race=CODE``) and move there after joining."""
    moves: int
    """Times the client moved to its race's URL (not counted in ``reconnects``)."""
    open_timeout: float
    resend_after: float
    _ws: ClientConnection | None
    _outbox: Outbox

    async def _hello(self, url: str) -> tuple[ClientConnection, p.Welcome]:
        raise NotImplementedError

    def _welcomed(self, url: str, message: p.Welcome) -> None:
        raise NotImplementedError

    def _dispatch(self, frame: bytes | str) -> list[Any]:
        raise NotImplementedError

    async def _follow(self) -> None:
        """Race affinity: when the URL of the connection does not name the race followed,
        move to the one that does (``?race=CODE``): open it, say hello with the token,
        rejoin from the last version seen, then leave the old connection once what was
        asked on it is answered (or ``resend_after`` seconds passed: the outbox then sends
        it again on the new one). When the move fails the client stays where it is."""
        code, role, old = self.mirror.code, self.mirror.role, self._ws
        if not self.affinity or code is None or role is None or old is None or self._outbox.closing:
            return
        if self.url is None or race_of(self.url) == code:
            return
        url = race_url(self.url, code)
        try:
            async with asyncio.timeout(self.open_timeout):
                ws, welcome = await self._hello(url)
                try:
                    reply = await self._rejoin(ws, code, role, self.mirror.version, moved=True)
                except BaseException:
                    await ws.close()
                    raise
        except CONNECT_ERRORS as e:
            log.info("staying on %s: the race's URL %s failed: %r", self.url, url, e)
            return
        if self._ws is not old or self._outbox.closing or not isinstance(reply, p.Joined):
            await ws.close()  # dropped meanwhile (the reconnect took over), or refused
            return
        self._welcomed(url, welcome)
        waiting = self._outbox.waiting()
        self._ws = ws  # what is sent from now on goes on the new connection
        self.moves += 1
        try:
            if waiting:
                await asyncio.wait(waiting, timeout=self.resend_after)
        finally:  # even when the caller is cancelled meanwhile
            await old.close()  # the reader then goes on with the new connection

    async def _rejoin(
        self, ws: ClientConnection, code: str, role: str, since: int, *, moved: bool = False
    ) -> Any:
        """Send a join of ``code`` since ``since`` on ``ws`` and return its reply (a
        ``joined`` or an ``error``), taking in what comes meanwhile."""
        req = self._outbox.next_req()
        join = p.Join(req=req, code=code, role=role, since=since, moved=moved)  # type: ignore[arg-type]
        await ws.send(p.encode(join))
        while True:
            for message in self._dispatch(await ws.recv()):
                if isinstance(message, p.Joined | p.Error) and message.req == req:
                    return message
