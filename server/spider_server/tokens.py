"""Session tokens: who a connection speaks for, signed with the deployment's secret.

A guest's token is ``g1.v1.<payload>.<signature>`` (``g1.`` tells it from an account's
session token, ``s1.`` and 32 random bytes in URL-safe base64, and from a personal API
token, ``a1.`` and the same, both kept by the accounts, not signed:
:func:`new_session_token`, :func:`kind`; tokens issued before the
prefix, without it, are still accepted): the payload is URL-safe base64 (no padding) of
JSON ``{"p": player id, "n": display name, "t": issue time}`` (``t`` in whole seconds of
the Unix epoch), the signature URL-safe base64 of HMAC-SHA256(secret, ``"v1." +
payload``). Every node of one deployment shares the secret, so any node accepts any
node's tokens; without the secret no one can make or alter one.

The secret is a list (a :class:`Keyring`): tokens are signed with the first secret and
verified with each in turn, so a deployment rotates its secret by putting a new one first
(tokens already given out still verify) and later dropping the old one (they no longer
do). With a maximum age, a token issued longer ago than that is refused, and so is a
token without an issue time (every token issued has one; without a maximum age such a
token is accepted). Every ``welcome`` carries a freshly issued token, so the age counts from a player's last
connection, not from their first.

The secrets come from the environment (``SPIDER_RACE_SECRET``, several separated by
commas) or, when none is given, from ``<data dir>/token-secret`` (one a line, the first
signing; the file is created with one generated secret, mode 0600, on first use).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .errors import BadToken, ConfigError

__all__ = [
    "GUEST_PREFIX",
    "SESSION_PREFIX",
    "Identity",
    "Keyring",
    "issue",
    "kind",
    "load_secret",
    "new_player_id",
    "new_session_token",
    "verify",
]

_VERSION = "v1"
GUEST_PREFIX = "g1."
SESSION_PREFIX = "s1."
API_PREFIX = "a1."
"""How a personal API token begins (kept by the accounts, like a session's:
:mod:`.store.api_tokens`)."""
SECRET_FILE = "token-secret"
CLOCK_SKEW = 300.0
"""Seconds a token's issue time may lie in the future (clocks of nodes differ) before a
maximum age refuses it."""
MAX_TOKEN = 2048
"""The longest token looked at; a longer one is malformed."""


@dataclass(frozen=True)
class Identity:
    """A player as a token names them; ``issued`` (left out of comparisons) is the
    token's issue time, None for a token without one or an identity not read from one."""

    player: str
    name: str
    issued: float | None = field(default=None, compare=False)
    bot: bool = field(default=False, compare=False)
    """The connection said it is a program (``hello``'s ``bot``; not in the token)."""
    account: bool = field(default=False, compare=False)
    """The player is an account's (it said hello with a session), not a guest."""


class Keyring(bytes):
    """The deployment's token secrets, newest first. As ``bytes`` it is the first, the one
    tokens are signed with (and what anything else derived from the secret uses);
    ``secrets`` are all of them, each accepted; ``max_age`` is the seconds a token is
    accepted after it was issued (None: any age)."""

    secrets: tuple[bytes, ...]
    max_age: float | None

    def __new__(cls, secrets: Sequence[bytes], *, max_age: float | None = None) -> Keyring:
        if not secrets or not all(secrets):
            raise ValueError("a keyring needs at least one secret, and no empty one")
        keyring = super().__new__(cls, secrets[0])
        keyring.secrets = tuple(bytes(s) for s in secrets)
        keyring.max_age = max_age
        return keyring

    def __repr__(self) -> str:  # never the secrets themselves
        return f"Keyring(<{len(self.secrets)} secrets>, max_age={self.max_age})"


def new_player_id() -> str:
    """A fresh player id: ``p`` and 12 hex digits."""
    return "p" + secrets.token_hex(6)


def new_session_token() -> str:
    """A fresh session token: ``s1.`` and 32 random bytes in URL-safe base64."""
    return SESSION_PREFIX + secrets.token_urlsafe(32)


def kind(token: str) -> str:
    """``session`` (an account's session), ``api`` (a personal API token) or ``guest``
    (signed, with or without its ``g1.`` prefix), by the token's prefix."""
    if token.startswith(SESSION_PREFIX):
        return "session"
    if token.startswith(API_PREFIX):
        return "api"
    return "guest"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: bytes, signed: str) -> str:
    return _b64(hmac.new(secret, signed.encode("ascii"), hashlib.sha256).digest())


