"""The operators' hand in the database: voids of races, closed accounts, the log of every
action (``admin_actions``: who, when, why, on what), and what the report reads.

``spider-race admin`` writes here only (the database is all it reaches): a void marks the
race's rating changes ``voided`` and logs the action; a close sets the account's
``closed_at``, ends its sessions and logs the action. An action whose live part is still
to do (the players' records and the ladders, in Redis) has no ``done_at``: every node's
background step (:mod:`..runners.admin`) takes the pending ones, does their part in Redis
once (:mod:`.admin_live`) and sets ``done_at``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .archive import ArchiveStore

__all__ = [
    "EXAMPLES",
    "QUERIES",
    "Action",
    "AdminRefused",
    "VoidChange",
    "account_closed",
    "close_account",
    "done",
    "log_of",
    "pending",
    "reopen_account",
    "report_rows",
    "void_changes",
    "void_race",
]

QUERIES: dict[str, str] = {
    "admin_race": (
        "SELECT id, code, rated FROM races WHERE code = $1 ORDER BY created_at DESC LIMIT 1"
    ),
    "admin_race_changes": (
        "SELECT player, variant, pool, before, after, mu_before, sigma_before, mu_after, "
        "sigma_after FROM rating_changes WHERE race_id = $1"
    ),
    "admin_void_changes": "UPDATE rating_changes SET voided = true WHERE race_id = $1",
    "admin_action_insert": (
        "INSERT INTO admin_actions (at, by, action, target, race_id, account_id, player, "
        "reason, done_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO "
        "NOTHING RETURNING id"
    ),
    "admin_account": (
        "SELECT id, name, player, closed_at FROM accounts WHERE name_key = $1 FOR UPDATE"
    ),
    "admin_close_account": "UPDATE accounts SET closed_at = $2 WHERE id = $1",
    "admin_end_sessions": "DELETE FROM sessions WHERE account_id = $1",
    "admin_pending": (
        "SELECT id, action, race_id, player FROM admin_actions WHERE done_at IS NULL "
        "ORDER BY id LIMIT $1"
    ),
    "admin_done": "UPDATE admin_actions SET done_at = $2 WHERE id = $1 AND done_at IS NULL",
    "admin_log": (
        "SELECT id, at, by, action, target, reason, done_at FROM admin_actions ORDER BY id "
        "DESC LIMIT $1"
    ),
    "account_closed": "SELECT closed_at FROM accounts WHERE id = $1",
    "report_changes": (
        "SELECT c.player, c.race_id, r.finished_at, c.before, c.after FROM rating_changes c "
        "JOIN races r ON r.id = c.race_id WHERE c.race_id = ANY(ARRAY(SELECT id FROM races "
        "WHERE rated AND finished_at >= $1)) AND NOT c.voided"
    ),
    "report_players": (
        "SELECT p.race_id, p.player FROM race_players p WHERE p.race_id = ANY(ARRAY(SELECT "
        "id FROM races WHERE rated AND finished_at >= $1)) AND NOT EXISTS (SELECT 1 FROM "
        "admin_actions v WHERE v.action = 'void' AND v.race_id = p.race_id)"
    ),
    "report_addresses": "SELECT race_id, player, address FROM rated_addresses WHERE at >= $1",
    "report_accounts": (
        "SELECT player, name, closed_at FROM accounts WHERE player = ANY($1::text[])"
    ),
}
"""Every query of this module by name (see :data:`.archive.QUERIES`)."""

EXAMPLES: dict[str, tuple[Any, ...]] = {
    "admin_race": ("K7QX2",),
    "admin_race_changes": (7,),
    "admin_void_changes": (7,),
    "admin_action_insert": (1.7e9, "ops", "void", "K7QX2", 7, None, None, "farming", None),
    "admin_account": ("ada",),
    "admin_close_account": (1, 1.7e9),
    "admin_end_sessions": (1,),
    "admin_pending": (32,),
    "admin_done": (1, 1.7e9),
    "admin_log": (50,),
    "account_closed": (1,),
    "report_changes": (1.7e9 + 7900 * 60,),
    "report_players": (1.7e9 + 7900 * 60,),
    "report_addresses": (1.7e9 + 7900 * 60,),
    "report_accounts": (["p1", "p2"],),
}
"""Parameters each query of :data:`QUERIES` can be run with."""


class AdminRefused(Exception):
    """An operator's action that cannot be done (nothing was changed): the message says
    why."""


@dataclass(frozen=True, slots=True)
class VoidChange:
    """One player's rating change of a voided race, as the live records undo it."""

    player: str
    variant: str
    pool: str
    mu: float
    """mu after minus mu before: what the void takes back."""
    sigma: float


@dataclass(frozen=True, slots=True)
class Action:
    """An action of the log."""

    id: int
    at: float
    by: str
    action: str
    target: str
    reason: str
    done_at: float | None


async def void_race(archive: ArchiveStore, code: str, *, by: str, reason: str, now: float) -> int:
    """Void the newest archived race ``code``: its rating changes are marked ``voided`` and
    the void is logged, pending for the live records; the action's id. AdminRefused when
    there is no such race, it moved no rating, or it was voided before."""
    async with archive.connection() as conn, conn.transaction():
        with archive.timed("admin_race"):
            race = await conn.fetchrow(QUERIES["admin_race"], code)
        if race is None:
            raise AdminRefused(f"no finished race {code} in the database")
        with archive.timed("admin_race_changes"):
            changes = await conn.fetch(QUERIES["admin_race_changes"], race["id"])
        if not race["rated"] or not changes:
            raise AdminRefused(f"race {code} moved no rating: there is nothing to void")
        if any(c["mu_before"] is None for c in changes):
            raise AdminRefused(
                f"race {code} was rated before rating changes kept mu and sigma: it cannot "
                "be undone"
            )
        with archive.timed("admin_action_insert"):
            action = await conn.fetchval(
                QUERIES["admin_action_insert"],
                now, by, "void", code, race["id"], None, None, reason, None,
            )  # fmt: skip
        if action is None:
            raise AdminRefused(f"race {code} was voided before")
        with archive.timed("admin_void_changes"):
            await conn.execute(QUERIES["admin_void_changes"], race["id"])
    return int(action)


