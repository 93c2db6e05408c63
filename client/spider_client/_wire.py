"""The one module of the client that reaches under the websockets library's public API.

An action's frame is written to the connection's transport in the caller's turn of the
event loop (:func:`write_now`), instead of going through ``await ws.send``, which takes a
lock and a few more turns of the loop before the bytes leave; a bot that sends a move and
waits for its ack gains that on every move. Doing so reads attributes that websockets does
not document (``send_in_progress``, ``paused``, ``transport``, ``send_data``), so this
module checks that they exist: the class's at import (:func:`check_library`), a new
connection's when it is opened (:func:`check_connection`, through :func:`open_websocket`,
the only way the client opens one). When one is missing, the error is
:class:`~spider_client.errors.UnsupportedWebsockets`, naming the versions supported
(:data:`SUPPORTED_WEBSOCKETS`), before a race starts rather than an ``AttributeError`` in
the middle of one. Everything else in the client uses websockets' public API only.
"""

from __future__ import annotations

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.protocol import Protocol, State
from websockets.version import version as websockets_version

from .errors import UnsupportedWebsockets

__all__ = [
    "SUPPORTED_WEBSOCKETS",
    "CONNECTION_ATTRIBUTES",
    "check_library",
    "check_connection",
    "open_websocket",
    "write_now",
]

SUPPORTED_WEBSOCKETS = "websockets 16.0 to 17.x"
"""The versions whose internals :func:`write_now` relies on (``send_in_progress`` came
in 16.0; the client is tested against 17)."""

CONNECTION_ATTRIBUTES = ("protocol", "transport", "paused", "send_in_progress")
"""What :func:`write_now` reads on a connection besides its public API."""


def _unsupported(missing: str) -> UnsupportedWebsockets:
    return UnsupportedWebsockets(
        f"spider_client needs {SUPPORTED_WEBSOCKETS} (it writes frames to the connection's "
        f"transport); the installed websockets {websockets_version} has no {missing}"
    )


def check_library(connection: type = ClientConnection, protocol: type = Protocol) -> None:
    """Check that the websockets classes have the methods :func:`write_now` calls (run at
    import); raises :class:`UnsupportedWebsockets` naming the first one missing."""
    for cls, name in ((connection, "send_data"), (protocol, "send_binary")):
        if not callable(getattr(cls, name, None)):
            raise _unsupported(f"{cls.__name__}.{name}")
    if not hasattr(State, "OPEN"):
        raise _unsupported("State.OPEN")


def check_connection(ws: ClientConnection) -> None:
    """Check that an open connection has the attributes :func:`write_now` reads; raises
    :class:`UnsupportedWebsockets` naming the first one missing."""
    for name in CONNECTION_ATTRIBUTES:
        if not hasattr(ws, name):
            raise _unsupported(f"ClientConnection.{name}")


async def open_websocket(url: str, *, open_timeout: float) -> ClientConnection:
    """Open a websocket to ``url`` the way the client talks to the server (no compression,
    frames up to 4 MiB) and check it (:func:`check_connection`; closed again when the check
    fails). Raises what ``websockets.asyncio.client.connect`` raises."""
    ws = await ws_connect(
        url,
        compression=None,
        open_timeout=open_timeout,
        max_size=2**22,
        user_agent_header="spider-client",
    )
    try:
        check_connection(ws)
    except UnsupportedWebsockets:
        await ws.close()
        raise
    return ws


def write_now(ws: ClientConnection, data: bytes) -> bool:
    """Write ``data`` as one binary frame at once, as ``ws.send`` would, when nothing can
    hold it up: the connection is open, no fragmented message is on its way and the
    transport takes writes. False: the caller sends it the usual way."""
    if (
        ws.protocol.state is not State.OPEN
        or ws.send_in_progress is not None
        or ws.paused
        or ws.transport.is_closing()
    ):
        return False
    ws.protocol.send_binary(data)
    try:
        ws.send_data()
    except Exception:  # the transport failed: the reader sees the drop and reconnects
        ws.transport.abort()
    return True


check_library()
