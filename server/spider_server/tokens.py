"""Session tokens: who a connection speaks for, signed with the deployment's secret.

A token is ``v1.<payload>.<signature>``: the payload is URL-safe base64 (no padding) of
JSON ``{"p": player id, "n": display name, "t": issue time}``, the signature URL-safe base64
of HMAC-SHA256(secret, ``"v1." + payload``). Every node of one deployment shares the secret,
so any node accepts any node's tokens; without the secret no one can make or alter one.

The secret comes from the environment (``SPIDER_RACE_SECRET``) or, when none is given, is
generated once and kept in ``<data dir>/token-secret`` (mode 0600).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

from .errors import BadToken

__all__ = ["Identity", "issue", "verify", "load_secret", "new_player_id"]

_VERSION = "v1"
SECRET_FILE = "token-secret"


@dataclass(frozen=True)
class Identity:
    """A player as a token names them."""

    player: str
    name: str


def new_player_id() -> str:
    """A fresh player id: ``p`` and 12 hex digits."""
    return "p" + secrets.token_hex(6)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: bytes, signed: str) -> str:
    return _b64(hmac.new(secret, signed.encode("ascii"), hashlib.sha256).digest())


def issue(secret: bytes, identity: Identity, *, now: float | None = None) -> str:
    """A token for ``identity``."""
    body = {"p": identity.player, "n": identity.name, "t": int(time.time() if now is None else now)}
    payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    signed = f"{_VERSION}.{payload}"
    return f"{signed}.{_sign(secret, signed)}"


def verify(secret: bytes, token: str) -> Identity:
    """The identity a token names; :class:`BadToken` when it is malformed, altered, or
    signed with another secret. Constant-time comparison of the signature."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3 or parts[0] != _VERSION:
        raise BadToken("malformed session token")
    signed = f"{parts[0]}.{parts[1]}"
    if not hmac.compare_digest(_sign(secret, signed), parts[2]):
        raise BadToken("the session token's signature does not match")
    try:
        body = json.loads(_unb64(parts[1]))
        player, name = body["p"], body["n"]
    except (ValueError, KeyError, TypeError):
        raise BadToken("malformed session token") from None
    if not isinstance(player, str) or not isinstance(name, str):
        raise BadToken("malformed session token")
    return Identity(player, name)


def load_secret(configured: str | None, data_dir: Path) -> bytes:
    """The token secret: ``configured`` when given, else the one kept in ``data_dir``
    (created with 32 random bytes on first use; every later call returns the same)."""
    if configured:
        return configured.encode("utf-8")
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        text = path.read_text("ascii").strip()
        if text:
            return text.encode("ascii")
        raise
    with os.fdopen(fd, "w") as f:
        text = secrets.token_hex(32)
        f.write(text + "\n")
    return text.encode("ascii")
