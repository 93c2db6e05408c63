"""Frames built once: an event's websocket frame is the same bytes for every recipient.

- a frame is framed once, not once per recipient (``ServerConnection.send`` would frame
  it again for every connection): what is done per recipient is kept to appending bytes
  (``spider-race bench server --spectators``, README, "Under load");
- :func:`stamp` adds an event's version by patching the stored msgpack map instead of
  decoding and encoding it again, for every dispatch and catch-up.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

import msgpack

__all__ = ["EventFrame", "array_header", "stamp", "wire_frame"]


def wire_frame(payload: bytes) -> bytes:
    """``payload`` as one unfragmented, unmasked binary websocket frame (RFC 6455 §5.2):
    what a server sends without compression, the same bytes for every connection."""
    n = len(payload)
    if n < 126:
        head = bytes((0x82, n))
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x82, 126, n)
    else:
        head = struct.pack("!BBQ", 0x82, 127, n)
    return head + payload


def array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` items: followed by the items' encodings,
    several frames make one."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return struct.pack("!BH", 0xDC, n)
    return struct.pack("!BI", 0xDD, n)


_VERSION_KEY = msgpack.packb("version")


def stamp(version: int, data: bytes) -> tuple[bytes, dict[str, Any]]:
    """The frame of a stored event with its version, and the event as a map."""
    fields = msgpack.unpackb(data, raw=False)
    n = len(fields)
    fields["version"] = version
    if n < 15 and data[0] == 0x80 | n and len(fields) == n + 1:
        # a small map without a version: the same bytes with the version added at the end
        frame = bytes((0x80 | (n + 1),)) + data[1:] + _VERSION_KEY + msgpack.packb(version)
        return frame, fields
    return bytes(msgpack.packb(fields, use_bin_type=True)), fields


@dataclass(frozen=True)
class EventFrame:
    """One event ready to send: its version, audience, frame bytes and fields."""

    version: int
    audience: str
    frame: bytes
    fields: dict[str, Any]
    type: str = field(init=False)
    """The event's type (read once)."""
    wire: bytes = field(init=False, repr=False)
    """The frame as a server's websocket frame, built once for every recipient."""
    about: tuple[str, str] = field(init=False, repr=False)
    """(race, player) of a ``progress`` event: a player is sent only the latest of each."""

    def __post_init__(self) -> None:
        kind = str(self.fields.get("type", ""))
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "wire", wire_frame(self.frame))
        info = self.fields.get("player") if kind == "progress" else None
        player = info.get("player") if isinstance(info, dict) else None
        object.__setattr__(self, "about", (str(self.fields.get("race")), str(player)))

    @classmethod
    def stored(cls, version: int, audience: str, data: bytes) -> EventFrame:
        """The event of a stored one (see :func:`stamp`)."""
        frame, fields = stamp(version, data)
        return cls(version, audience, frame, fields)