def _keys(secret: bytes | Sequence[bytes]) -> tuple[bytes, ...]:
    if isinstance(secret, Keyring):
        return secret.secrets
    if isinstance(secret, bytes):
        return (secret,)
    return tuple(secret)


def issue(secret: bytes | Sequence[bytes], identity: Identity, *, now: float | None = None) -> str:
    """A token for ``identity``, issued ``now`` (default: this machine's clock), signed with
    the first secret of ``secret`` (bytes, a :class:`Keyring` or a list of bytes)."""
    body = {"p": identity.player, "n": identity.name, "t": int(time.time() if now is None else now)}
    payload = _b64(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))
    signed = f"{_VERSION}.{payload}"
    return f"{GUEST_PREFIX}{signed}.{_sign(_keys(secret)[0], signed)}"


def verify(
    secret: bytes | Sequence[bytes],
    token: str,
    *,
    max_age: float | None = None,
    now: float | None = None,
) -> Identity:
    """The identity a token names; :class:`BadToken` (and no other error) when it is not a
    string, malformed, altered, signed with none of the secrets, or too old.

    ``secret`` is bytes, a :class:`Keyring` or a list of bytes; any of them may have
    signed the token (constant-time comparisons). ``max_age`` (default: the keyring's):
    seconds since the token's issue time beyond which it is refused, as is a token without
    an issue time or issued more than :data:`CLOCK_SKEW` seconds after ``now``."""
    if max_age is None and isinstance(secret, Keyring):
        max_age = secret.max_age
    if not isinstance(token, str) or not token.isascii() or len(token) > MAX_TOKEN:
        raise BadToken("malformed session token")
    if token.startswith((SESSION_PREFIX, API_PREFIX)):
        raise BadToken("an account's token, not a guest's: this server keeps no accounts")
    parts = token.removeprefix(GUEST_PREFIX).split(".")
    if len(parts) != 3 or parts[0] != _VERSION:
        raise BadToken("malformed session token")
    signed = f"{parts[0]}.{parts[1]}"
    signature = parts[2]
    # every key is tried, so the time taken does not tell which one matched
    matched = False
    for key in _keys(secret):
        matched |= hmac.compare_digest(_sign(key, signed), signature)
    if not matched:
        raise BadToken("the session token's signature does not match")
    try:
        body = json.loads(_unb64(parts[1]))
        player, name = body["p"], body["n"]
        issued = body.get("t")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise BadToken("malformed session token") from None
    if not isinstance(player, str) or not isinstance(name, str):
        raise BadToken("malformed session token")
    if issued is not None and (isinstance(issued, bool) or not isinstance(issued, int | float)):
        raise BadToken("malformed session token")
    if max_age is not None:
        if issued is None:
            raise BadToken("the session token has no issue time; say hello without it")
        clock = time.time() if now is None else now
        if clock - issued > max_age:
            raise BadToken("the session token has expired")
        if issued - clock > CLOCK_SKEW:
            raise BadToken("the session token's issue time is in the future")
    return Identity(player, name, None if issued is None else float(issued))


def load_secret(configured: str | None, data_dir: Path, *, max_age: float | None = None) -> Keyring:
    """The token secrets: ``configured`` when given (comma-separated, the first signing;
    spaces around each are dropped), else those kept in ``data_dir`` (one a line; the file
    is created with 32 random bytes in hex on first use, and every later call returns the
    same). :class:`ConfigError` for an empty secret in the list or an empty file."""
    if configured:
        items = [item.strip() for item in configured.split(",")]
        if not all(items):
            raise ConfigError("SPIDER_RACE_SECRET: an empty secret in the list")
        return Keyring([item.encode("utf-8") for item in items], max_age=max_age)
    data_dir.mkdir(parents=True, exist_ok=True)
    path = data_dir / SECRET_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        lines = [line.strip() for line in path.read_text("utf-8").splitlines()]
        kept = [line.encode("utf-8") for line in lines if line]
        if kept:
            return Keyring(kept, max_age=max_age)
        raise ConfigError(f"{path} holds no secret") from None
    with os.fdopen(fd, "w") as f:
        text = secrets.token_hex(32)
        f.write(text + "\n")
    return Keyring([text.encode("ascii")], max_age=max_age)
