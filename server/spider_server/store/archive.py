"""PostgreSQL: the records that last. The only module of the server that uses the driver.

Also the one question asked of a database at a node's start (:func:`not_answering`,
:func:`verdict`; from a thread of its own for a synchronous caller: :func:`verdict_now`).

A finished race is written once, whole (:meth:`ArchiveStore.write`): its row in ``races``
(the race's fields, results, replays with their times, boards and par, as msgpack, enough
to rebuild the :class:`~..race.Race` that Redis held), a row per player in
``race_players`` (the history), its rating changes, and the newest record of each of its
players (``player_records``, from which the ratings cache is rebuilt). The row's unique key
is the race's code and creation time: a second write of the same race, by a retry or
another node, changes nothing.

The schema is versioned by the files of ``migrations/`` (``0001_name.sql``, applied in
order, each in its own transaction); :meth:`ArchiveStore.open` applies the missing ones
under an advisory lock (two nodes starting together migrate once) and refuses a database
whose schema is newer than the node knows (:class:`~..errors.ArchiveError`): an upgrade
adds tables and columns first, and drops only what no running version reads.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from typing import Any, Literal
from urllib.parse import urlsplit

import asyncpg
import msgpack

from ..errors import ArchiveError, Unavailable
from ..metrics import Histogram
from ..race import Race
from ..race.ratings import Change, Record
from ..race.record import finished_at as race_finished_at
from ..settings import Settings
from .codec import entry_bytes, meta_fields, race_from

__all__ = [
    "Verdict",
    "not_answering",
    "verdict",
    "verdict_now",
    "EXAMPLES",
    "MIGRATION_LOCK",
    "QUERIES",
    "QUERY_BOUNDS",
    "ArchiveStore",
    "archive_of",
    "Migration",
    "RaceRow",
    "migrations",
]

log = logging.getLogger(__name__)

MIGRATION_LOCK = 0x5350_4944_4552  # "SPIDER": the advisory lock that migrations hold

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")

QUERY_BOUNDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)
"""Bounds (seconds) of each query's histogram (:meth:`ArchiveStore.timed`)."""


QUERIES: dict[str, str] = {
    "write_race": (
        "INSERT INTO races (code, created_at, finished_at, variant, rated, daily, "
        "players, actions, meta, entries) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, "
        "$10) ON CONFLICT ON CONSTRAINT races_once DO NOTHING RETURNING id"
    ),
    "write_players": (
        "INSERT INTO race_players (player, race_id, name, rank, status, time, moves, "
        "score, bot) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)"
    ),
    "write_changes": (
        "INSERT INTO rating_changes (player, race_id, variant, pool, before, after, "
        "provisional, mu_before, sigma_before, mu_after, sigma_after) VALUES ($1, $2, $3, "
        "$4, $5, $6, $7, $8, $9, $10, $11)"
    ),
    "write_records": (
        "INSERT INTO player_records (player, version, name, data, race_id) VALUES ($1, "
        "$2, $3, $4, $5) ON CONFLICT (player) DO UPDATE SET version = excluded.version, "
        "name = excluded.name, data = excluded.data, race_id = excluded.race_id WHERE "
        "player_records.version < excluded.version"
    ),
    "race": (
        "SELECT id, meta, entries FROM races WHERE code = $1 ORDER BY created_at DESC LIMIT 1"
    ),
    "records": ("SELECT player, version, data FROM player_records WHERE player = ANY($1)"),
}
"""Every query of this module by name (the metrics time them by name; a test runs
``EXPLAIN`` on each to check that it uses an index). Each module of the archive keeps its
queries in such a ``QUERIES``."""

