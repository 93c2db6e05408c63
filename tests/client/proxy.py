"""A loopback TCP proxy that cuts a websocket link just after forwarding a move, or loses
one ack (test helper).

It forwards bytes both ways and reads the websocket frames going through (client frames are
masked; the client under test sends them uncompressed). When the client's ``cut_at``-th
``move`` frame has been forwarded to the server, it aborts the client's side at once (the
client sees the connection drop without a close frame, code 1006) and keeps the server's
side open until the server's reply to that move (its ack) has arrived, which it drops, so
that the server has applied the move and the client never heard of it. Later connections
are forwarded untouched, but for ``refuse_rejoins``: the first ``joined`` of that many
later connections reaches the client as an ``unavailable`` error to the same request.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from typing import Any

import msgpack

__all__ = ["CuttingProxy"]


async def read_frame(reader: asyncio.StreamReader) -> tuple[bytes, int, bytes]:
    """One websocket frame: its raw bytes, opcode and (unmasked) payload."""
    head = await reader.readexactly(2)
    opcode = head[0] & 0x0F
    masked = head[1] & 0x80
    length = head[1] & 0x7F
    raw = bytearray(head)
    if length == 126:
        ext = await reader.readexactly(2)
        raw += ext
        length = struct.unpack("!H", ext)[0]
    elif length == 127:
        ext = await reader.readexactly(8)
        raw += ext
        length = struct.unpack("!Q", ext)[0]
    mask = b""
    if masked:
        mask = await reader.readexactly(4)
        raw += mask
    payload = await reader.readexactly(length)
    raw += payload
    if masked:
        payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return bytes(raw), opcode, payload


def message_type(opcode: int, payload: bytes) -> str | None:
    if opcode != 2:
        return None
    try:
        data: Any = msgpack.unpackb(payload, raw=False)
    except Exception:
        return None
    return data.get("type") if isinstance(data, dict) else None


class CuttingProxy:
    """Forward ``127.0.0.1:<port>`` to ``target_port``; cut the link once, after the
    ``cut_at``-th move frame a client sends (counted over all connections)."""

    def __init__(
        self,
        target_port: int,
        *,
        cut_at: int | None = None,
        lose_ack: int | None = None,
        refuse_rejoins: int = 0,
    ) -> None:
        self.target_port = target_port
        self.refuse_rejoins = refuse_rejoins
        self.refused = 0
        """``joined`` replies turned into ``unavailable`` so far."""
        self.cut_at = cut_at
        self.lose_ack = lose_ack
        """The seq of an ack to drop once, keeping the link (the client never hears it)."""
        self.moves_seen = 0
        self.cuts = 0
        self.dropped: list[bytes] = []
        """Payloads of the server frames dropped after a cut (the lost ack)."""
        self.connections = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    async def start(self) -> CuttingProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            server_r, server_w = await asyncio.open_connection("127.0.0.1", self.target_port)
        except OSError:
            client_w.transport.abort()
            return
        self._writers |= {client_w, server_w}
        state = {"cutting": False, "refuse": self.connections > 1}
        up = asyncio.create_task(self._upstream(client_r, server_w, client_w, state))
        down = asyncio.create_task(self._downstream(server_r, client_w, server_w, state))
        for task in (up, down):
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _upstream(
        self,
        client_r: asyncio.StreamReader,
        server_w: asyncio.StreamWriter,
        client_w: asyncio.StreamWriter,
        state: dict[str, bool],
    ) -> None:
        try:
            server_w.write(await client_r.readuntil(b"\r\n\r\n"))
            while True:
                raw, opcode, payload = await read_frame(client_r)
                cut = False
                if message_type(opcode, payload) == "move":
                    self.moves_seen += 1
                    cut = self.cut_at is not None and self.moves_seen == self.cut_at
                if cut:
                    state["cutting"] = True
                server_w.write(raw)
                await server_w.drain()
                if cut:
                    self.cuts += 1
                    client_w.transport.abort()
                    return
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        if not state["cutting"]:
            server_w.transport.abort()

    async def _downstream(
        self,
        server_r: asyncio.StreamReader,
        client_w: asyncio.StreamWriter,
        server_w: asyncio.StreamWriter,
        state: dict[str, bool],
    ) -> None:
        try:
            head = await server_r.readuntil(b"\r\n\r\n")
            if not state["cutting"]:
                client_w.write(head)
            while True:
                raw, opcode, payload = await read_frame(server_r)
                if state["cutting"]:
                    self.dropped.append(payload)
                    if message_type(opcode, payload) in ("ack", "error"):
                        break  # the server answered the move: now cut its side too
                    continue
                if (
                    self.lose_ack is not None
                    and message_type(opcode, payload) == "ack"
                    and msgpack.unpackb(payload, raw=False)["seq"] == self.lose_ack
                ):
                    self.lose_ack = None
                    self.dropped.append(payload)
                    continue
                if (
                    state["refuse"]
                    and self.refused < self.refuse_rejoins
                    and message_type(opcode, payload) == "joined"
                ):
                    state["refuse"] = False
                    self.refused += 1
                    raw = _unavailable(msgpack.unpackb(payload, raw=False)["req"])
                client_w.write(raw)
                await client_w.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        with contextlib.suppress(Exception):
            server_w.transport.abort()
        with contextlib.suppress(Exception):
            client_w.transport.abort()


def _unavailable(req: int) -> bytes:
    """A server's (unmasked, binary) frame: an ``unavailable`` error answering ``req``."""
    payload = msgpack.packb(
        {"type": "error", "error": "unavailable", "message": "try again", "req": req}
    )
    assert len(payload) < 126
    return bytes([0x82, len(payload)]) + payload
