"""Accounts and their sessions in the database (``accounts``, ``sessions``: migration
``0004_accounts``; an account's kind, ``bot``: ``0006_bots_tokens``).

Each function takes the node's :class:`~.archive.ArchiveStore` and runs the queries of
:data:`QUERIES` on one of its connections (timed by name); every one raises
:class:`~..errors.Unavailable` when the database does not answer. A session is found by
the SHA-256 of its token (:func:`token_hash`); a session whose ``last_used_at`` is older
than the lifetime the caller passes (``since``) counts as ended everywhere, and is
deleted when its account next signs in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..race.ratings import Record
from .archive import ArchiveStore

__all__ = [
    "EXAMPLES",
    "QUERIES",
    "AccountRow",
    "SessionRow",
    "account_by_key",
    "account_by_player",
    "account_row",
    "accounts_of_players",
    "ranked_players",
    "create_account",
    "create_session",
    "end_other_sessions",
    "end_session",
    "make_bot",
    "ranked_records",
    "session",
    "sessions_of",
    "set_password",
    "token_hash",
    "touch_session",
]

SESSIONS_LISTED = 100
"""The most sessions of an account listed (the most recently used first)."""
SESSIONS_KEPT = SESSIONS_LISTED
"""The most sessions an account keeps: a new one past them ends the least recently used
(so that signing in again and again fills no table)."""

QUERIES: dict[str, str] = {
    "account_insert": (
        "INSERT INTO accounts (name, name_key, password, player, guest_player, created_at, "
        "password_at) VALUES ($1, $2, $3, $4, $6, $5, $5) ON CONFLICT DO NOTHING RETURNING id"
    ),
    "account_by_key": (
        "SELECT id, name, name_key, password, player, created_at, bot FROM accounts WHERE name_key = $1"
    ),
    "account_by_player": (
        "SELECT id, name, name_key, password, player, created_at, bot FROM accounts WHERE player = $1"
    ),
    "accounts_of_players": "SELECT player FROM accounts WHERE player = ANY($1::text[])",
    "ranked_players": (
        "SELECT player FROM accounts WHERE player = ANY($1::text[]) AND closed_at IS NULL"
    ),
    "account_password": "UPDATE accounts SET password = $2, password_at = $3 WHERE id = $1",
    "account_bot": (
        "UPDATE accounts SET bot = true, bot_at = $2 WHERE id = $1 AND (bot OR NOT EXISTS "
        "(SELECT 1 FROM rating_changes c WHERE c.player = accounts.player AND c.pool = "
        "'humans')) RETURNING id"
    ),
    "session_insert": (
        "INSERT INTO sessions (hash, account_id, created_at, last_used_at, address, "
        "user_agent) VALUES ($1, $2, $3, $3, $4, $5)"
    ),
    "session": (
        "SELECT s.account_id, s.last_used_at, a.name, a.name_key, a.password, a.player, "
        "a.created_at, a.bot FROM sessions s JOIN accounts a ON a.id = s.account_id "
        "WHERE s.hash = $1 AND s.last_used_at > $2"
    ),
    "session_touch": (
        "UPDATE sessions SET last_used_at = $2 WHERE hash = $1 AND last_used_at < $2"
    ),
    "session_end": "DELETE FROM sessions WHERE hash = $1",
    "sessions_end_others": "DELETE FROM sessions WHERE account_id = $1 AND hash <> $2",
    "sessions_expired": "DELETE FROM sessions WHERE account_id = $1 AND last_used_at <= $2",
    "sessions_over": (
        "DELETE FROM sessions WHERE hash IN (SELECT hash FROM sessions WHERE account_id = $1 "
        "AND hash <> $3 ORDER BY last_used_at DESC, created_at DESC OFFSET $2)"
    ),
    "sessions_of": (
        "SELECT hash, created_at, last_used_at, address, user_agent FROM sessions "
        "WHERE account_id = $1 AND last_used_at > $2 ORDER BY last_used_at DESC LIMIT $3"
    ),
}
"""Every query of this module by name (timed by it; EXPLAINed by the index check)."""

_HASH = bytes(32)
EXAMPLES: dict[str, tuple[Any, ...]] = {
    "account_insert": ("Ada", "ada", "$argon2id$...", "p0123456789ab", 1.7e9, None),
    "account_by_key": ("ada",),
    "account_by_player": ("p0123456789ab",),
    "accounts_of_players": (["p0123456789ab", "p0123456789ac"],),
    "ranked_players": (["p0123456789ab", "p0123456789ac"],),
    "account_password": (1, "$argon2id$...", 1.7e9),
    "account_bot": (1, 1.7e9),
    "session_insert": (_HASH, 1, 1.7e9, "127.0.0.1", "curl/8"),
    "session": (_HASH, 1.7e9),
    "session_touch": (_HASH, 1.7e9),
    "session_end": (_HASH,),
    "sessions_end_others": (1, _HASH),
    "sessions_expired": (1, 1.7e9),
    "sessions_over": (1, SESSIONS_KEPT - 1, _HASH),
    "sessions_of": (1, 1.7e9, SESSIONS_LISTED),
}
"""Parameters each query of :data:`QUERIES` can be run with."""


@dataclass(frozen=True, slots=True)
class AccountRow:
    id: int
    name: str
    name_key: str
    password: str | None
    """The password's Argon2id hash (None: the account signs in with passkeys only)."""
    player: str
    created_at: float
    bot: bool = False
    """A bot account: it plays as a bot, on the bots' ladder only (for good)."""


