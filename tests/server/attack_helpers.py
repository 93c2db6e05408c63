"""Clients that misbehave on purpose, over real sockets: a raw websocket handshake (with a
PROXY protocol line or headers of one's choosing), masked frames written by hand, the
node's resident memory."""

from __future__ import annotations

import asyncio
import base64
import os
import socket
import struct
from typing import Any

import msgpack

from spider_client import protocol as p

__all__ = [
    "client_frame",
    "handshake",
    "http_status",
    "rss_mb",
    "server_messages",
    "wait_for",
]


def rss_mb() -> float:
    """This process's resident memory (the in-process node's), in MB."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def client_frame(opcode: int, payload: bytes) -> bytes:
    """One masked client frame (RFC 6455 §5.2)."""
    mask = os.urandom(4)
    n = len(payload)
    if n < 126:
        head = bytes((0x80 | opcode, 0x80 | n))
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0xFE, n)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0xFF, n)
    masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    return head + mask + masked


def hello_frame(name: str = "attacker", token: str | None = None) -> bytes:
    return client_frame(0x2, p.encode(p.Hello(name=name, token=token)))


def map_frame(fields: dict[str, Any]) -> bytes:
    return client_frame(0x2, msgpack.packb(fields, use_bin_type=True))


def handshake(
    port: int, *, prefix: bytes = b"", headers: dict[str, str] | None = None, rcvbuf: int = 0
) -> tuple[socket.socket, bytes]:
    """A blocking socket through the websocket handshake on ``/ws`` (``prefix`` sent
    first, e.g. a PROXY line); the socket and the response's head."""
    sock = socket.socket()
    if rcvbuf:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET /ws HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
        *(f"{k}: {v}" for k, v in (headers or {}).items()),
    ]
    head = b""
    try:
        sock.sendall(prefix + ("\r\n".join(lines) + "\r\n\r\n").encode())
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head += chunk
    except ConnectionResetError:  # refused at once: no response
        pass
    return sock, head


def http_status(head: bytes) -> int:
    """The status code of a response's head (0: no response, the connection was reset or
    closed)."""
    parts = head.split(b" ", 2)
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


async def wait_for(check: Any, timeout: float = 10.0) -> bool:
    """Whether ``check()`` became true within ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if check():
            return True
        await asyncio.sleep(0.05)
    return bool(check())


def _frame_at(data: bytes) -> tuple[int, int, int] | None:
    """(opcode, payload start, payload end) of the whole server frame at the start of
    ``data``; None when it is not all there yet."""
    if len(data) < 2:
        return None
    n, at = data[1] & 0x7F, 2
    if n == 126:
        if len(data) < 4:
            return None
        n, at = struct.unpack("!H", data[2:4])[0], 4
    elif n == 127:
        if len(data) < 10:
            return None
        n, at = struct.unpack("!Q", data[2:10])[0], 10
    return (data[0] & 0x0F, at, at + n) if len(data) >= at + n else None


def server_messages(sock: socket.socket, count: int) -> list[dict[str, Any]]:
    """Read ``count`` messages from a raw socket (the server's unmasked binary frames,
    each a msgpack map), blocking."""
    data, messages = b"", list[dict[str, Any]]()
    while len(messages) < count:
        found = _frame_at(data)
        if found is None:
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError(f"closed after {len(messages)} messages")
            data += chunk
            continue
        opcode, start, end = found
        if opcode == 0x2:
            messages.append(msgpack.unpackb(data[start:end], raw=False))
        data = data[end:]
    return messages