async def void_changes(archive: ArchiveStore, race_id: int) -> list[VoidChange]:
    """The rating changes a void of race ``race_id`` takes back."""
    async with archive.connection() as conn:
        with archive.timed("admin_race_changes"):
            rows = await conn.fetch(QUERIES["admin_race_changes"], race_id)
    return [
        VoidChange(
            player=r["player"],
            variant=r["variant"],
            pool=r["pool"],
            mu=r["mu_after"] - r["mu_before"],
            sigma=r["sigma_after"] - r["sigma_before"],
        )
        for r in rows
        if r["mu_before"] is not None
    ]


async def close_account(
    archive: ArchiveStore, key: str, name: str, *, by: str, reason: str, now: float
) -> tuple[int, int]:
    """Close the account of name key ``key`` (``name`` as asked): ``closed_at`` set, every
    session ended, the close logged, pending for the ladders; (the action's id, sessions
    ended). AdminRefused when there is no such account or it is closed already."""
    async with archive.connection() as conn, conn.transaction():
        with archive.timed("admin_account"):
            account = await conn.fetchrow(QUERIES["admin_account"], key)
        if account is None:
            raise AdminRefused(f"no account named {name}")
        if account["closed_at"] is not None:
            raise AdminRefused(f"the account {account['name']} is closed already")
        with archive.timed("admin_close_account"):
            await conn.execute(QUERIES["admin_close_account"], account["id"], now)
        with archive.timed("admin_end_sessions"):
            status = await conn.execute(QUERIES["admin_end_sessions"], account["id"])
        # an account's API tokens, once accounts have them, end here too
        with archive.timed("admin_action_insert"):
            action = await conn.fetchval(
                QUERIES["admin_action_insert"],
                now, by, "close", account["name"], None, account["id"], account["player"],
                reason, None,
            )  # fmt: skip
    return int(action), int(status.split()[-1])


async def reopen_account(
    archive: ArchiveStore, key: str, name: str, *, by: str, reason: str, now: float
) -> int:
    """Reopen the closed account of name key ``key``: ``closed_at`` cleared, the reopening
    logged, pending for the ladders (its player back on them); the action's id.
    AdminRefused when there is no such account or it is not closed."""
    async with archive.connection() as conn, conn.transaction():
        with archive.timed("admin_account"):
            account = await conn.fetchrow(QUERIES["admin_account"], key)
        if account is None:
            raise AdminRefused(f"no account named {name}")
        if account["closed_at"] is None:
            raise AdminRefused(f"the account {account['name']} is not closed")
        with archive.timed("admin_close_account"):
            await conn.execute(QUERIES["admin_close_account"], account["id"], None)
        with archive.timed("admin_action_insert"):
            action = await conn.fetchval(
                QUERIES["admin_action_insert"],
                now, by, "reopen", account["name"], None, account["id"], account["player"],
                reason, None,
            )  # fmt: skip
    return int(action)


async def pending(archive: ArchiveStore, limit: int = 32) -> list[tuple[int, str, int, str]]:
    """Actions whose live part is to do, oldest first: (id, action, race id or 0, player
    or '')."""
    async with archive.connection() as conn:
        with archive.timed("admin_pending"):
            rows = await conn.fetch(QUERIES["admin_pending"], limit)
    return [(r["id"], r["action"], r["race_id"] or 0, r["player"] or "") for r in rows]


async def done(archive: ArchiveStore, action: int, now: float) -> None:
    """The live part of ``action`` is done."""
    async with archive.connection() as conn:
        with archive.timed("admin_done"):
            await conn.execute(QUERIES["admin_done"], action, now)


async def log_of(archive: ArchiveStore, limit: int = 50) -> list[Action]:
    """The newest actions, newest first."""
    async with archive.connection() as conn:
        with archive.timed("admin_log"):
            rows = await conn.fetch(QUERIES["admin_log"], limit)
    return [Action(**dict(r)) for r in rows]


async def account_closed(archive: ArchiveStore, account: int) -> bool:
    """Whether the account was closed by an operator."""
    async with archive.connection() as conn:
        with archive.timed("account_closed"):
            closed = await conn.fetchval(QUERIES["account_closed"], account)
    return closed is not None


async def report_rows(
    archive: ArchiveStore, since: float
) -> tuple[list[Any], list[Any], list[Any], dict[str, tuple[str, bool]]]:
    """What the report reads of rated races finished since ``since``: their players
    (race_id, player; voided races left out), their rating changes (player, race_id,
    finished_at, before, after; voided ones left out), the addresses (race_id, player,
    address), and the accounts among their players (player -> (name, closed))."""
    async with archive.connection() as conn:
        with archive.timed("report_players"):
            players = await conn.fetch(QUERIES["report_players"], since)
        with archive.timed("report_changes"):
            changes = await conn.fetch(QUERIES["report_changes"], since)
        with archive.timed("report_addresses"):
            addresses = await conn.fetch(QUERIES["report_addresses"], since)
        ids = sorted({r["player"] for r in players} | {c["player"] for c in changes})
        with archive.timed("report_accounts"):
            rows = await conn.fetch(QUERIES["report_accounts"], ids)
    accounts = {r["player"]: (r["name"], r["closed_at"] is not None) for r in rows}
    return list(players), list(changes), list(addresses), accounts