@dataclass(frozen=True, slots=True)
class SessionRow:
    hash: bytes
    created_at: float
    last_used_at: float
    address: str
    user_agent: str


def token_hash(token: str) -> bytes:
    """What a session is kept by: the SHA-256 of its token."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def account_row(row: Any, id_column: str = "id") -> AccountRow:
    """The account of a row that has its columns (its id in ``id_column``)."""
    return AccountRow(
        id=int(row[id_column]),
        name=row["name"],
        name_key=row["name_key"],
        password=row["password"],
        player=row["player"],
        created_at=float(row["created_at"]),
        bot=bool(row.get("bot", False)),  # a query that reads no kind: a person's
    )


async def create_account(
    archive: ArchiveStore,
    *,
    name: str,
    key: str,
    password: str | None,
    player: str,
    now: float,
    guest: bool = False,
) -> int | None:
    """A new account's id; None when an account holds that name's key already (or that
    player id), and nothing was written. With ``guest``, ``player`` is a guest's that the
    account takes over (kept as its ``guest_player`` too)."""
    taken = player if guest else None
    async with archive.connection() as conn:
        with archive.timed("account_insert"):
            found = await conn.fetchval(
                QUERIES["account_insert"], name, key, password, player, now, taken
            )
    return None if found is None else int(found)


async def account_by_key(archive: ArchiveStore, key: str) -> AccountRow | None:
    async with archive.connection() as conn:
        with archive.timed("account_by_key"):
            row = await conn.fetchrow(QUERIES["account_by_key"], key)
    return None if row is None else account_row(row)


async def account_by_player(archive: ArchiveStore, player: str) -> AccountRow | None:
    """The account that races as ``player`` (one it made, or a guest's it took over)."""
    async with archive.connection() as conn:
        with archive.timed("account_by_player"):
            row = await conn.fetchrow(QUERIES["account_by_player"], player)
    return None if row is None else account_row(row)


async def accounts_of_players(archive: ArchiveStore, players: list[str]) -> set[str]:
    """Those of ``players`` that are accounts' (the others are guests)."""
    async with archive.connection() as conn:
        with archive.timed("accounts_of_players"):
            rows = await conn.fetch(QUERIES["accounts_of_players"], players)
    return {r["player"] for r in rows}


async def ranked_players(archive: ArchiveStore, players: list[str]) -> set[str]:
    """Those of ``players`` whose ratings stand on the ladders: accounts' not closed."""
    async with archive.connection() as conn:
        with archive.timed("ranked_players"):
            rows = await conn.fetch(QUERIES["ranked_players"], players)
    return {r["player"] for r in rows}


def ranked_records(
    archive: ArchiveStore,
) -> Callable[[list[str]], Awaitable[tuple[dict[str, Record], set[str]]]]:
    """What reads players' archived records for the ratings cache: their newest records
    (:meth:`~.archive.ArchiveStore.records`) and which of them are accounts' not closed
    (their ratings stand on the ladders; a guest's or a closed account's do not)."""

    async def read(players: list[str]) -> tuple[dict[str, Record], set[str]]:
        found = await archive.records(players)
        return found, await ranked_players(archive, list(found)) if found else set()

    return read


async def set_password(archive: ArchiveStore, account: int, password: str, now: float) -> None:
    """Keep ``password`` (a hash) as the account's."""
    async with archive.connection() as conn:
        with archive.timed("account_password"):
            await conn.execute(QUERIES["account_password"], account, password, now)


async def make_bot(archive: ArchiveStore, account: int, now: float) -> bool:
    """Make ``account`` a bot account (for good) unless the archive holds a rated race of
    its player as a human; whether it is one now."""
    async with archive.connection() as conn:
        with archive.timed("account_bot"):
            found = await conn.fetchval(QUERIES["account_bot"], account, now)
    return found is not None


async def create_session(
    archive: ArchiveStore,
    account: int,
    hashed: bytes,
    *,
    now: float,
    address: str,
    user_agent: str,
    expired_before: float,
) -> None:
    """Keep a new session of ``account`` (by its token's hash), and drop the account's
    sessions unused since ``expired_before`` and those past the newest
    :data:`SESSIONS_KEPT`, in one transaction."""
    async with archive.connection() as conn, conn.transaction():
        with archive.timed("sessions_expired"):
            await conn.execute(QUERIES["sessions_expired"], account, expired_before)
        with archive.timed("session_insert"):
            await conn.execute(QUERIES["session_insert"], hashed, account, now, address, user_agent)
        with archive.timed("sessions_over"):
            # the others past the newest ones (never the new one, whatever the ties)
            await conn.execute(QUERIES["sessions_over"], account, SESSIONS_KEPT - 1, hashed)


async def session(
    archive: ArchiveStore, hashed: bytes, since: float
) -> tuple[AccountRow, float] | None:
    """The account of the session kept by ``hashed`` and when it was last used, unless it
    was not used since ``since`` (it has expired) or there is none."""
    async with archive.connection() as conn:
        with archive.timed("session"):
            row = await conn.fetchrow(QUERIES["session"], hashed, since)
    if row is None:
        return None
    return account_row(row, "account_id"), float(row["last_used_at"])


async def touch_session(archive: ArchiveStore, hashed: bytes, now: float) -> None:
    """The session was used ``now`` (its lifetime counts from then)."""
    async with archive.connection() as conn:
        with archive.timed("session_touch"):
            await conn.execute(QUERIES["session_touch"], hashed, now)


async def end_session(archive: ArchiveStore, hashed: bytes) -> bool:
    """End one session; whether there was one."""
    async with archive.connection() as conn:
        with archive.timed("session_end"):
            status = await conn.execute(QUERIES["session_end"], hashed)
    return bool(status != "DELETE 0")


async def end_other_sessions(archive: ArchiveStore, account: int, keep: bytes = b"") -> int:
    """End every session of ``account`` but the one kept by ``keep`` (none: every one);
    how many were ended."""
    async with archive.connection() as conn:
        with archive.timed("sessions_end_others"):
            status = await conn.execute(QUERIES["sessions_end_others"], account, keep)
    return int(str(status).rsplit(" ", 1)[-1])


async def sessions_of(archive: ArchiveStore, account: int, since: float) -> list[SessionRow]:
    """The account's sessions used since ``since``, the most recently used first (at most
    :data:`SESSIONS_LISTED`)."""
    async with archive.connection() as conn:
        with archive.timed("sessions_of"):
            rows = await conn.fetch(QUERIES["sessions_of"], account, since, SESSIONS_LISTED)
    return [
        SessionRow(
            hash=bytes(r["hash"]),
            created_at=float(r["created_at"]),
            last_used_at=float(r["last_used_at"]),
            address=r["address"],
            user_agent=r["user_agent"],
        )
        for r in rows
    ]
