"""The lobby in Redis: the quick-match queues, and the lobby's channel (the open races'
list itself is :mod:`.openlist`'s).

The queues share the ``{match}`` hash tag: queueing, cancelling and taking a group are
each one script (:mod:`..scripts`), so a player is in one queue at a time and a group is
taken by one node only. Every method raises :class:`~..errors.Unavailable` when Redis
does not answer.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, NamedTuple

import msgpack
from redis.asyncio import Redis

from spider_client.protocol import OpenRace

from ..errors import Conflict, Contended
from . import keys
from .codec import text
from .guard import as_unavailable, check_and_set
from .ratings import RatingStore
from .redisconn import read_message
from .scripts import CANCEL_MATCH, MATCH_DELIVERED, POP_MATCHES, QUEUE_MATCH

__all__ = ["Group", "LobbyStore", "MATCHED", "Member"]

MATCHED = "matched"
"""The pool field of a player's entry once matched (until their connection is told)."""


class Member(NamedTuple):
    """A player of a group taken from a queue."""

    player: str
    conn: str
    """The connection that queued."""
    name: str
    bot: bool
    """Their hello said ``bot``."""
    since: float
    """When they queued (the server's clock; NaN when the entry did not say)."""
    address: str = ""
    """The client address they queued from ('' when the entry did not say)."""
    guest: bool = False
    """They have no account (a guest on a server that keeps accounts)."""


Group = list[Member]
"""A group taken from a queue, in seat order."""


def _entry_name(name: str, bot: bool, since: float, address: str, guest: bool = False) -> str:
    """The last field of a queue entry: the kind (``b`` a bot, ``h`` a human, followed by
    ``g`` for a guest), the time the player queued, the client address they queued from
    and the name, tab-separated (the queue's script keeps that field as it is, the name's
    tabs too, and hands it back in the groups it takes)."""
    kind = ("b" if bot else "h") + ("g" if guest else "")
    return f"{kind}\t{since!r}\t{address}\t{name}"


_KINDS = ("b", "h", "bg", "hg")


def _member(player: str, conn: str, field: str) -> Member:
    parts = field.split("\t", 3)
    if len(parts) == 4 and parts[0] in _KINDS:
        with contextlib.suppress(ValueError):
            bot, guest, since = parts[0][0] == "b", parts[0].endswith("g"), float(parts[1])
            return Member(player, conn, parts[3], bot, since, parts[2], guest)
    return Member(player, conn, field, False, math.nan)


_TRIES = 5
"""Tries of a queue's change before it answers ``busy``."""


def _same(seen: str) -> str:
    return seen


