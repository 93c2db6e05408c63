"""What players read, from Redis and the archive together: a player found by name, their
record, a page of their history, and a daily deal's leaderboard.

Without an archive (the node keeps none) Redis answers alone, as it always did. With one,
a finished race is read from the archive once it is archived, and from Redis before: the
first page of a history puts the player's races that Redis holds and the archive does not
yet (the newest: races are archived as they finish) before the archive's newest, each race
once; the pages after come from the archive alone, below the cursor the page before gave
(:class:`~..store.archive_players.Cursor`). A leaderboard is Redis's and the archive's
winners of the day together, each player once, ranked as Redis ranks them. When the
database does not answer, the first page and the leaderboard are Redis's (as without an
archive) and a later page is ``unavailable``.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from ..errors import InvalidMessage, Unavailable
from ..race.ratings import Line, Record
from ..store import archive_players, keys, leaderboard_score
from ..store.accounts import accounts_of_players
from ..store.archive import ArchiveStore
from ..store.archive_players import Cursor
from .core import Session

__all__ = ["Page", "daily_board", "history_page", "player_named", "record_of"]

log = logging.getLogger(__name__)

PAGE = keys.HISTORY_MAX
"""Races of the archive a page of a history shows (the first page shows, before them, the
races Redis holds that are not archived yet)."""

BoardRow = tuple[str, str, float, int, bool, str | None]
"""A leaderboard's line: (player, name, time, moves, bot, race code)."""


def archive_of(session: Session) -> ArchiveStore | None:
    """The node's archive when it keeps one and has opened it (None: Redis alone)."""
    archiver = session.ctx.archiver
    if archiver is None or not archiver.on or not archiver.opened:
        return None
    return archiver.archive


async def player_named(session: Session, name: str) -> str | None:
    """The player of the account whose name has the key of ``name`` (a guest is found by
    its player id only: anyone may go by a guest's name); None when no account has it.
    Unavailable when the database does not answer."""
    accounts = session.ctx.accounts
    if accounts is None:
        return None
    account = await accounts.guests.holder(name)
    return None if account is None else account.player


async def is_guest(session: Session, player: str) -> bool:
    """Whether ``player`` has no account (a guest, or a player from before accounts) on a
    server that keeps accounts; False while the database does not answer."""
    if session.ctx.accounts is None or not session.ctx.accounts.guests.kept:
        return False
    if player == session.player:
        return session.guest
    archive = archive_of(session)
    if archive is None:
        return False
    try:
        return player not in await accounts_of_players(archive, [player])
    except Unavailable as e:
        log.warning("profile without its guest mark: %s", e)
        return False


async def record_of(session: Session, player: str) -> Record | None:
    """The player's record: Redis's, or the archive's when it is newer (or Redis has
    none)."""
    record = (await session.ctx.store.ratings.load_records([player])).get(player)
    archive = archive_of(session)
    if archive is None:
        return record
    try:
        archived = await archive_players.record(archive, player)
    except Unavailable as e:
        log.warning("profile from Redis alone: %s", e)
        return record
    if archived is not None and (record is None or archived.version > record.version):
        return archived
    return record


@dataclass(frozen=True, slots=True)
class Page:
    """A page of a player's history, newest first; ``next``: the cursor of the page after
    (None: the last page)."""

    lines: list[Line]
    next: str | None


async def history_page(session: Session, player: str, before: str | None) -> Page:
    """The page of the player's history that starts below ``before`` (None: the first)."""
    archive = archive_of(session)
    cursor = None
    if before is not None:
        cursor = Cursor.parse(before)
        if cursor is None:
            raise InvalidMessage("before: not a page's next")
        if archive is None:  # Redis's history is one page: nothing follows it
            return Page([], None)
        page = await archive_players.history(archive, player, cursor, PAGE)
        return Page(page.lines, None if page.next is None else page.next.text())
    held = await session.ctx.store.ratings.history(player)
    if archive is None:
        return Page(held, None)
    try:  # in this order: a race archived in between is on the page, and shown once
        archived = await archive_players.archived_lines(
            archive, player, sorted({line.code for line in held})
        )
        page = await archive_players.history(archive, player, Cursor(), PAGE)
    except Unavailable as e:
        log.warning("history from Redis alone: %s", e)
        return Page(held, None)
    window = session.ctx.settings.results_ttl
    shown = {(line.code, line.at) for line in page.lines}
    fresh = [
        line
        for line in held
        if not any(
            code == line.code and abs(at - line.at) <= window for code, at in [*archived, *shown]
        )
    ]
    return Page([*fresh, *page.lines], None if page.next is None else page.next.text())


async def daily_board(session: Session, variant: str, day: str) -> list[BoardRow]:
    """A daily deal's leaderboard (its best 100), Redis's and the archive's winners
    together, best first: by time in milliseconds, then moves, then id. With a database,
    accounts only (guests race the daily deal, and are on no leaderboard)."""
    seeds = session.ctx.store.seeds
    rows = await seeds.leaderboard(variant, day)
    codes = await seeds.daily_races_of(variant, day, [row[0] for row in rows])
    merged: dict[str, BoardRow] = {
        row[0]: (*row, code) for row, code in zip(rows, codes, strict=True)
    }
    archive = archive_of(session)
    if archive is not None:
        try:
            archived = await archive_players.daily_leaderboard(archive, variant, day)
            accounts = await accounts_of_players(archive, list(merged))
        except Unavailable as e:
            log.warning("leaderboard from Redis alone: %s", e)
            archived, accounts = [], set(merged)
        # the leaderboards are accounts': Redis's winners from before accounts are guests
        merged = {p: row for p, row in merged.items() if p in accounts}
        for player, name, time, moves, bot, code in archived:
            known = merged.get(player)
            if known is None:
                merged[player] = (player, name, time, moves, bot, code)
            elif known[5] is None:
                merged[player] = (*known[:5], code)
    ordered = sorted(
        merged.values(), key=lambda row: (leaderboard_score(row[2], row[3]), row[0].encode())
    )
    return ordered[:100]
