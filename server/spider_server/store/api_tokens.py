"""Personal API tokens in the database (``api_tokens``: migration ``0006_bots_tokens``).

A token is ``a1.`` and 32 random bytes in URL-safe base64 (:func:`new_api_token`), shown
once when made and kept by its SHA-256 only (:func:`~.accounts.token_hash`), with a name
and its scopes. It speaks for its account until revoked, or the account is deleted (the
rows go with it). Each function runs the queries of :data:`QUERIES` on one connection of
the node's :class:`~.archive.ArchiveStore` (timed by name) and raises
:class:`~..errors.Unavailable` when the database does not answer.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from ..tokens import API_PREFIX
from .accounts import AccountRow, account_row
from .archive import ArchiveStore

__all__ = [
    "EXAMPLES",
    "QUERIES",
    "TOKENS_KEPT",
    "TokenRow",
    "api_token",
    "create_token",
    "new_api_token",
    "revoke_token",
    "tokens_of",
    "touch_token",
]

TOKENS_KEPT = 50
"""The most API tokens an account holds at once (a new one past them is refused)."""

QUERIES: dict[str, str] = {
    "token_insert": (
        "INSERT INTO api_tokens (hash, account_id, name, scopes, created_at) "
        "SELECT $1, $2, $3, $4::text[], $5 WHERE (SELECT count(*) FROM api_tokens "
        "WHERE account_id = $2) < $6 RETURNING id"
    ),
    "token": (
        "SELECT t.id AS token_id, t.scopes, t.last_used_at, a.id, a.name, a.name_key, "
        "a.password, a.player, a.created_at, a.bot FROM api_tokens t "
        "JOIN accounts a ON a.id = t.account_id WHERE t.hash = $1"
    ),
    "token_touch": (
        "UPDATE api_tokens SET last_used_at = $2 WHERE id = $1 "
        "AND (last_used_at IS NULL OR last_used_at < $2)"
    ),
    "tokens_of": (
        "SELECT id, name, scopes, created_at, last_used_at FROM api_tokens "
        "WHERE account_id = $1 ORDER BY created_at DESC LIMIT $2"
    ),
    "token_revoke": "DELETE FROM api_tokens WHERE id = $1 AND account_id = $2",
}
"""Every query of this module by name (timed by it; EXPLAINed by the index check)."""

_HASH = bytes(32)
EXAMPLES: dict[str, tuple[Any, ...]] = {
    "token_insert": (_HASH, 1, "my bot", ["race:play", "race:read"], 1.7e9, TOKENS_KEPT),
    "token": (_HASH,),
    "token_touch": (1, 1.7e9),
    "tokens_of": (1, TOKENS_KEPT),
    "token_revoke": (1, 1),
}
"""Parameters each query of :data:`QUERIES` can be run with."""


@dataclass(frozen=True, slots=True)
class TokenRow:
    """An API token as listed: never the token itself."""

    id: int
    name: str
    scopes: tuple[str, ...]
    created_at: float
    last_used_at: float | None


def new_api_token() -> str:
    """A fresh API token: ``a1.`` and 32 random bytes in URL-safe base64."""
    return API_PREFIX + secrets.token_urlsafe(32)


async def create_token(
    archive: ArchiveStore,
    account: int,
    hashed: bytes,
    *,
    name: str,
    scopes: list[str],
    now: float,
) -> int | None:
    """Keep a new token of ``account`` (by its hash); its id, or None when the account
    holds :data:`TOKENS_KEPT` already (and nothing was written)."""
    async with archive.connection() as conn:
        with archive.timed("token_insert"):
            found = await conn.fetchval(
                QUERIES["token_insert"], hashed, account, name, scopes, now, TOKENS_KEPT
            )
    return None if found is None else int(found)


async def api_token(
    archive: ArchiveStore, hashed: bytes
) -> tuple[AccountRow, int, tuple[str, ...], float | None] | None:
    """The account of the token kept by ``hashed``, the token's id, scopes and last use;
    None when there is none (never made, revoked, or its account deleted)."""
    async with archive.connection() as conn:
        with archive.timed("token"):
            row = await conn.fetchrow(QUERIES["token"], hashed)
    if row is None:
        return None
    used = row["last_used_at"]
    return (
        account_row(row),
        int(row["token_id"]),
        tuple(row["scopes"]),
        None if used is None else float(used),
    )


async def touch_token(archive: ArchiveStore, token: int, now: float) -> None:
    """The token was used ``now`` (listed as its last use)."""
    async with archive.connection() as conn:
        with archive.timed("token_touch"):
            await conn.execute(QUERIES["token_touch"], token, now)


async def tokens_of(archive: ArchiveStore, account: int) -> list[TokenRow]:
    """The account's tokens, the newest first."""
    async with archive.connection() as conn:
        with archive.timed("tokens_of"):
            rows = await conn.fetch(QUERIES["tokens_of"], account, TOKENS_KEPT)
    return [
        TokenRow(
            id=int(r["id"]),
            name=r["name"],
            scopes=tuple(r["scopes"]),
            created_at=float(r["created_at"]),
            last_used_at=None if r["last_used_at"] is None else float(r["last_used_at"]),
        )
        for r in rows
    ]


async def revoke_token(archive: ArchiveStore, account: int, token: int) -> bool:
    """Revoke the token ``token`` of ``account``; whether there was one."""
    async with archive.connection() as conn:
        with archive.timed("token_revoke"):
            status = await conn.execute(QUERIES["token_revoke"], token, account)
    return bool(status != "DELETE 0")
