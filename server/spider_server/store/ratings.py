"""Redis commands of ratings, players' records, histories and the rating ladders (the keys,
all under the ``{ratings}`` hash tag, are described in :mod:`.keys`; the decisions are
:mod:`..race.ratings`').

A finished race is written into its players' records exactly once: :meth:`RatingStore.
apply_results` reads every player's record (with its version), decides with
:func:`~..race.ratings.settle`, and runs :data:`~.scripts.APPLY_RESULTS`, which writes
nothing when the race's marker is there already (another node, or an earlier try, applied
it) and nothing when one record's version moved (another race of that player was applied
in between: the update is decided again on the records read afresh, at most
:data:`~.guard.CAS_TRIES` times, :func:`~.guard.check_and_set`). The finish's node marks the race pending
(:meth:`~RatingStore.mark_pending`) *before* it commits the finish, so a node that dies
between the finish and the write leaves the race in ``{ratings}:pending``, where every
node's background step finds it (:meth:`~RatingStore.pending_races`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import asdict
from typing import Any, NamedTuple

import msgpack
from redis.asyncio import Redis

from ..errors import Conflict, Unavailable
from ..race import Race
from ..race.ratings import (
    Change,
    Line,
    PairLimit,
    Placing,
    Record,
    pool_of,
    provisional,
    settle,
)
from . import keys
from .codec import text
from .guard import as_unavailable, check_and_set
from .races import RaceStore
from .ratings_cache import RatingsCache
from .scripts import APPLY_RESULTS

__all__ = ["Archived", "LadderRow", "RatingStore", "fold", "marker"]

Archived = Callable[[list[str]], Awaitable[tuple[dict[str, Record], set[str]]]]
"""Players' archived records by id (those without one left out), and which of them are
accounts' (only theirs stand on the ladders): the archive's
:func:`~.accounts.ranked_records`."""

LadderRow = tuple[int, str, str, int, bool]
"""A ladder's line: (place, player, name, rating shown, provisional)."""


def fold(name: str) -> str:
    """A name as the name index keeps it: case folded (names are not unique: the index
    names the player of that name who finished a race last)."""
    return name.casefold()


def marker(race: Race) -> str:
    """The race's applied marker: its code and creation time (a code is reused only after
    its race is gone)."""
    return f"{race.code}:{race.created_at!r}"


def _unpack(data: Any) -> Any:
    return msgpack.unpackb(data, raw=False)


def _pack(value: Any) -> bytes:
    out: bytes = msgpack.packb(value, use_bin_type=True)
    return out


class _Settled(NamedTuple):
    """A finished race's settlement, decided: the script's keys and arguments."""

    changes: list[Change]
    key_list: list[str]
    args: list[Any]


