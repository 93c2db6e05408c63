"""The check in front of the client's one reach under websockets' API: a websockets without
what the client writes frames through is refused at import or connect, by name and with
the versions supported, not with an AttributeError in the middle of a race."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import ClientConnection
from websockets.asyncio.server import ServerConnection, serve
from websockets.protocol import Protocol

from spider_client import Client, UnsupportedWebsockets, _wire


@pytest.fixture
async def plain_server() -> AsyncIterator[tuple[str, list[ServerConnection]]]:
    """A plain websockets server on loopback that keeps every connection until it closes."""
    seen: list[ServerConnection] = []

    async def handler(ws: ServerConnection) -> None:
        seen.append(ws)
        await ws.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        yield f"ws://127.0.0.1:{port}/ws", seen


def test_the_installed_websockets_passes() -> None:
    _wire.check_library()


@pytest.mark.parametrize(
    ("connection", "protocol", "missing"),
    [
        (type("OldConnection", (), {}), Protocol, "OldConnection.send_data"),
        (ClientConnection, type("OldProtocol", (), {}), "OldProtocol.send_binary"),
    ],
)
def test_a_library_without_the_methods_is_refused_by_name(
    connection: type, protocol: type, missing: str
) -> None:
    with pytest.raises(UnsupportedWebsockets) as caught:
        _wire.check_library(connection, protocol)
    assert missing in str(caught.value)
    assert _wire.SUPPORTED_WEBSOCKETS in str(caught.value)


async def test_a_connection_is_checked_when_it_opens(plain_server) -> None:
    url, _ = plain_server
    ws = await _wire.open_websocket(url, open_timeout=5)
    try:
        _wire.check_connection(ws)  # what websockets has today
        del ws.send_in_progress  # as before websockets 16
        with pytest.raises(UnsupportedWebsockets) as caught:
            _wire.check_connection(ws)
        assert "ClientConnection.send_in_progress" in str(caught.value)
        assert _wire.SUPPORTED_WEBSOCKETS in str(caught.value)
    finally:
        ws.send_in_progress = None
        await ws.close()


async def test_connect_refuses_a_connection_without_an_attribute(
    plain_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, seen = plain_server
    monkeypatch.setattr(
        _wire, "CONNECTION_ATTRIBUTES", (*_wire.CONNECTION_ATTRIBUTES, "a_later_attribute")
    )
    with pytest.raises(UnsupportedWebsockets, match="ClientConnection.a_later_attribute"):
        await Client.connect(url, name="ada", open_timeout=5)
    # the websocket it opened is closed again, not left behind
    assert len(seen) == 1
    async with asyncio.timeout(5):
        await seen[0].wait_closed()
