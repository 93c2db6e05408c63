"""Clients of one address that come back at once, again and again, after the node refused
them a new player: the websocket handshake with the address in ``X-Forwarded-For`` (the
node trusts the loopback as its load balancer), a hello without a token when the upgrade
is granted, and at once the next connection whatever the answer (``Retry-After`` and the
1013 close's time ignored, as an attacker would).

Run in a process of its own (the node's event loop keeps its process's interpreter):
``python -m tests.server.refusal_flood PORT ADDRESS SECONDS TASKS``; it prints what the
attempts were answered, as JSON on one line: ``attempts``, ``http_429``, ``closed_1013``,
``welcomed``, ``other`` (reset, or any other answer)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import struct
import sys
import time
from collections import Counter

import msgpack

from tests.server.attack_helpers import hello_frame

__all__ = ["flood"]


async def _frame(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """The next server frame (unmasked): its opcode and payload."""
    head = await reader.readexactly(2)
    n = head[1] & 0x7F
    if n == 126:
        n = struct.unpack("!H", await reader.readexactly(2))[0]
    elif n == 127:
        n = struct.unpack("!Q", await reader.readexactly(8))[0]
    return head[0] & 0x0F, await reader.readexactly(n)


async def _attempt(port: int, request: bytes, hello: bytes) -> str:
    """One connection: what it was answered."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        status = head.split(b" ", 2)[1]
        if status == b"429":
            return "http_429"
        if status != b"101":
            return "other"
        writer.write(hello)
        while True:
            opcode, payload = await _frame(reader)
            if opcode == 0x8:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else 0
                return "closed_1013" if code == 1013 else "other"
            if opcode == 0x2 and msgpack.unpackb(payload, raw=False).get("type") == "welcome":
                return "welcomed"
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return "other"
    finally:
        writer.close()


async def _loop(port: int, address: str, deadline: float, counts: Counter[str]) -> None:
    hello = hello_frame("again")
    while time.monotonic() < deadline:
        key = base64.b64encode(os.urandom(16)).decode()
        request = (
            "GET /ws HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{port}\r\n"
            "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"X-Forwarded-For: {address}\r\n\r\n"
        ).encode()
        counts[await _attempt(port, request, hello)] += 1
        counts["attempts"] += 1


async def flood(port: int, address: str, seconds: float, tasks: int) -> Counter[str]:
    """``tasks`` clients from ``address`` reconnecting without pause for ``seconds``."""
    counts: Counter[str] = Counter()
    deadline = time.monotonic() + seconds
    await asyncio.gather(*(_loop(port, address, deadline, counts) for _ in range(tasks)))
    return counts


def main(argv: list[str]) -> None:
    port, address, seconds, tasks = int(argv[0]), argv[1], float(argv[2]), int(argv[3])
    counts = asyncio.run(flood(port, address, seconds, tasks))
    print(json.dumps(dict(counts)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
