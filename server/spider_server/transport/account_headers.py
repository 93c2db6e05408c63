"""What the accounts' HTTP routes read from a request's headers (they carry no body), and
the :class:`Reply` they answer: shared by :mod:`.accounts_http` and :mod:`.account_keys_http`."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..accounts import Malformed

__all__ = [
    "MAX_HEADER",
    "MAX_WEBAUTHN",
    "Headers",
    "Reply",
    "b64_text",
    "b64url_text",
    "basic",
    "one",
]

MAX_HEADER = 6000
"""The longest ``Authorization``, ``X-New-Password`` or ``Cookie`` looked at."""
MAX_WEBAUTHN = 8000
"""The longest ``X-WebAuthn`` (a passkey's answer) taken: within the 8 KiB line that the
websocket server reads a header in."""


class Headers(Protocol):
    def get_all(self, key: str) -> list[str]: ...


@dataclass
class Reply:
    """An answer: status, JSON body, and headers by keyword (``set_cookie``, ...)."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def one(headers: Headers, name: str, *, limit: int = MAX_HEADER) -> str | None:
    """The one value of header ``name`` (None: not sent); :class:`Malformed` when it is
    sent twice or is longer than ``limit``."""
    values = headers.get_all(name)
    if len(values) > 1:
        raise Malformed(f"more than one {name} header")
    if not values:
        return None
    if len(values[0]) > limit:
        raise Malformed(f"the {name} header is too long (at most {limit} characters)")
    return values[0]


def b64_text(text: str, what: str) -> str:
    """The UTF-8 text of base64 ``text`` (:class:`Malformed`, naming ``what``, if not)."""
    try:
        return base64.b64decode(text.strip(), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise Malformed(f"{what}: not base64 of UTF-8 text") from None


def b64url_text(text: str, what: str) -> str:
    """The UTF-8 text of base64url ``text``, padded or not (:class:`Malformed` if not)."""
    raw = text.strip()
    try:
        return base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode("utf-8")
    except (binascii.Error, ValueError):
        raise Malformed(f"{what}: not base64url of UTF-8 text") from None


def basic(headers: Headers) -> tuple[str, str]:
    """The name and password of ``Authorization: Basic``."""
    value = one(headers, "Authorization")
    if value is None:
        raise Malformed("give the name and password as Authorization: Basic base64(name:password)")
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "basic" or not credentials:
        raise Malformed("Authorization: Basic base64(name:password) is expected")
    name, sep, password = b64_text(credentials, "Authorization").partition(":")
    if not sep or not name:
        raise Malformed("Authorization: Basic base64(name:password), with the colon")
    return name, password