class RatingStore:
    """Players' records, histories and ladders (``{ratings}:*``)."""

    def __init__(
        self,
        redis: Redis,
        races: RaceStore,
        clock: Callable[[], float],
        archived: Archived | None = None,
        pairs: PairLimit | None = None,
    ) -> None:
        self.redis = redis
        self.pairs = pairs or PairLimit()
        """How often a pair of players may race rated in a window and still be rated."""
        self.races = races
        """The races (a pending race is read to write its results)."""
        self.clock = clock
        """The deployment's time."""
        self.archived = archived
        """The archived records of players (None: no archive): a record missing in Redis
        is read there and written back into the cache before it is used."""
        self.cache = RatingsCache(redis)
        self._apply = redis.register_script(APPLY_RESULTS)

    # -- the pending races ------------------------------------------------------------------

    async def mark_pending(self, code: str, now: float) -> None:
        """Note that race ``code``'s finish is about to be committed (before it is): its
        results are to be written, by this node or any node's background step."""
        with as_unavailable:
            await self.redis.zadd(keys.PENDING, {code: now}, nx=True)

    async def pending_races(self, before: float, limit: int = 32) -> list[str]:
        """Codes of races marked pending before ``before``, oldest first."""
        with as_unavailable:
            codes: list[Any] = await self.redis.zrangebyscore(
                keys.PENDING, "-inf", before, 0, limit
            )
        return [text(c) for c in codes]

    async def apply_pending(
        self,
        before: float,
        finish: Callable[[str], Awaitable[Race | None]] | None = None,
    ) -> int:
        """Write the results of the races pending since before ``before`` (their finishing
        node did not: it died, or Redis failed it). A race that is gone is dropped; one not
        finished yet (its finish was due, but lost with its node) is finished first with
        ``finish`` (the node's transitions), or else goes to the back of the line. Safe on
        every node at once (each race is written once). Returns how many races were
        looked at."""
        codes = await self.pending_races(before)
        for code in codes:
            race = await self.races.load_race(code)
            if race is not None and race.final is None and finish is not None:
                race = await finish(code)
            if race is None:
                await self.drop_pending(code)
            elif race.final is not None:
                await self.apply_results(race)
            else:
                with as_unavailable:
                    await self.redis.zadd(keys.PENDING, {code: self.clock()}, xx=True)
        return len(codes)

    async def drop_pending(self, code: str) -> None:
        with as_unavailable:
            await self.redis.zrem(keys.PENDING, code)

    # -- records ----------------------------------------------------------------------------

    async def load_records(self, players: list[str]) -> dict[str, Record]:
        """The players' records now (those without one are left out)."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for pid in players:
                    pipe.hmget(keys.record(pid), "v", "d")
                replies = await pipe.execute()
        out: dict[str, Record] = {}
        for pid, (version, data) in zip(players, replies, strict=True):
            if version is not None and data is not None:
                out[pid] = Record.from_fields(pid, int(version), _unpack(data))
        missing = [pid for pid in dict.fromkeys(players) if pid not in out]
        if missing and self.archived is not None:
            out.update(await self._from_archive(missing))
        return out

    async def _from_archive(self, players: list[str]) -> dict[str, Record]:
        """The archived records of ``players`` (missing in Redis), written back into the
        cache first (where Redis holds none as new), so that a race is never decided on
        a fresh record while an older one is archived. When the archive does not answer,
        a cache marked whole (rebuilt) is taken at its word; else Unavailable."""
        assert self.archived is not None
        try:
            found, ranked = await self.archived(players)
        except Unavailable:
            if await self.cache.marked(keys.RATINGS_REBUILT):
                return {}
            raise
        await self.cache.put([(rec, None) for rec in found.values()], rebuild=False, ranked=ranked)
        return found

    async def rating_of(self, player: str, variant: str) -> int:
        """The rating shown of ``player`` in ``variant`` (1500 for a player without one):
        quick match pairs players by it."""
        record = (await self.load_records([player])).get(player)
        vr = record.variants.get(variant) if record is not None else None
        if vr is None:
            from ..race.ratings import DISPLAY_BASE

            return DISPLAY_BASE
        return vr.rating

    async def player_named(self, name: str) -> str | None:
        """The id of the player of that name who finished a race last, or None."""
        with as_unavailable:
            pid = await self.redis.hget(keys.NAMES, fold(name))
        return None if pid is None else text(pid)

    async def history(self, player: str, limit: int = keys.HISTORY_MAX) -> list[Line]:
        """The player's last races, newest first."""
        with as_unavailable:
            items = await self.redis.lrange(keys.history(player), 0, limit - 1)
        return [Line(**_unpack(i)) for i in items]

    # -- applying a finished race -----------------------------------------------------------

    async def applied_changes(self, race: Race) -> list[Change] | None:
        """The rating changes of a finished race once its results are written (empty for an
        unrated race); None while they are not."""
        with as_unavailable:
            data = await self.redis.hget(keys.APPLIED, marker(race))
        if data is None:
            return None
        return [Change(**c) for c in _unpack(data)]

    async def apply_results(self, race: Race) -> list[Change]:
        """Write a finished race into its players' records, histories and ladders, unless it
        was written before; the race's rating changes (as written, also when another node
        wrote them). Safe on every node at once: the marker lets one write win."""
        assert race.final is not None
        placings = [
            Placing(
                player=r.player,
                name=r.name,
                rank=r.rank,
                status=r.status,
                time=r.time,
                bot=bool(getattr(r, "bot", False)),
                guest=bool(getattr(r, "guest", False)),
                moves=int(getattr(r, "moves", 0) or 0),
            )
            for r in race.final.results
        ]
        players = [p.player for p in placings]
        mark = marker(race)

        async def load() -> tuple[list[Change] | None, dict[str, Record], float]:
            done = await self.applied_changes(race)
            if done is not None:
                return done, {}, 0.0
            return None, await self.load_records(players), self.clock()

        def decide(loaded: tuple[list[Change] | None, dict[str, Record], float]) -> _Settled | None:
            done, records, now = loaded
            if done is not None:
                return None
            return _settlement(race, mark, placings, records, now, self.pairs)

        async def commit(settled: _Settled) -> None:
            with as_unavailable:
                reply = await self._apply(keys=settled.key_list, args=settled.args)
            if reply[0] != 1:  # "done": applied by another node meanwhile (read its
                # changes); else a record moved on (another race of that player)
                raise Conflict(f"race {race.code}'s results: {text(reply[1])}")

        attempt = await check_and_set(
            load, decide, commit, busy="too much contention on players' ratings; try again"
        )
        if attempt.decision is None:
            await self.drop_pending(race.code)
            done = attempt.loaded[0]
            assert done is not None
            return done
        return attempt.decision.changes

    # -- the ladders ------------------------------------------------------------------------

    async def put_on_ladders(self, player: str) -> int:
        """Put ``player``'s ratings on the ladders of every variant they have a rated race
        in (their pool's, with the rating shown, as a settlement writes it): a guest taken
        over by an account. Doing it again changes nothing; how many ladders."""
        record = (await self.load_records([player])).get(player)
        if record is None:
            return 0
        placed = {
            keys.ladder(pool_of(record.bot), variant): vr.rating
            for variant, vr in record.variants.items()
            if vr.rated and not vr.provisional
        }
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, rating in placed.items():
                    pipe.zadd(key, {player: rating})
                await pipe.execute()
        return len(placed)

    async def ladder(
        self, pool: str, variant: str, player: str | None, limit: int = 100
    ) -> tuple[list[LadderRow], LadderRow | None]:
        """The top ``limit`` of a pool's ladder in ``variant`` (equal ratings share a
        place), and ``player``'s own line (None when they are not on it: no rated race in
        the variant, a provisional rating, a guest)."""
        key = keys.ladder(pool, variant)
        mine: tuple[int, float] | None = None
        with as_unavailable:
            rows: list[Any] = await self.redis.zrevrange(key, 0, limit - 1, withscores=True)
            if player is not None:
                score = await self.redis.zscore(key, player)
                if score is not None:
                    above = await self.redis.zcount(key, f"({score}", "+inf")
                    mine = (int(above) + 1, float(score))
        ids = [text(member) for member, _ in rows]
        wanted = [*ids, player] if mine is not None and player is not None else ids
        records = await self.load_records(wanted)
        out: list[LadderRow] = []
        place, last = 0, None
        for i, (pid, (_, score)) in enumerate(zip(ids, rows, strict=True)):
            if score != last:  # equal ratings share a place
                place, last = i + 1, score
            if _other_pool(records.get(pid), pool):
                continue  # raced in the other pool since: never shown on this one
            out.append(_row(place, pid, int(score), records.get(pid), variant))
        own: LadderRow | None = None
        if mine is not None and player is not None and not _other_pool(records.get(player), pool):
            own = _row(mine[0], player, int(mine[1]), records.get(player), variant)
        return out, own


