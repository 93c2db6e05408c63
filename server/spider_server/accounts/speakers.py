"""Whom a ``hello`` speaks for when an account (:class:`Speaker`), and the lookup of a
personal API token (:func:`api_speaker`): its account, a bot when the account is one,
with the token's scopes. A session's speaker holds every scope (``scopes`` None)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..store import accounts as rows
from ..store import api_tokens
from ..store.archive import ArchiveStore
from ..tokens import API_PREFIX, Identity

__all__ = ["TOUCH_EVERY", "Speaker", "api_speaker"]

TOUCH_EVERY = 60.0
"""Seconds between two writes of a token's last use (as of a session's)."""


@dataclass(frozen=True, slots=True)
class Speaker:
    """Whom a ``hello`` speaks for when an account: its identity, the ``welcome``'s token,
    and the scopes it holds (None: every one; an API token's are its own)."""

    identity: Identity
    token: str
    scopes: frozenset[str] | None = None
    token_id: int | None = None
    """The API token's id (None for a session): its revocation ends the connection."""


def account_identity(account: rows.AccountRow) -> Identity:
    """Who an account is in races: its player, by its name, a bot when it is one."""
    return Identity(account.player, account.name, account=True, bot=account.bot)


async def api_speaker(
    archive: ArchiveStore, token: str, clock: Callable[[], float]
) -> Speaker | None:
    """Whom the API token ``token`` speaks for, with its scopes (its last use now, written
    at most every :data:`TOUCH_EVERY` seconds); None when there is no such token (revoked,
    never made, or its account deleted)."""
    if not token.startswith(API_PREFIX) or len(token) > 100:
        return None
    found = await api_tokens.api_token(archive, rows.token_hash(token))
    if found is None:
        return None
    account, number, scopes, last_used = found
    now = clock()
    if last_used is None or now - last_used >= TOUCH_EVERY:
        await api_tokens.touch_token(archive, number, now)
    return Speaker(account_identity(account), token, frozenset(scopes), number)
