"""Validation of incoming frames: msgpack, then one strict pydantic discriminated union.

:data:`ADAPTER` is a module-level ``TypeAdapter`` over
``Annotated[Hello | CreateRace | ..., Field(discriminator="type")]`` of the protocol's
client dataclasses, in strict mode: a ``"3"`` where an int belongs, a ``1`` where a bool
belongs, an unknown ``role``, a missing field — each is an error, never coerced. Fields a
message does not have are ignored (a newer client may send more).

Pydantic's strict mode asks a stdlib dataclass for an instance of itself rather than a
mapping; a frame is a mapping, so the validator is built from the adapter's core schema
with only that outer instance check relaxed: every field keeps its strictness.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any

import msgpack
from pydantic import ConfigDict, Field, TypeAdapter, ValidationError
from pydantic_core import SchemaValidator

from spider_client.protocol import CLIENT_TYPES, ClientMessage

from ..errors import BadFrame, InvalidMessage

__all__ = ["ADAPTER", "parse_frame"]

ClientFrame = Annotated[ClientMessage, Field(discriminator="type")]

ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(ClientFrame, config=ConfigDict(strict=True))


def _accept_mappings(schema: Any) -> Any:
    if isinstance(schema, dict):
        if schema.get("type") == "dataclass":
            schema["strict"] = False  # the fields stay strict (their config says so)
        for value in schema.values():
            _accept_mappings(value)
    elif isinstance(schema, list):
        for value in schema:
            _accept_mappings(value)
    return schema


_VALIDATOR = SchemaValidator(_accept_mappings(copy.deepcopy(ADAPTER.core_schema)))


def parse_frame(frame: bytes) -> ClientMessage:
    """The message in a binary frame. BadFrame when it is not a msgpack map with a known
    ``type``; InvalidMessage (its ``req`` kept in ``.req`` when readable) when a field is
    missing or of the wrong type."""
    try:
        data = msgpack.unpackb(frame, raw=False)
    except Exception:  # msgpack raises several unrelated types for malformed input
        raise BadFrame("the frame is not valid msgpack") from None
    if not isinstance(data, dict):
        raise BadFrame("the frame is not a msgpack map")
    kind = data.get("type")
    if not isinstance(kind, str) or kind not in CLIENT_TYPES:
        raise BadFrame(f"unknown message type {kind!r}")
    try:
        message: ClientMessage = _VALIDATOR.validate_python(data)
        return message
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"][1:]) or kind
        req = data.get("req")
        raise InvalidMessage(
            f"{kind}: {where}: {first['msg']}", req=req if type(req) is int else None
        ) from None