EXAMPLES: dict[str, tuple[Any, ...]] = {
    "write_race": ("K7QX2", 1.7e9, 1.7e9 + 300, "spider1", True, "", 2, 400, b"\x80", b"\x80"),
    "write_players": ("p1", 1, "Ada", 1, "won", 201.7, 377, 500, False),
    "write_changes": ("p1", 1, "spider1", "humans", 1500, 1533, True, 25.0, 8.3, 26.0, 8.0),
    "write_records": ("p1", 3, "Ada", b"\x80", 1),
    "race": ("K7QX2",),
    "records": (["p1", "p2"],),
}
"""Parameters each query of :data:`QUERIES` can be run with (the index check runs
``EXPLAIN`` on each)."""


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """The schema's migrations this node knows, in order."""
    out = []
    for item in resources.files(__package__).joinpath("migrations").iterdir():
        m = _NAME.match(item.name)
        if m is not None:
            out.append(Migration(int(m[1]), m[2], item.read_text(encoding="utf-8")))
    out.sort(key=lambda m: m.version)
    return out


@dataclass(frozen=True, slots=True)
class RaceRow:
    """A finished race as archived: the race, and the row's id (the history's key)."""

    id: int
    race: Race


def _pack(value: Any) -> bytes:
    out: bytes = msgpack.packb(value, use_bin_type=True)
    return out


def _as_bytes(value: str | bytes) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else value


def race_blobs(race: Race) -> tuple[bytes, bytes]:
    """The race's ``meta`` and ``entries`` columns: its Redis hashes, as msgpack."""
    meta = {k: _as_bytes(v) for k, v in meta_fields(race).items()}
    meta["version"] = str(race.version).encode()
    entries = {pid: entry_bytes(e) for pid, e in race.players.items()}
    return _pack(meta), _pack(entries)


def race_of_blobs(meta: bytes, entries: bytes) -> Race:
    return race_from(msgpack.unpackb(meta, raw=False), msgpack.unpackb(entries, raw=False))


def archive_of(settings: Settings) -> ArchiveStore | None:
    """The archive of a node with these settings (None: no ``database_url``)."""
    if settings.database_url is None:
        return None
    return ArchiveStore(
        settings.database_url,
        pool_size=settings.database_pool,
        statement_timeout=settings.database_statement_timeout,
    )


