"""The websocket connections' I/O edge.

- :mod:`.reading`: the read side, frames from a connection to its session (:func:`read_frames`);
- :mod:`.writing`: the write side, :class:`Connection` (frames, held progress,
  backpressure, close) and everything that reaches below the websockets library's API,
  with its version check (:func:`check_websockets`);
- :mod:`.frames`: event frames built once for every connection that gets them;
- :mod:`.writes`: one write per connection per turn of the event loop.
"""

from __future__ import annotations

from .reading import read_frames
from .writing import (
    BIG_FRAME,
    CLOSE_GOING_AWAY,
    CLOSE_POLICY,
    CLOSE_PROTOCOL,
    CLOSE_RESTART,
    CLOSE_TOO_BIG,
    CLOSE_TRY_LATER,
    HOLD_SLACK,
    RELEASE_CHUNK,
    SUPPORTED,
    Connection,
    EventFrame,
    FrameHandler,
    ServerSide,
    Writes,
    array_header,
    backlog,
    check_websockets,
    server_side,
    stamp,
    wire_frame,
)

__all__ = [
    "BIG_FRAME",
    "CLOSE_GOING_AWAY",
    "CLOSE_POLICY",
    "CLOSE_PROTOCOL",
    "CLOSE_RESTART",
    "CLOSE_TOO_BIG",
    "CLOSE_TRY_LATER",
    "Connection",
    "EventFrame",
    "FrameHandler",
    "HOLD_SLACK",
    "RELEASE_CHUNK",
    "SUPPORTED",
    "ServerSide",
    "Writes",
    "array_header",
    "backlog",
    "check_websockets",
    "read_frames",
    "server_side",
    "stamp",
    "wire_frame",
]