class LobbyStore:
    """The open races' list and the quick-match queues."""

    def __init__(self, redis: Redis, ratings: RatingStore, clock: Callable[[], float]) -> None:
        self.redis = redis
        self.ratings = ratings
        """The players' records (a listing shows its creator's rating)."""
        self.clock = clock
        """The deployment's time."""
        self._scripts: dict[str, Any] = {}

    def _lobby_script(self, source: str) -> Any:
        scripts = self._scripts
        if source not in scripts:
            scripts[source] = self.redis.register_script(source)
        return scripts[source]

    async def lobby_messages(self) -> AsyncIterator[tuple[str, bytes]]:
        """(channel, data) of every message on the lobby's and the queues' channels, from
        the moment of subscribing (a connection of its own; ends only by an error)."""
        pubsub = self.redis.pubsub()
        try:
            with as_unavailable:
                await pubsub.subscribe(keys.LOBBY_CHANNEL, keys.MATCH_CHANNEL)
            while True:
                with as_unavailable:
                    message = await read_message(pubsub, ignore_subscribe_messages=True, timeout=1)
                if message is not None and message.get("type") == "message":
                    yield text(message["channel"]), message["data"]
        finally:
            with as_unavailable:
                await pubsub.aclose()

    # -- the quick-match queues -----------------------------------------------------------------

    async def match_entry(self, player: str) -> list[str] | None:
        """The player's entry's fields (pool, connection, …), or None when not queued."""
        with as_unavailable:
            e = await self.redis.hget(keys.MATCH_WHO, player)
        return None if e is None else text(e).split("\t")

    async def queue_match(
        self,
        player: str,
        conn: str,
        pool: str,
        rating: float,
        name: str,
        expiry: float,
        since: float,
        *,
        bot: bool = False,
        address: str = "",
        guest: bool = False,
    ) -> str:
        """Queue the player in ``pool`` (out of any other), waiting since ``since``, from
        client ``address`` (``guest``: without an account): ``ok``, ``matched`` when a match of theirs waits to be told
        (nothing changed), ``busy`` when the queue moved under every try."""
        entry = f"{pool}\t{conn}\t{rating!r}\t{_entry_name(name, bot, since, address, guest)}"
        old = await self.match_entry(player)
        script = self._lobby_script(QUEUE_MATCH)
        expected = ["" if old is None else old[0]]
        """The player's pool as last seen (the script tells when it moved)."""

        async def load() -> str:
            return expected[0]

        async def commit(seen: str) -> str:
            old_queue = keys.match_queue(seen) if seen else keys.match_queue(pool)
            key_list = [
                keys.MATCH_WHO,
                keys.MATCH_ALIVE,
                keys.MATCH_POOLS,
                keys.match_queue(pool),
                old_queue,
            ]
            args = [player, entry, repr(since), repr(expiry), seen, pool]
            with as_unavailable:
                reply = await script(keys=key_list, args=args)
            if isinstance(reply, list):
                expected[0] = text(reply[1])
                raise Conflict(f"{player}'s place in the queues moved")
            return text(reply)

        try:
            attempt = await check_and_set(load, _same, commit, tries=_TRIES)
        except Contended:
            return "busy"
        assert attempt.committed is not None
        return attempt.committed

    async def cancel_match(self, player: str, conn: str = "") -> str:
        """Take the player out of their queue (only connection ``conn``'s entry unless
        empty): ``ok``, ``none``, ``other`` (another connection's) or ``matched``."""
        old = await self.match_entry(player)
        if old is None:
            return "none"
        script = self._lobby_script(CANCEL_MATCH)
        expected = [old[0]]

        async def load() -> str:
            return expected[0]

        def decide(seen: str) -> str | None:
            return None if seen == MATCHED else seen

        async def commit(seen: str) -> str:
            key_list = [keys.MATCH_WHO, keys.MATCH_ALIVE, keys.match_queue(seen)]
            with as_unavailable:
                reply = await script(keys=key_list, args=[player, conn, seen])
            if isinstance(reply, list):
                expected[0] = text(reply[1])
                raise Conflict(f"{player}'s place in the queues moved")
            return text(reply)

        try:
            attempt = await check_and_set(load, decide, commit, tries=_TRIES)
        except Contended:
            return "busy"
        return MATCHED if attempt.committed is None else attempt.committed

    async def match_pools(self) -> list[str]:
        """The pools with players queued (one SMEMBERS: cheap when none)."""
        with as_unavailable:
            return sorted(text(p) for p in await self.redis.smembers(keys.MATCH_POOLS))

    async def pop_matches(
        self,
        pool: str,
        codes: Sequence[str],
        *,
        wait: float,
        gather: float,
        max_players: int,
        base: float,
        growth: float,
        limit: int = 200,
    ) -> list[tuple[str, Group]]:
        """Take the groups that fit now from ``pool``'s queue (one script: each group is
        this caller's alone), each with the next of ``codes``: (code, group)."""
        key_list = [
            keys.match_queue(pool),
            keys.MATCH_WHO,
            keys.MATCH_ALIVE,
            keys.MATCH_POOLS,
            keys.MATCH_GROUPS,
        ]
        args = [
            repr(self.clock()),
            repr(wait),
            repr(gather),
            str(max_players),
            repr(base),
            repr(growth),
            str(limit),
            pool,
            *codes,
        ]
        with as_unavailable:
            reply = await self._lobby_script(POP_MATCHES)(keys=key_list, args=args)
        out: list[tuple[str, Group]] = []
        for group in reply:
            items = [text(x) for x in group]
            members = [_member(*items[i : i + 3]) for i in range(1, len(items), 3)]
            out.append((items[0], members))
        return out

    async def renew_waiters(
        self, waiters: Sequence[tuple[str, str]], expiry: float
    ) -> list[list[str] | None]:
        """Keep the waiting (player, connection)s queued until ``expiry``; their entries
        now (None: no longer queued)."""
        if not waiters:
            return []
        with as_unavailable:
            entries = await self.redis.hmget(keys.MATCH_WHO, [p for p, _ in waiters])
            found = [None if e is None else text(e).split("\t") for e in entries]
            mine = {
                p: expiry
                for (p, conn), e in zip(waiters, found, strict=True)
                if e is not None and (e[1] == conn or (e[0] == MATCHED and e[3] == conn))
            }
            if mine:
                await self.redis.zadd(keys.MATCH_ALIVE, mine, xx=False)
        return found

    async def match_delivered(self, player: str, code: str) -> None:
        """The player's connection was told of match ``code``: forget their entry."""
        with as_unavailable:
            await self._lobby_script(MATCH_DELIVERED)(
                keys=[keys.MATCH_WHO, keys.MATCH_ALIVE], args=[player, code]
            )

    async def match_claim_lapsed(self, player: str) -> bool:
        """Whether the player's entry is no longer renewed (its node died, or the connection
        that queued closed): its claim's expiry has passed, or it has none."""
        with as_unavailable:
            expiry = await self.redis.zscore(keys.MATCH_ALIVE, player)
        return expiry is None or float(expiry) < self.clock()

    async def race_since(self, player: str, since: float) -> str | None:
        """The newest race the player was put in since ``since`` (the server's clock) that is
        not finished, or None."""
        with as_unavailable:
            found: list[Any] = await self.redis.zrevrangebyscore(
                keys.player_races(player), "+inf", since, start=0, num=1
            )
            if not found:
                return None
            code = text(found[0])
            state = await self.redis.hget(keys.meta(code), "state")
        return None if state is None or text(state) == "finished" else code

    @staticmethod
    def _recent(code: str, group: Group, now: float, waited: Sequence[float]) -> str:
        players = ",".join(m.player for m in group)
        return f"{code}|{players}|{now!r}|{','.join(repr(w) for w in waited)}"

    async def record_match(
        self, code: str, group: Group, now: float, waited: Sequence[float]
    ) -> None:
        """Count a quick-match race made and remember it, with how long each of its players
        waited (seconds, the server's clock): ``code|players|made|waits`` in
        :data:`~..keys.MATCH_RECENT`. Called before the race is committed."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.incr(keys.MATCH_CREATED)
                pipe.lpush(keys.MATCH_RECENT, self._recent(code, group, now, waited))
                pipe.ltrim(keys.MATCH_RECENT, 0, keys.RECENT_MAX - 1)
                await pipe.execute()

    async def unrecord_match(
        self, code: str, group: Group, now: float, waited: Sequence[float]
    ) -> None:
        """Take back :meth:`record_match` (the race could not be committed)."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.decr(keys.MATCH_CREATED)
                pipe.lrem(keys.MATCH_RECENT, 1, self._recent(code, group, now, waited))
                await pipe.execute()

    async def announce_match(self, code: str, group: Group) -> None:
        """Tell each player's node of race ``code`` (made and committed)."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for member in group:
                    pipe.publish(keys.MATCH_CHANNEL, f"{member.player}\t{member.conn}\t{code}")
                await pipe.execute()


def open_race_from(data: bytes) -> OpenRace:
    """A listing as stored."""
    fields = msgpack.unpackb(data, raw=False)
    return OpenRace(**{k: v for k, v in fields.items() if k in OpenRace.__dataclass_fields__})