class ArchiveStore:
    """The node's connections to PostgreSQL and every query it makes. Every method raises
    :class:`~..errors.Unavailable` when the database does not answer."""

    def __init__(self, url: str, *, pool_size: int = 10, statement_timeout: float = 10.0) -> None:
        self.url = url
        self.pool_size = pool_size
        self.statement_timeout = statement_timeout
        self._pool: asyncpg.Pool | None = None
        self.query_seconds: dict[str, Histogram] = {}
        """Each query's time by its name in its module's ``QUERIES`` (:meth:`timed`)."""

    # -- life ---------------------------------------------------------------------------------

    async def open(self) -> None:
        """Connect and bring the schema up to date; :class:`ArchiveError` when the
        database's schema is newer than this node knows, Unavailable when the database
        does not answer."""
        try:
            self._pool = await asyncpg.create_pool(
                self.url,
                min_size=1,
                max_size=self.pool_size,
                command_timeout=self.statement_timeout,
                server_settings={
                    "statement_timeout": str(int(self.statement_timeout * 1000)),
                    "application_name": "spider-race",
                },
            )
        except (OSError, asyncpg.PostgresError, TimeoutError) as e:
            raise Unavailable(f"the database does not answer: {e}") from None
        try:
            await self.migrate()
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            await pool.close()

    @property
    def pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise Unavailable("the archive is not open")
        return self._pool

    async def migrate(self) -> int:
        """Apply the migrations the database lacks, under the advisory lock; the schema's
        version after."""
        known = migrations()
        newest = known[-1].version if known else 0
        async with self.connection() as conn:
            await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
            try:
                await conn.execute(
                    "CREATE TABLE IF NOT EXISTS schema_migrations ("
                    " version integer PRIMARY KEY, name text NOT NULL,"
                    " applied_at timestamptz NOT NULL DEFAULT now())"
                )
                current = await conn.fetchval(
                    "SELECT coalesce(max(version), 0) FROM schema_migrations"
                )
                if current > newest:
                    raise ArchiveError(
                        f"the database's schema is at version {current}, newer than this "
                        f"node knows ({newest}): run a node of the newer version"
                    )
                for m in known:
                    if m.version <= current:
                        continue
                    async with conn.transaction():
                        await conn.execute(m.sql)
                        await conn.execute(
                            "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                            m.version,
                            m.name,
                        )
                    log.info("database schema migrated to %d (%s)", m.version, m.name)
                    current = m.version
                return int(current)
            finally:
                await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)

    def pool_counts(self) -> tuple[int, int]:
        """The pool's connections in use and idle now (none while it is not open)."""
        pool = self._pool
        if pool is None:
            return 0, 0
        idle = pool.get_idle_size()
        return pool.get_size() - idle, idle

    async def ping(self) -> None:
        """Unavailable unless the database answers a query now."""
        async with self.connection() as conn:
            await conn.fetchval("SELECT 1")

    def timed(self, name: str) -> _Timed:
        """Time what runs inside (``with`` or ``async with``) as the query ``name`` (its
        name in its module's ``QUERIES``; the metrics'
        ``spider_database_query_seconds{query=name}``), whether it succeeds or fails.
        Every query of the archive's modules runs inside one."""
        histogram = self.query_seconds.get(name)
        if histogram is None:
            histogram = self.query_seconds[name] = Histogram(QUERY_BOUNDS)
        return _Timed(histogram)

    def connection(self) -> Any:
        """One of the pool's connections, for ``async with`` (the archive's other modules
        run their queries on it; a driver or network error is Unavailable)."""
        return _Guarded(self.pool.acquire())

    # -- writes -------------------------------------------------------------------------------

    async def write(self, race: Race, changes: list[Change], records: dict[str, Record]) -> bool:
        """Archive finished ``race`` with its rating ``changes`` and its players'
        ``records`` now; True when this call wrote it, False when it was there already."""
        final = race.final
        if final is None:
            raise ValueError(f"race {race.code} is not finished")
        meta, entries = race_blobs(race)
        finished_at = race_finished_at(race) or race.started_at or race.created_at
        actions = sum(len(v) for v in final.replays.values())
        variant = race.options.variant
        players = [
            (r.player, r.name, r.rank, r.status, r.time, r.moves, r.score, r.bot)
            for r in final.results
            if not r.ghost
        ]
        async with self.connection() as conn, conn.transaction():
            with self.timed("write_race"):
                race_id = await conn.fetchval(
                    QUERIES["write_race"],
                    race.code,
                    race.created_at,
                    finished_at,
                    variant,
                    race.options.rated,
                    race.options.daily,
                    len(final.results),
                    actions,
                    meta,
                    entries,
                )
            if race_id is None:
                return False
            with self.timed("write_players"):
                await conn.executemany(
                    QUERIES["write_players"], [(p[0], race_id, *p[1:]) for p in players]
                )
            if changes:
                with self.timed("write_changes"):
                    await conn.executemany(
                        QUERIES["write_changes"],
                        [
                            (
                                c.player,
                                race_id,
                                variant,
                                c.pool,
                                c.before,
                                c.after,
                                c.provisional,
                                c.mu_before,
                                c.sigma_before,
                                c.mu_after,
                                c.sigma_after,
                            )
                            for c in changes
                        ],
                    )
            if records:
                with self.timed("write_records"):
                    await conn.executemany(
                        QUERIES["write_records"],
                        [
                            (pid, rec.version, rec.name, _pack(rec.fields()), race_id)
                            for pid, rec in records.items()
                        ],
                    )
            return True

    # -- reads --------------------------------------------------------------------------------

    async def race(self, code: str) -> RaceRow | None:
        """The newest finished race of that code, or None."""
        async with self.connection() as conn:
            with self.timed("race"):
                row = await conn.fetchrow(QUERIES["race"], code)
        return (
            None if row is None else RaceRow(row["id"], race_of_blobs(row["meta"], row["entries"]))
        )

    async def records(self, players: list[str]) -> dict[str, Record]:
        """The newest archived records of ``players`` (those without one left out)."""
        async with self.connection() as conn:
            with self.timed("records"):
                rows = await conn.fetch(QUERIES["records"], players)
        return {
            row["player"]: Record.from_fields(
                row["player"], row["version"], msgpack.unpackb(row["data"], raw=False)
            )
            for row in rows
        }

    async def counts(self) -> dict[str, int]:
        """Rows of each table and bytes of the races' table (for the bench and metrics)."""
        async with self.connection() as conn:
            row = await conn.fetchrow(
                "SELECT (SELECT count(*) FROM races) AS races,"
                " (SELECT coalesce(sum(actions), 0) FROM races) AS actions,"
                " pg_total_relation_size('races') + pg_total_relation_size('race_players')"
                " + pg_total_relation_size('rating_changes')"
                " + pg_total_relation_size('player_records') AS bytes"
            )
        return {k: int(row[k]) for k in ("races", "actions", "bytes")}


