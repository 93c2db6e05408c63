"""The accounts' verified e-mail addresses in the database (the ``email`` columns of
``accounts``: migration ``0005_passkeys_email``), and what ``/account/me`` reads.

An address is kept once its owner opened the link mailed to it, as given and by its key
(:func:`email_key`): no two accounts keep the same key. Each function takes the node's
:class:`~.archive.ArchiveStore` and runs the queries of :data:`QUERIES` (timed by name);
every one raises :class:`~..errors.Unavailable` when the database does not answer.
"""

from __future__ import annotations

from typing import Any

from . import accounts as rows
from .archive import ArchiveStore

__all__ = [
    "EXAMPLES",
    "QUERIES",
    "account_by_email",
    "account_extras",
    "email_key",
    "set_email",
]

QUERIES: dict[str, str] = {
    "account_email": (
        "UPDATE accounts SET email = $2, email_key = $3, email_at = $4 WHERE id = $1 "
        "AND NOT EXISTS (SELECT 1 FROM accounts o WHERE o.email_key = $3 AND o.id <> $1)"
    ),
    "account_by_email": (
        "SELECT id, name, name_key, password, player, created_at, email FROM accounts "
        "WHERE email_key = $1"
    ),
    "account_extras": (
        "SELECT email, password IS NOT NULL AS has_password FROM accounts WHERE id = $1"
    ),
}
"""Every query of this module by name (timed by it; EXPLAINed by the index check)."""

EXAMPLES: dict[str, tuple[Any, ...]] = {
    "account_email": (1, "Ada@example.org", "ada@example.org", 1.7e9),
    "account_by_email": ("ada@example.org",),
    "account_extras": (1,),
}
"""Parameters each query of :data:`QUERIES` can be run with."""


def email_key(email: str) -> str:
    """What an address is known by: case folded (``Ada@Example.org`` is
    ``ada@example.org``)."""
    return email.strip().casefold()


async def set_email(archive: ArchiveStore, account: int, email: str | None, now: float) -> bool:
    """Keep ``email`` as the account's verified address (None: it has none); False when
    another account keeps that address (and nothing was written). (Two accounts verifying
    one address at the same moment: the unique index refuses the second, Unavailable.)"""
    key = None if email is None else email_key(email)
    async with archive.connection() as conn:
        with archive.timed("account_email"):
            status = await conn.execute(QUERIES["account_email"], account, email, key, now)
    return bool(status != "UPDATE 0")


async def account_by_email(archive: ArchiveStore, email: str) -> tuple[rows.AccountRow, str] | None:
    """The account that verified ``email`` (by its key), if one did, and the address as it
    keeps it."""
    async with archive.connection() as conn:
        with archive.timed("account_by_email"):
            row = await conn.fetchrow(QUERIES["account_by_email"], email_key(email))
    return None if row is None else (rows.account_row(row), row["email"])


async def account_extras(archive: ArchiveStore, account: int) -> tuple[str | None, bool]:
    """The account's verified address (None: none) and whether it has a password."""
    async with archive.connection() as conn:
        with archive.timed("account_extras"):
            row = await conn.fetchrow(QUERIES["account_extras"], account)
    if row is None:
        return None, False
    return row["email"], bool(row["has_password"])
