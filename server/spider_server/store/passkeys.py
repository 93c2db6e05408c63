"""The accounts' passkeys in the database (``passkeys``: migration ``0005_passkeys_email``).

A passkey is kept by its credential id, which one passkey only may have (a second
registration of the same id is refused, whoever makes it), with its public key (COSE),
the authenticator's signature counter last seen, and the name its owner gave it. Each
function takes the node's :class:`~.archive.ArchiveStore` and runs the queries of
:data:`QUERIES` (timed by name); every one raises :class:`~..errors.Unavailable` when the
database does not answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import accounts as rows
from .archive import ArchiveStore

__all__ = [
    "EXAMPLES",
    "PASSKEYS_KEPT",
    "QUERIES",
    "PasskeyRow",
    "add_passkey",
    "create_account_with_passkey",
    "passkey",
    "passkey_used",
    "passkeys_of",
    "remove_passkey",
]

PASSKEYS_KEPT = 20
"""The most passkeys an account has."""

QUERIES: dict[str, str] = {
    "passkey_insert": (
        "INSERT INTO passkeys (id, account_id, public_key, sign_count, name, created_at) "
        "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING RETURNING id"
    ),
    "passkey": (
        "SELECT p.id, p.account_id, p.public_key, p.sign_count, p.name AS passkey_name, "
        "p.created_at AS passkey_created_at, p.last_used_at, a.name, a.name_key, a.password, "
        "a.player, a.created_at FROM passkeys p JOIN accounts a ON a.id = p.account_id "
        "WHERE p.id = $1"
    ),
    "passkey_used": (
        "UPDATE passkeys SET sign_count = $2, last_used_at = $4 WHERE id = $1 AND sign_count = $3"
    ),
    "passkeys_of": (
        "SELECT id, account_id, public_key, sign_count, name AS passkey_name, "
        "created_at AS passkey_created_at, last_used_at FROM passkeys WHERE account_id = $1 "
        "ORDER BY created_at LIMIT $2"
    ),
    "passkeys_count": "SELECT count(*) FROM passkeys WHERE account_id = $1",
    "account_lock": "SELECT password FROM accounts WHERE id = $1 FOR UPDATE",
    "passkey_delete": "DELETE FROM passkeys WHERE id = $1 AND account_id = $2",
}
"""Every query of this module by name (timed by it; EXPLAINed by the index check)."""

_ID = bytes(16)
EXAMPLES: dict[str, tuple[Any, ...]] = {
    "passkey_insert": (_ID, 1, b"\xa5", 0, "this laptop", 1.7e9),
    "passkey": (_ID,),
    "passkey_used": (_ID, 2, 1, 1.7e9),
    "passkeys_of": (1, PASSKEYS_KEPT),
    "passkeys_count": (1,),
    "account_lock": (1,),
    "passkey_delete": (_ID, 1),
}
"""Parameters each query of :data:`QUERIES` can be run with."""


@dataclass(frozen=True, slots=True)
class PasskeyRow:
    id: bytes
    """The credential id."""
    account_id: int
    public_key: bytes
    sign_count: int
    name: str
    created_at: float
    last_used_at: float | None


def _passkey(row: Any) -> PasskeyRow:
    used = row["last_used_at"]
    return PasskeyRow(
        id=bytes(row["id"]),
        account_id=int(row["account_id"]),
        public_key=bytes(row["public_key"]),
        sign_count=int(row["sign_count"]),
        name=row["passkey_name"],
        created_at=float(row["passkey_created_at"]),
        last_used_at=None if used is None else float(used),
    )


async def create_account_with_passkey(
    archive: ArchiveStore,
    *,
    name: str,
    key: str,
    player: str,
    now: float,
    guest: bool,
    credential: bytes,
    public_key: bytes,
    sign_count: int,
    label: str,
) -> int | None:
    """A new account without a password and its first passkey, in one transaction; None
    when an account holds that name's key or that player already, or a passkey has that
    credential id (and nothing was written)."""
    taken = player if guest else None
    try:
        async with archive.connection() as conn, conn.transaction():
            with archive.timed("account_insert"):
                made = await conn.fetchval(
                    rows.QUERIES["account_insert"], name, key, None, player, now, taken
                )
            if made is None:
                return None
            with archive.timed("passkey_insert"):
                kept = await conn.fetchval(
                    QUERIES["passkey_insert"], credential, made, public_key, sign_count, label, now
                )
            if kept is None:
                raise _Rollback  # the account is not kept either
            return int(made)
    except _Rollback:
        return None


class _Rollback(Exception):
    pass


async def add_passkey(
    archive: ArchiveStore,
    account: int,
    *,
    credential: bytes,
    public_key: bytes,
    sign_count: int,
    label: str,
    now: float,
) -> str:
    """Keep a passkey of ``account``: ``"added"``, ``"taken"`` (a passkey has that
    credential id already) or ``"full"`` (the account has :data:`PASSKEYS_KEPT`); only
    ``"added"`` wrote anything."""
    async with archive.connection() as conn, conn.transaction():
        with archive.timed("account_lock"):
            await conn.fetchrow(QUERIES["account_lock"], account)
        with archive.timed("passkeys_count"):
            count = await conn.fetchval(QUERIES["passkeys_count"], account)
        if int(count) >= PASSKEYS_KEPT:
            return "full"
        with archive.timed("passkey_insert"):
            kept = await conn.fetchval(
                QUERIES["passkey_insert"], credential, account, public_key, sign_count, label, now
            )
    return "added" if kept is not None else "taken"


async def passkey(
    archive: ArchiveStore, credential: bytes
) -> tuple[PasskeyRow, rows.AccountRow] | None:
    """The passkey of that credential id and its account (None: no such passkey)."""
    async with archive.connection() as conn:
        with archive.timed("passkey"):
            row = await conn.fetchrow(QUERIES["passkey"], credential)
    if row is None:
        return None
    return _passkey(row), rows.account_row(row, "account_id")


async def passkey_used(
    archive: ArchiveStore, credential: bytes, *, seen: int, count: int, now: float
) -> bool:
    """The passkey signed in ``now`` with the counter ``count``, when its counter is still
    ``seen`` (the one checked against); False: another sign-in moved it meanwhile."""
    async with archive.connection() as conn:
        with archive.timed("passkey_used"):
            status = await conn.execute(QUERIES["passkey_used"], credential, count, seen, now)
    return bool(status != "UPDATE 0")


async def passkeys_of(archive: ArchiveStore, account: int) -> list[PasskeyRow]:
    """The account's passkeys, the oldest first."""
    async with archive.connection() as conn:
        with archive.timed("passkeys_of"):
            found = await conn.fetch(QUERIES["passkeys_of"], account, PASSKEYS_KEPT)
    return [_passkey(r) for r in found]


async def remove_passkey(archive: ArchiveStore, account: int, credential: bytes) -> str:
    """Remove a passkey of ``account``: ``"removed"``, ``"unknown"`` (the account has no
    such passkey) or ``"last"`` (the account has no password and this is its last passkey:
    it is kept, so that the account can still be signed in to). The account's row is
    locked meanwhile, so that two removals at once cannot take the last two."""
    async with archive.connection() as conn, conn.transaction():
        with archive.timed("account_lock"):
            password = await conn.fetchval(QUERIES["account_lock"], account)
        if password is None:
            with archive.timed("passkeys_count"):
                count = await conn.fetchval(QUERIES["passkeys_count"], account)
            if int(count) <= 1:
                listed = {p.id for p in await _of(conn, archive, account)}
                return "last" if credential in listed else "unknown"
        with archive.timed("passkey_delete"):
            status = await conn.execute(QUERIES["passkey_delete"], credential, account)
    return "unknown" if status == "DELETE 0" else "removed"


async def _of(conn: Any, archive: ArchiveStore, account: int) -> list[PasskeyRow]:
    with archive.timed("passkeys_of"):
        found = await conn.fetch(QUERIES["passkeys_of"], account, PASSKEYS_KEPT)
    return [_passkey(r) for r in found]