class _Timed:
    """Times its block into a histogram (:meth:`ArchiveStore.timed`)."""

    __slots__ = ("_histogram", "_started")

    def __init__(self, histogram: Histogram) -> None:
        self._histogram = histogram
        self._started = 0.0

    def __enter__(self) -> None:
        self._started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self._histogram.observe(time.perf_counter() - self._started)

    async def __aenter__(self) -> None:
        self.__enter__()

    async def __aexit__(self, *exc: object) -> None:
        self.__exit__()


class _Guarded:
    """A pool's connection whose driver and network errors are :class:`Unavailable`."""

    def __init__(self, acquiring: Any) -> None:
        self._acquiring = acquiring

    async def __aenter__(self) -> asyncpg.Connection:
        try:
            conn: asyncpg.Connection = await self._acquiring.__aenter__()
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as e:
            raise Unavailable(f"the database does not answer: {e}") from None
        return conn

    async def __aexit__(self, kind: Any, error: Any, tb: Any) -> bool:
        try:
            await self._acquiring.__aexit__(kind, error, tb)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as e:
            # the connection broke as it went back (the pool drops it): the block's own
            # error, if any, says more
            if error is None:
                raise Unavailable(f"the database failed: {e}") from None
        if isinstance(error, ArchiveError):
            return False
        if isinstance(
            error, OSError | asyncpg.PostgresError | asyncpg.InterfaceError | TimeoutError
        ):
            raise Unavailable(f"the database failed: {error}") from None
        return False


# -- the question asked at start: does the database let the node in? ------------------
@dataclass(frozen=True)
class Verdict:
    """What a database said to one connection: ``answers`` (``said`` is its version, e.g.
    ``18.6``), ``starting`` (it is starting up or shutting down), ``refuses`` (a wrong
    user, password or database: ``said`` is why), or ``silent`` (nothing answers, or not
    in time: ``said`` is why). ``said`` never holds the URL's password."""

    state: Literal["answers", "starting", "refuses", "silent"]
    said: str


async def verdict(url: str, *, timeout: float = 5.0) -> Verdict:
    """Connect to ``url`` once (within ``timeout`` seconds) and ask its version."""
    try:
        connection = await asyncio.wait_for(asyncpg.connect(url, timeout=timeout), timeout)
        try:
            version = await connection.fetchval("SHOW server_version")
        finally:
            await connection.close()
    except asyncpg.CannotConnectNowError as e:
        return Verdict("starting", _one_line(e, url))
    except asyncpg.PostgresError as e:
        return Verdict("refuses", _one_line(e, url))
    except (OSError, asyncpg.InterfaceError) as e:  # TimeoutError is an OSError
        return Verdict("silent", _one_line(e, url))
    return Verdict("answers", str(version))


def verdict_now(url: str, *, timeout: float = 5.0) -> Verdict:
    """:func:`verdict` for synchronous code, on an event loop of its own in a thread of its
    own (so that it may be called from inside a running loop too)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(verdict(url, timeout=timeout))).result()


async def not_answering(url: str, *, timeout: float = 10.0) -> str | None:
    """Why the database at ``url`` cannot serve the node, checked once: None when it lets
    the node in (or is starting up), else one line, ``does not answer (<why>)`` or
    ``refuses the node (<why>)``, without the password."""
    found = await verdict(url, timeout=timeout)
    if found.state == "refuses":
        return f"refuses the node ({found.said})"
    if found.state == "silent":
        return f"does not answer ({found.said})"
    return None


def _one_line(error: BaseException, url: str) -> str:
    said = " ".join(str(error).split()).rstrip(".") or type(error).__name__
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    return said.replace(password, "***") if password else said
