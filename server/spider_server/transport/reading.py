"""The transport's read side: frames from a websocket connection to its session, one at a
time, in order (the way out is :mod:`.writing`)."""

from __future__ import annotations

import asyncio
import contextlib

import websockets

from .writing import Connection, FrameHandler

__all__ = ["read_frames"]


async def read_frames(conn: Connection, session: FrameHandler) -> None:
    """Read frames and hand them to ``session`` until the connection closes."""
    writer = conn.start(session)
    try:
        while True:
            timeout = conn.settings.ping_timeout if conn.closing else session.read_timeout()
            try:
                if timeout is None:  # in a race: no idle limit (and no timer per frame)
                    frame = await conn.ws.recv()
                else:
                    async with asyncio.timeout(timeout):
                        frame = await conn.ws.recv()
            except TimeoutError:
                if conn.closing:
                    break
                session.timed_out()
                continue
            except websockets.ConnectionClosed:
                break
            if not conn.closing:  # once closing, frames are read only to reach the close
                await session.handle(frame)
    finally:
        conn.end()
        with contextlib.suppress(asyncio.CancelledError):
            await writer
        conn.forget_queued()
        session.ended()
