"""What keeps quick matches honest, in Redis: the matches waiting for their players to
join (:data:`~.keys.MATCH_CONFIRM`, with each match's seats), the players put first in
line when a match was called off without their fault, and the strikes of players who
missed a match or left one before its start (per player and per client address, the last
day).

All keys share the ``{match}`` hash tag of the queues. Every method raises
:class:`~..errors.Unavailable` when Redis does not answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from redis.asyncio import Redis

from . import keys
from .codec import text
from .guard import as_unavailable
from .scripts import DUE_CONFIRMS

__all__ = ["DAY", "MatchingStore", "Seat", "Strikes"]

DAY = 86400.0
"""Seconds a strike counts."""

_POOL = "~pool"
"""The field of a match's seats that holds its pool."""


class Seat(NamedTuple):
    """A matched player's place, as queued."""

    address: str
    """The client address they queued from ('' unknown)."""
    since: float
    """When they queued (the server's clock)."""


class Strikes(NamedTuple):
    """Strikes of the last day: (kind, time) each, ``n`` a missed match, ``d`` a match left
    before its start."""

    player: list[tuple[str, float]]
    address: list[tuple[str, float]]


class MatchingStore:
    """Matches waiting for their players, places first in line, and strikes."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._due: Any = None

    # -- matches waiting for their players ----------------------------------------------------

    async def expect(self, code: str, pool: str, seats: dict[str, Seat], deadline: float) -> None:
        """Remember match ``code`` of ``pool`` with its players' seats, to be settled at
        ``deadline`` (call before the race is committed: a node that dies in between
        leaves a match whose race does not exist, which settling forgets)."""
        fields: dict[Any, Any] = {_POOL: pool}
        fields.update({p: f"{s.address}\t{s.since!r}" for p, s in seats.items()})
        key = keys.match_seats(code)
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hset(key, mapping=fields)
                pipe.expire(key, keys.MATCH_KEEP)
                pipe.zadd(keys.MATCH_CONFIRM, {code: deadline})
                await pipe.execute()

    async def due(self, now: float, *, lease: float, limit: int = 50) -> list[str]:
        """The matches whose time to join is up, taken for ``lease`` seconds."""
        if self._due is None:
            self._due = self.redis.register_script(DUE_CONFIRMS)
        with as_unavailable:
            found = await self._due(
                keys=[keys.MATCH_CONFIRM], args=[repr(now), repr(lease), str(limit)]
            )
        return [text(c) for c in found]

    async def give_back(self, codes: Sequence[str], now: float) -> None:
        """Matches taken by :meth:`due` and not settled: due again at ``now`` (those
        settled since, by any node, stay forgotten)."""
        if codes:
            with as_unavailable:
                await self.redis.zadd(keys.MATCH_CONFIRM, dict.fromkeys(codes, now), xx=True)

    async def seats(self, code: str) -> tuple[str, dict[str, Seat]]:
        """Match ``code``'s pool ('' when forgotten) and its players' seats."""
        with as_unavailable:
            found = await self.redis.hgetall(keys.match_seats(code))
        pool, seats = "", {}
        for field, value in found.items():
            name, data = text(field), text(value)
            if name == _POOL:
                pool = data
                continue
            address, _, since = data.rpartition("\t")
            try:
                seats[name] = Seat(address, float(since))
            except ValueError:
                continue
        return pool, seats

    async def settled(self, code: str) -> None:
        """Match ``code`` is settled (confirmed, called off, or gone): no longer due."""
        with as_unavailable:
            await self.redis.zrem(keys.MATCH_CONFIRM, code)

    # -- first in line ----------------------------------------------------------------------

    async def put_first(self, players: dict[str, float], pool: str) -> None:
        """Put each player first in line for ``pool`` (player -> since: the time they
        queued for the match called off) for :data:`~.keys.FIRST_TTL` seconds."""
        if not players:
            return
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for player, since in players.items():
                    pipe.set(keys.match_first(player), f"{pool}\t{since!r}", ex=keys.FIRST_TTL)
                await pipe.execute()

    async def drop_first(self, players: Sequence[str]) -> None:
        if players:
            with as_unavailable:
                await self.redis.delete(*(keys.match_first(p) for p in players))

    async def is_first(self, player: str) -> bool:
        """Whether the player has a place first in line."""
        with as_unavailable:
            return bool(await self.redis.exists(keys.match_first(player)))

    async def take_first(self, player: str) -> tuple[str, float] | None:
        """The player's place first in line, (pool, since), taken (None: none)."""
        with as_unavailable:
            found = await self.redis.getdel(keys.match_first(player))
        if found is None:
            return None
        pool, _, since = text(found).partition("\t")
        try:
            return pool, float(since)
        except ValueError:
            return None

    # -- strikes ----------------------------------------------------------------------------

    async def strike(self, player: str, address: str, kind: str, code: str, now: float) -> None:
        """Count a strike (``n``: the player missed match ``code``; ``d``: they left it
        before its start) against the player and their address ('' none); once per match.
        Strikes older than a day are dropped, and all but the newest
        :data:`~.keys.STRIKES_MAX`."""
        marks = [(keys.match_strikes(player=player), f"{kind}:{code}")]
        if address:
            marks.append((keys.match_strikes(address=address), f"{kind}:{code}:{player}"))
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key, member in marks:
                    pipe.zadd(key, {member: now})
                    pipe.zremrangebyscore(key, "-inf", now - DAY)
                    pipe.zremrangebyrank(key, 0, -(keys.STRIKES_MAX + 1))
                    pipe.expire(key, int(DAY) + 60)
                await pipe.execute()

    async def strikes(self, player: str, address: str, now: float) -> Strikes:
        """The player's and the address's strikes of the last day, oldest first."""
        key_list = [keys.match_strikes(player=player)]
        if address:
            key_list.append(keys.match_strikes(address=address))
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in key_list:
                    pipe.zrangebyscore(key, now - DAY, "+inf", withscores=True)
                found = await pipe.execute()
        lists = [[(text(m).split(":", 1)[0], float(t)) for m, t in rows] for rows in found]
        return Strikes(lists[0], lists[1] if len(lists) > 1 else [])
