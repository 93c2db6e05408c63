"""What players read from the archive: a player's history (every race, paged), their
record, a player found by name, the daily deals' leaderboards, the rating ladders and a
player's rating history.

Each function takes the node's :class:`~.archive.ArchiveStore` and runs the queries of
:data:`QUERIES` on one of its connections (timed by name). The session's handlers merge
these with what Redis holds of the races not archived yet (:mod:`..session.player_reads`).

A history is paged by a cursor (:class:`Cursor`): the archived races come newest first by
their row's id (the order they were archived in, which is the order they finished in), then
the lines kept of races gone from Redis before there was an archive (``history_lines``,
older than any archived race), newest first by their time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import msgpack

from ..race.ratings import Line, Record
from .archive import ArchiveStore
from .ratings import LadderRow, fold

__all__ = [
    "EXAMPLES",
    "QUERIES",
    "Cursor",
    "HistoryPage",
    "RatingStep",
    "archived_lines",
    "daily_leaderboard",
    "history",
    "ladder",
    "player_named",
    "rating_history",
    "record",
]

NEWEST = 2**63 - 1
"""A race id above every other: the history's first page starts below it."""

_NAME_CANDIDATES = 20
"""Players of the same name (by the database's ``lower``) looked at to find the one whose
name folds as the asked one does."""

QUERIES: dict[str, str] = {
    "player_history": (
        "SELECT p.race_id, r.code, r.variant, r.finished_at, p.rank, r.players, p.status, "
        "p.time, r.rated, c.before, c.after FROM race_players p JOIN races r ON r.id = "
        "p.race_id LEFT JOIN rating_changes c ON c.player = p.player AND c.race_id = "
        "p.race_id WHERE p.player = $1 AND p.race_id < $2 ORDER BY p.race_id DESC LIMIT $3"
    ),
    "player_kept_lines": (
        "SELECT at, code, line FROM history_lines WHERE player = $1 AND (at, code) < "
        "($2, $3) ORDER BY at DESC, code DESC LIMIT $4"
    ),
    "player_archived_lines": (
        "SELECT r.code, r.finished_at AS at FROM races r JOIN race_players p ON p.race_id "
        "= r.id AND p.player = $1 WHERE r.code = ANY($2) UNION ALL SELECT code, at FROM "
        "history_lines WHERE player = $1 AND code = ANY($2)"
    ),
    "player_record": "SELECT player, version, data FROM player_records WHERE player = $1",
    "player_named": (
        "SELECT player, name FROM race_players WHERE lower(name) = lower($1) ORDER BY "
        "race_id DESC LIMIT $2"
    ),
    "player_named_record": (
        "SELECT player, name FROM player_records WHERE lower(name) = lower($1) ORDER BY "
        "version DESC LIMIT $2"
    ),
    "daily_leaderboard": (
        "SELECT player, name, time, moves, bot, code FROM (SELECT DISTINCT ON (p.player) "
        "p.player, p.name, p.time, p.moves, p.bot, r.code FROM races r JOIN race_players p "
        "ON p.race_id = r.id JOIN accounts a ON a.player = p.player WHERE r.variant = $1 AND r.daily = $2 AND r.daily <> '' AND "
        "p.status = 'won' AND p.time IS NOT NULL ORDER BY p.player, r.id) w ORDER BY "
        'round(time * 1000), least(moves, 999999), player COLLATE "C" LIMIT $3'
    ),
    "ladder_top": (
        "SELECT player, after, provisional FROM (SELECT DISTINCT ON (player) player, "
        "after, provisional FROM rating_changes WHERE variant = $1 AND pool = $2 ORDER BY "
        'player, race_id DESC) l WHERE NOT l.provisional ORDER BY after DESC, player COLLATE "C" '
        "DESC LIMIT $3"
    ),
    "ladder_mine": (
        "SELECT after, provisional FROM (SELECT after, provisional FROM rating_changes "
        "WHERE player = $3 AND variant = $1 AND pool = $2 ORDER BY race_id DESC LIMIT 1) m "
        "WHERE NOT m.provisional"
    ),
    "ladder_above": (
        "SELECT count(*) FROM (SELECT DISTINCT ON (player) player, after, provisional FROM "
        "rating_changes WHERE variant = $1 AND pool = $2 ORDER BY player, race_id DESC) l "
        "WHERE l.after > $3 AND NOT l.provisional"
    ),
    "player_names": "SELECT player, name FROM player_records WHERE player = ANY($1)",
    "rating_history": (
        "SELECT c.race_id, r.code, r.finished_at, c.variant, c.pool, c.before, c.after, "
        "c.provisional FROM rating_changes c JOIN races r ON r.id = c.race_id WHERE "
        "c.player = $1 AND c.race_id < $2 AND ($3 = '' OR c.variant = $3) ORDER BY "
        "c.race_id DESC LIMIT $4"
    ),
}
"""Every query of this module by name (see :data:`.archive.QUERIES`)."""

