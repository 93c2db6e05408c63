"""Race affinity: the client's connection goes to its race's URL (``?race=CODE``).

Once the client follows a race, every URL it opens carries ``?race=CODE``
(:func:`~spider_client.connection.race_url`), so that a load balancer hashing on that
parameter puts a race's players and spectators on one node (deploy/README.md): the node
then has every member of the race and publishes nothing for it. After creating, joining or
being matched to a race, the client moves there (:meth:`Affinity.follow`): it opens the
race's URL, says hello with its token, rejoins from the last version seen, and only then
leaves the old connection, so nothing is lost and no
:class:`~spider_client.events.Disconnected` is told.
"""

from __future__ import annotations

import asyncio
import logging
import urllib.parse

from . import protocol as p
from .connection import CONNECT_ERRORS, Connection, race_url
from .mirror import RaceMirror
from .outbox import Outbox

__all__ = ["Affinity", "race_of", "race_url"]

log = logging.getLogger("spider_client")


def race_of(url: str | None) -> str | None:
    """The ``race`` query parameter of ``url`` (None without one)."""
    if url is None:
        return None
    values = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("race")
    return values[-1] if values else None


class Affinity:
    """Moves the client's connection to its race's URL (see the module's docstring)."""

    def __init__(self, connection: Connection, mirror: RaceMirror, outbox: Outbox) -> None:
        self.enabled = connection.options.affinity
        """Open the followed race's URL (``?race=CODE``) and move there after joining."""
        self.moves = 0
        """Times the client moved to its race's URL (not counted in ``reconnects``)."""
        self._connection = connection
        self._mirror = mirror
        self._outbox = outbox

    async def follow(self) -> None:
        """When the URL of the connection does not name the race followed, move to the one
        that does (``?race=CODE``): open it, say hello with the token, rejoin from the last
        version seen, then leave the old connection once what was asked on it is answered
        (or ``resend_after`` seconds passed: the outbox then sends it again on the new
        one). When the move fails the client stays where it is."""
        connection, outbox = self._connection, self._outbox
        code, role, old = self._mirror.code, self._mirror.role, connection.ws
        if not self.enabled or code is None or role is None or old is None or outbox.closing:
            return
        if connection.url is None or race_of(connection.url) == code:
            return
        url = race_url(connection.url, code)
        try:
            async with asyncio.timeout(connection.options.open_timeout):
                ws, welcome = await connection.hello(url)
                try:
                    reply = await connection.rejoin(
                        ws, code, role, self._mirror.version, moved=True
                    )
                except BaseException:
                    await ws.close()
                    raise
        except CONNECT_ERRORS as e:
            log.info("staying on %s: the race's URL %s failed: %r", connection.url, url, e)
            return
        if connection.ws is not old or outbox.closing or not isinstance(reply, p.Joined):
            await ws.close()  # dropped meanwhile (the reconnect took over), or refused
            return
        waiting = outbox.waiting()
        connection.move_to(ws, url, welcome)  # what is sent from now on goes there
        self.moves += 1
        try:
            if waiting:
                await asyncio.wait(waiting, timeout=outbox.resend_after)
        finally:  # even when the caller is cancelled meanwhile
            await old.close()  # the reader then goes on with the new connection
