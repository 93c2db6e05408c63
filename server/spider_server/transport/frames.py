"""Frames built once: an event's websocket frame is the same bytes for every recipient.

- a frame is framed once, not once per recipient (``ServerConnection.send`` would frame
  it again for every connection): what is done per recipient is kept to appending bytes
  (``spider-race bench server --spectators``, README, "Under load");
- :func:`stamp` adds an event's version by patching the stored msgpack map instead of
  decoding and encoding it again, for every dispatch and catch-up;
- :func:`spliced_map` makes a map of fields encoded now and values encoded once before (a
  finished race's replays, shared by every ``joined`` of it): still one msgpack map.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgpack

__all__ = ["EventFrame", "array_header", "map_header", "spliced_map", "stamp", "wire_frame"]


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


def map_header(n: int) -> bytes:
    """The msgpack header of a map of ``n`` pairs."""
    if n < 16:
        return bytes((0x80 | n,))
    if n < 1 << 16:
        return struct.pack("!BH", 0xDE, n)
    return struct.pack("!BI", 0xDF, n)


def spliced_map(
    packed: bytes,
    n: int,
    encoded: dict[str, bytes | list[bytes]],
    *,
    pack: Callable[[Any], bytes],
) -> list[bytes]:
    """The pieces (joined, one msgpack map) of the map ``packed`` (``n`` pairs, as
    ``pack`` made it) with the pairs of ``encoded`` added: each key's value is given
    already encoded (bytes, or pieces of them: the same bytes in every map they go into).
    ``packed`` must not hold those keys; ValueError when it is not a map of ``n`` pairs."""
    header = map_header(n)
    if not packed.startswith(header):
        raise ValueError("not the encoding of a map of that many pairs")
    pieces = [map_header(n + len(encoded)), packed[len(header) :]]
    for key, value in encoded.items():
        pieces.append(pack(key))
        if isinstance(value, bytes):
            pieces.append(value)
        else:
            pieces += value
    return pieces


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