EXAMPLES: dict[str, tuple[Any, ...]] = {
    "player_history": ("p7", NEWEST, 51),
    "player_kept_lines": ("p7", 1.9e9, "", 51),
    "player_archived_lines": ("p7", ["K7QX2", "AB2CD"]),
    "player_record": ("p7",),
    "player_named": ("name7", _NAME_CANDIDATES),
    "player_named_record": ("name7", _NAME_CANDIDATES),
    "daily_leaderboard": ("spider4", "2026-11-29", 100),
    "ladder_top": ("spider1", "humans", 100),
    "ladder_mine": ("spider1", "humans", "p7"),
    "ladder_above": ("spider1", "humans", 1500),
    "player_names": (["p7", "p8"],),
    "rating_history": ("p7", NEWEST, "spider1", 51),
}
"""Parameters each query of :data:`QUERIES` can be run with (the index check runs
``EXPLAIN`` on each)."""


def _unpack(data: bytes) -> Any:
    return msgpack.unpackb(data, raw=False)


# -- the history ------------------------------------------------------------------------------

_CURSOR = re.compile(r"^(?:r([0-9]{1,19})|h(-?[0-9][0-9.e+-]{0,30}):([A-Z0-9]{0,16}))$")


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where a page of a player's history starts: below archived race ``race_id``, or, past
    the archived races, below the kept line of time ``at`` and code ``code``. Its text
    (:meth:`text`, :meth:`parse`) is the protocol's opaque ``before``."""

    race_id: int = NEWEST
    at: float | None = None
    code: str = ""

    def text(self) -> str:
        return f"r{self.race_id}" if self.at is None else f"h{self.at!r}:{self.code}"

    @classmethod
    def parse(cls, text: str) -> Cursor | None:
        """The cursor a page's ``next`` gave; None when ``text`` is none."""
        m = _CURSOR.match(text)
        if m is None:
            return None
        if m[1] is not None:
            race_id = int(m[1])
            return cls(race_id=race_id) if 0 < race_id <= NEWEST else None
        try:
            at = float(m[2])
        except ValueError:
            return None
        return cls(race_id=0, at=at, code=m[3]) if at == at else None  # not NaN


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """A page of a player's archived history, newest first; ``next`` is where the page
    after starts (None: this is the last)."""

    lines: list[Line]
    next: Cursor | None


async def history(archive: ArchiveStore, player: str, before: Cursor, limit: int) -> HistoryPage:
    """Up to ``limit`` lines of the player's archived history, starting below ``before``."""
    lines: list[Line] = []
    last: Cursor | None = None
    async with archive.connection() as conn:
        if before.at is None:
            with archive.timed("player_history"):
                rows = await conn.fetch(
                    QUERIES["player_history"], player, before.race_id, limit + 1
                )
            for row in rows[:limit]:
                lines.append(_line(row))
                last = Cursor(race_id=row["race_id"])
            if len(rows) > limit:
                return HistoryPage(lines, last)
            before = Cursor(race_id=0, at=float("inf"), code="")
        room = limit - len(lines)
        assert before.at is not None
        with archive.timed("player_kept_lines"):
            kept = await conn.fetch(
                QUERIES["player_kept_lines"], player, before.at, before.code, room + 1
            )
    for row in kept[:room]:
        lines.append(Line(**_unpack(row["line"])))
        last = Cursor(race_id=0, at=row["at"], code=row["code"])
    return HistoryPage(lines, last if len(kept) > room else None)


def _line(row: Any) -> Line:
    return Line(
        code=row["code"],
        variant=row["variant"],
        at=row["finished_at"],
        rank=row["rank"],
        of=row["players"],
        status=row["status"],
        time=row["time"],
        rated=row["rated"],
        before=row["before"],
        after=row["after"],
    )


async def archived_lines(
    archive: ArchiveStore, player: str, codes: list[str]
) -> list[tuple[str, float]]:
    """(code, time) of the player's archived races and kept lines among ``codes``: the
    lines of Redis's history that the archive has (a code is reused once its race is
    gone, hence the time)."""
    if not codes:
        return []
    async with archive.connection() as conn:
        with archive.timed("player_archived_lines"):
            rows = await conn.fetch(QUERIES["player_archived_lines"], player, codes)
    return [(row["code"], row["at"]) for row in rows]