def _other_pool(record: Record | None, pool: str) -> bool:
    """Whether a ladder's player is of the other pool now (:func:`~..race.ratings.in_pool`)."""
    return record is not None and pool_of(record.bot) != pool


def _row(place: int, player: str, rating: int, record: Record | None, variant: str) -> LadderRow:
    vr = record.variants.get(variant) if record is not None else None
    name = record.name if record is not None else player
    return (place, player, name, rating, provisional(vr.sigma) if vr is not None else True)


def _settlement(
    race: Race,
    mark: str,
    placings: list[Placing],
    records: dict[str, Record],
    now: float,
    pairs: PairLimit,
) -> _Settled:
    """Decide a finished race's settlement on the records read: the changes, and the
    script's keys and arguments that write them (checked against each record's version)."""
    assert race.final is not None
    players = [p.player for p in placings]
    out = settle(
        code=race.code,
        variant=race.options.variant,
        rated=race.options.rated,
        placings=placings,
        records=records,
        now=now,
        pairs=pairs,
    )
    ladders: list[str] = []
    args: list[Any] = [
        mark,
        race.code,
        repr(now),
        repr(now - keys.APPLIED_KEEP),
        _pack([asdict(c) for c in out.changes]),
        str(len(players)),
        str(keys.HISTORY_MAX),
        str(keys.PROFILE_TTL),
        "1" if out.changes else "0",
    ]
    moved = {c.player for c in out.changes}
    for rec in out.records:
        index = 0
        vr = rec.variants[race.options.variant]
        if rec.player in moved and not vr.provisional:  # a provisional rating: no ladder
            ladders.append(keys.ladder(pool_of(rec.bot), race.options.variant))
            index = 5 + 2 * len(players) + len(ladders)
        args += [
            rec.player,
            str(rec.version),
            _pack(rec.fields()),
            _pack(asdict(out.lines[rec.player])),
            str(index),
            str(vr.rating),
            fold(rec.name),
        ]
    key_list = [keys.APPLIED, keys.APPLIED_AT, keys.PENDING, keys.RATED_RACES, keys.NAMES]
    for pid in players:
        key_list += [keys.record(pid), keys.history(pid)]
    key_list += ladders
    return _Settled(out.changes, key_list, args)