# -- players ----------------------------------------------------------------------------------


async def record(archive: ArchiveStore, player: str) -> Record | None:
    """The player's newest archived record (None: none)."""
    async with archive.connection() as conn:
        with archive.timed("player_record"):
            row = await conn.fetchrow(QUERIES["player_record"], player)
    if row is None:
        return None
    return Record.from_fields(row["player"], row["version"], _unpack(row["data"]))


async def player_named(archive: ArchiveStore, name: str) -> str | None:
    """The id of the player of that name (case folded) whose archived race is the newest;
    else of a player whose archived record bears it; None when nobody does."""
    folded = fold(name)
    async with archive.connection() as conn:
        for query in ("player_named", "player_named_record"):
            with archive.timed(query):
                rows = await conn.fetch(QUERIES[query], name, _NAME_CANDIDATES)
            for row in rows:
                if fold(row["name"]) == folded:
                    return str(row["player"])
    return None


# -- the daily deals' leaderboards --------------------------------------------------------------


async def daily_leaderboard(
    archive: ArchiveStore, variant: str, day: str, limit: int = 100
) -> list[tuple[str, str, float, int, bool, str]]:
    """The archived winners of a variant's daily deal on ``day``, best first as Redis ranks
    them (time in ms, then moves, then id; each player's first race of the day):
    (player, name, time, moves, bot, race code), time to the millisecond."""
    async with archive.connection() as conn:
        with archive.timed("daily_leaderboard"):
            rows = await conn.fetch(QUERIES["daily_leaderboard"], variant, day, limit)
    return [
        (
            row["player"],
            row["name"],
            int(round(row["time"] * 1000)) / 1000,
            min(row["moves"], 999_999),
            row["bot"],
            row["code"],
        )
        for row in rows
    ]


# -- the rating ladders ---------------------------------------------------------------------


async def ladder(
    archive: ArchiveStore, pool: str, variant: str, player: str | None, limit: int = 100
) -> tuple[list[LadderRow], LadderRow | None]:
    """A pool's ladder in ``variant`` as the archive has it (each player's rating after
    their newest rated race there, unless provisional; rated races are accounts'), in the
    shape of :meth:`.ratings.RatingStore.ladder`:
    the top ``limit`` (equal ratings share a place) and ``player``'s own line."""
    async with archive.connection() as conn:
        with archive.timed("ladder_top"):
            rows = await conn.fetch(QUERIES["ladder_top"], variant, pool, limit)
        mine = None
        if player is not None:
            with archive.timed("ladder_mine"):
                mine = await conn.fetchrow(QUERIES["ladder_mine"], variant, pool, player)
        above = 0
        if mine is not None:
            with archive.timed("ladder_above"):
                above = await conn.fetchval(QUERIES["ladder_above"], variant, pool, mine["after"])
        wanted = [row["player"] for row in rows]
        if mine is not None and player is not None:
            wanted.append(player)
        with archive.timed("player_names"):
            named = await conn.fetch(QUERIES["player_names"], wanted)
    names = {row["player"]: row["name"] for row in named}
    out: list[LadderRow] = []
    place, last = 0, None
    for i, row in enumerate(rows):
        if row["after"] != last:  # equal ratings share a place
            place, last = i + 1, row["after"]
        pid = row["player"]
        out.append((place, pid, names.get(pid, pid), row["after"], row["provisional"]))
    own: LadderRow | None = None
    if mine is not None and player is not None:
        name = names.get(player, player)
        own = (int(above) + 1, player, name, mine["after"], mine["provisional"])
    return out, own


# -- a player's rating history ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RatingStep:
    """One rated race of a player: its rating before and after."""

    race_id: int
    code: str
    at: float
    variant: str
    pool: str
    before: int
    after: int
    provisional: bool


async def rating_history(
    archive: ArchiveStore,
    player: str,
    *,
    variant: str = "",
    before: int = NEWEST,
    limit: int = 50,
) -> list[RatingStep]:
    """The player's rating changes, newest first (in one variant, or all with ``""``),
    below race id ``before`` (the last one's ``race_id`` gives the page after)."""
    async with archive.connection() as conn:
        with archive.timed("rating_history"):
            rows = await conn.fetch(QUERIES["rating_history"], player, before, variant, limit)
    return [
        RatingStep(
            race_id=row["race_id"],
            code=row["code"],
            at=row["finished_at"],
            variant=row["variant"],
            pool=row["pool"],
            before=row["before"],
            after=row["after"],
            provisional=row["provisional"],
        )
        for row in rows
    ]
