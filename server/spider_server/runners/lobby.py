"""The lobby of one node: the quick-match loop, the waiting players, and the open-races
feed.

Every node runs the same loop (:meth:`Lobby.run`): every ``match_turn`` seconds it asks
which pools have players (one SMEMBERS: cheap while the queues are empty), and takes from
each the groups that fit (one script, :data:`~..store.scripts.POP_MATCHES`: a group taken is this
node's alone, so no player lands in two races and no race is made twice), then creates
each group's race with every player in it. The players' nodes hear of it on the queues'
channel and tell their connections (``matched``); a connection that missed it (its node's
subscription was down) finds its match in its entry on the next turn, when the node renews
its waiting players' claims. Each player confirms their seat by joining the race within
``match_confirm`` seconds, and it counts down ``match_countdown`` seconds once all did;
the node's :class:`~.matches.Matches` calls off a match whose time is up (on every turn),
and makes a player who missed a match or left one early wait before queueing again.

A player's rating is read once, when they queue, from :attr:`Lobby.rating_of` (by
default the store's: the rating shown in that variant, 1500 for a newcomer) and kept in
their queue entry; the rating window starts at :attr:`Lobby.window_base` and widens by
:attr:`Lobby.window_growth` a second; from ``match_wait`` seconds on, any rating fits.
Quick-match races are rated (:attr:`~..race.RaceOptions.rated`): their finish moves the
players' ratings once (:mod:`..store.ratings`). Each race made is remembered with how
long each of its players waited, on the server's clock (:meth:`~..store.LobbyStore.record_match`).

A player whose entry is matched already when they queue (their connection was on a node
that died before telling them) is told of that match on the new connection; so is one
whose newest race is a quick-match race they have not played (told of it on a connection
lost before they joined it): never a second race while their game in the first waits.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from spider_client.protocol import Matched, OpenRaceChanged, Queued, encode

from .. import race as rules
from ..closing import between_turns, stop
from ..errors import Conflict, Unavailable
from ..fanout.changes import Changes
from ..race import TERMINAL, RaceOptions
from ..settings import Settings
from ..store import Store
from ..store.keys import LOBBY_CHANNEL, MATCH_CHANNEL
from ..store.lobby import MATCHED, Group, open_race_from
from ..store.redisconn import raise_if_cancelled
from .matches import Matches

__all__ = ["DEFAULT_RATING", "Lobby", "Waiter", "pool_name", "pool_rated"]

log = logging.getLogger(__name__)

DEFAULT_RATING = 1500.0
CODES_PER_TURN = 8
"""Race codes offered to one pool's script a turn (groups taken at most)."""


def pool_name(variant: str, *, undo: bool, bots: bool, rated: bool = True) -> str:
    """``<variant>:<u|n>:<humans|bots>``, and ``:casual`` for a pool whose races are not
    rated (guests race there): players of one pool may be matched together."""
    kind = f"{variant}:{'u' if undo else 'n'}:{'bots' if bots else 'humans'}"
    return kind if rated else f"{kind}:casual"


def pool_rated(pool: str) -> bool:
    """Whether the races of ``pool`` (:func:`pool_name`) are rated."""
    return not pool.endswith(":casual")


class Member(Protocol):
    """What the lobby needs of a session."""

    id: str

    @property
    def player(self) -> str: ...

    def send_msg(self, message: object) -> None: ...

    def send_frame(self, frame: bytes) -> None: ...


@dataclass
class Waiter:
    """A connection of this node waiting in a quick-match queue."""

    session: Member
    player: str
    name: str
    variant: str
    undo: bool
    pool: str
    queued_at: float
    rating: float = DEFAULT_RATING
    """The rating read when the player queued (kept when queued again)."""
    bot: bool = False
    """The player's hello said ``bot`` (their entry in the race says so)."""
    guest: bool = False
    """The player has no account (their entry in the race says so)."""
    matched_seen: float | None = None
    """When the node first saw this waiter's entry matched without being told (monotonic)."""
    address: str = ""
    """The client address the player queued from."""


class Lobby:
    """The node's quick-match loop and waiting players, and its open-races watchers."""

    def __init__(
        self,
        store: Store,
        changes: Changes,
        settings: Settings,
        *,
        clock: Callable[[], float],
        rating_of: Callable[[str, str], float | Awaitable[float]] | None = None,
    ) -> None:
        self.store = store
        self.changes = changes
        self.settings = settings
        self.clock = clock
        self.rating_of: Callable[[str, str], float | Awaitable[float]] = (
            rating_of or store.ratings.rating_of
        )
        """The player's rating in a variant (read once when they queue; a plain value or
        an awaitable one)."""
        self.window_base = 100.0
        """How far apart ratings may be at first."""
        self.window_growth = 50.0
        """How much wider that gets each second of waiting."""
        self.waiters: dict[str, Waiter] = {}
        """Connection id -> its waiter."""
        self.watchers: dict[str, Member] = {}
        """Connection id -> a connection following the open races."""
        self.matches_made = 0
        self.matches = Matches(store, changes, settings, clock=clock)
        """The matches waiting for their players, called off, dodged; the waits."""

    @property
    def alive_ttl(self) -> float:
        return max(5.0, 20 * self.settings.match_turn)

    # -- the open races ---------------------------------------------------------------------

    def watch(self, session: Member, on: bool = True) -> None:
        if on:
            self.watchers[session.id] = session
        else:
            self.watchers.pop(session.id, None)

    def _listing_changed(self, data: bytes) -> None:
        code, _, listing = data.partition(b"|")
        race = open_race_from(listing) if listing else None
        frame = encode(OpenRaceChanged(code=code.decode(), race=race))
        for session in list(self.watchers.values()):
            session.send_frame(frame)

    # -- the queue --------------------------------------------------------------------------

    async def queue(
        self,
        session: Member,
        *,
        name: str,
        variant: str,
        undo: bool,
        bots: bool,
        bot: bool = False,
        since: float | None = None,
        rating: float | None = None,
        address: str = "",
        guest: bool = False,
        rated: bool = True,
    ) -> Queued:
        """Queue the connection's player (out of any other queue), from client ``address``,
        with ``rating`` (by default read now, :attr:`rating_of`), waiting from ``since`` (by
        default now, or when they queued for a match of this pool called off not by them:
        first in line); ``bots``: in the bots' pool, ``bot``: the player is a bot. When a
        match of theirs was made for another connection already, this one waits for it
        instead, and is told of it (``matched``) once that connection's claim lapsed (its
        node died, or it closed). Conflict when the queue was too busy to change."""
        pool = pool_name(variant, undo=undo, bots=bots, rated=rated)
        made = await self._unplayed(session.player)
        if made is not None:  # a race was made for them and they never played it
            waiter = Waiter(session, session.player, name, variant, undo, pool, self.clock())
            self.waiters[session.id] = waiter
            if await self._deliver(waiter, made, soon=True):
                return Queued(
                    req=0, variant=variant, pool=pool, wait=self.settings.match_wait, rated=rated
                )
            self.waiters.pop(session.id, None)
        if rating is None:
            value = self.rating_of(session.player, variant)
            rating = float(await value if inspect.isawaitable(value) else value)
        if since is None:
            since = await self.matches.first_since(session.player, pool)
        since = self.clock() if since is None else since
        waiter = Waiter(
            session,
            session.player,
            name,
            variant,
            undo,
            pool,
            since,
            rating=rating,
            bot=bot,
            address=address,
            guest=guest,
        )
        for other in [w for w in self.waiters.values() if w.player == session.player]:
            self.waiters.pop(other.session.id, None)  # one queue at a time, the latest
        self.waiters[session.id] = waiter
        expiry = self.clock() + self.alive_ttl
        result = await self.store.lobby.queue_match(
            session.player,
            session.id,
            pool,
            rating,
            name,
            expiry,
            since,
            bot=bot,
            address=address,
            guest=guest,
        )
        queued = Queued(
            req=0, variant=variant, pool=pool, wait=self.settings.match_wait, rated=rated
        )
        if result == "ok":
            return queued
        entry = await self.store.lobby.match_entry(session.player) if result == MATCHED else None
        if entry is None or entry[0] != MATCHED:
            self.waiters.pop(session.id, None)
            raise Conflict("your place in the queue is being changed; try again")
        # matched for another connection (its node may have died before telling it): this
        # one waits for that match (:meth:`_renew`), told at once when it can be
        await self._adopt(waiter, entry, soon=True)
        return queued

    async def _unplayed(self, player: str) -> str | None:
        """The player's newest race, when it is a quick-match race that is not finished and
        their game in it is not over: a match they were told of on a connection that was
        lost before they joined it (told, then their node died), so that queueing again
        sends them there rather than into a second race."""
        code = await self.store.lobby.race_since(player, 0.0)
        race = None if code is None else await self.store.races.load_race(code)
        if race is None or not race.options.quick or player not in race.players:
            return None
        if race.players[player].status in TERMINAL:  # left it before its start
            return None
        game = await self.store.races.load_game(race.code, player)
        return race.code if game is None or game.status not in TERMINAL else None

    async def _adopt(self, waiter: Waiter, entry: list[str], *, soon: bool = False) -> bool:
        """The player's entry is matched (race ``entry[1]``) for another connection: tell
        this one of the race once it is made and that connection's claim lapsed (its node
        stopped renewing it: it died, or the connection closed)."""
        code, conn = entry[1], entry[3]
        if conn in self.waiters or not await self.store.lobby.match_claim_lapsed(waiter.player):
            return False
        return await self._deliver(waiter, code, soon=soon)

    async def cancel(self, session: Member) -> None:
        """Take the connection's player out of their queue (if this connection queued)."""
        if self.waiters.pop(session.id, None) is not None:
            await self.store.lobby.cancel_match(session.player, session.id)

    def gone(self, session: Member, spawn: Callable[[Any], object]) -> None:
        """The connection closed: out of the queue and the watchers."""
        self.watchers.pop(session.id, None)
        if self.waiters.pop(session.id, None) is not None:
            spawn(self.store.lobby.cancel_match(session.player, session.id))

    async def _deliver(self, waiter: Waiter, code: str, *, soon: bool = False) -> bool:
        """Tell the waiter of its race (if the race exists); with ``soon``, on the next
        turn of the event loop (after the reply being sent)."""
        race = await self.store.races.load_race(code)
        if race is None or waiter.player not in race.players:
            return False
        if self.waiters.get(waiter.session.id) is not waiter:
            return True  # told already
        del self.waiters[waiter.session.id]
        matched = Matched(
            code=code,
            variant=race.options.variant,
            players=list(race.players),
            starts_at=race.starts_at,
            confirm_by=round(race.created_at + self.settings.match_confirm, 3),
        )
        if soon:
            asyncio.get_running_loop().call_soon(waiter.session.send_msg, matched)
        else:
            waiter.session.send_msg(matched)
        await self.store.lobby.match_delivered(waiter.player, code)
        return True

    def _heard(self, data: bytes) -> asyncio.Task[bool] | None:
        player, conn, code = data.decode().split("\t")
        waiter = self.waiters.get(conn)
        if waiter is None or waiter.player != player:
            return None
        return asyncio.get_running_loop().create_task(self._deliver(waiter, code))

    # -- the loops ----------------------------------------------------------------------------

    async def run(self) -> None:
        """The feed (the lobby's and the queues' channels) and the matching turns, until
        cancelled."""
        feed = asyncio.get_running_loop().create_task(self._feed())
        try:
            while True:
                await between_turns(self.settings.match_turn)
                try:
                    await self.turn()
                except Unavailable:
                    raise_if_cancelled()
                except Exception:
                    raise_if_cancelled()
                    log.exception("a quick-match turn failed")
        finally:
            await stop(feed)

    async def _feed(self) -> None:
        tasks: set[asyncio.Task[bool]] = set()
        while True:
            try:
                async for channel, data in self.store.lobby.lobby_messages():
                    if channel == LOBBY_CHANNEL:
                        self._listing_changed(data)
                    elif channel == MATCH_CHANNEL:
                        task = self._heard(data)
                        if task is not None:
                            tasks.add(task)
                            task.add_done_callback(tasks.discard)
            except Unavailable:
                raise_if_cancelled()
                await between_turns(0.5)
            except Exception:
                raise_if_cancelled()
                log.exception("the lobby's feed failed")
                await between_turns(0.5)

    async def turn(self) -> None:
        """One turn: settle the matches whose time to join is up, renew this node's
        waiters, then take and start the groups that fit, pool by pool. A call-off never
        waits on the pools, and a pool that fails (logged) holds up no other: it is tried
        again on the next turn."""
        await self.matches.settle_due()
        await self._renew()
        for pool in await self.store.lobby.match_pools():
            try:
                await self._match(pool)
            except Unavailable:
                raise
            except Exception:
                raise_if_cancelled()
                log.exception("quick-match pool %s failed", pool)

    async def _match(self, pool: str) -> None:
        """Take the groups of ``pool`` that fit and start their races."""
        s = self.settings
        codes = [rules.new_code() for _ in range(CODES_PER_TURN)]
        groups = await self.store.lobby.pop_matches(
            pool,
            codes,
            wait=s.match_wait,
            gather=min(s.match_gather, s.match_wait),
            max_players=s.match_max_players,
            base=self.window_base,
            growth=self.window_growth,
        )
        for code, group in groups:
            await self._start(pool, code, group)

    async def _start(self, pool: str, code: str, group: Group) -> None:
        variant, undo, *_ = pool.split(":")
        s = self.settings
        options = RaceOptions(
            variant=variant,
            max_players=len(group),
            time_limit=s.match_time_limit,
            undo=undo == "u",
            live_boards=False,
            countdown=s.match_countdown,
            quick=True,
            rated=pool_rated(pool),
            idle_limit=s.rated_idle_limit,
        )
        now = self.clock()
        change = rules.matched_race(
            code=code,
            options=options,
            players=[(m.player, m.name) for m in group],
            now=now,
            bots={m.player for m in group if m.bot},
            guests={m.player for m in group if m.guest},
        )
        waited = [round(now - m.since, 3) for m in group]
        # remembered before the race exists: a node that dies in between leaves a code in
        # the list that names no race, never a race the list misses (nor a match unsettled)
        await self.matches.expect(code, pool, group, now)
        await self.store.lobby.record_match(code, group, now, waited)
        try:
            await self.changes.commit(change, new=True)
        except Conflict:  # the code is taken (1 in 32**5): the waiters are queued again
            log.warning("quick-match code %s was taken; its players wait again", code)
            await self.store.lobby.unrecord_match(code, group, now, waited)
            await self.store.matching.settled(code)
            return
        for member in group:
            await self.store.players.add_player_race(member.player, code)
        self.matches_made += 1
        await self.store.lobby.announce_match(code, group)

    async def _renew(self) -> None:
        waiters = list(self.waiters.values())
        if not waiters:
            return
        entries = await self.store.lobby.renew_waiters(
            [(w.player, w.session.id) for w in waiters], self.clock() + self.alive_ttl
        )
        mono = time.monotonic()
        for waiter, entry in zip(waiters, entries, strict=True):
            if self.waiters.get(waiter.session.id) is not waiter:
                continue
            if entry is None:  # dropped (its claim lapsed): in the queue again
                if not await self._told_elsewhere(waiter):
                    await self._requeue(waiter)
            elif entry[0] == MATCHED and entry[3] != waiter.session.id:
                await self._adopt(waiter, entry)  # the player's other connection is gone
            elif entry[0] == MATCHED and entry[3] == waiter.session.id:
                if waiter.matched_seen is None:
                    waiter.matched_seen = mono
                    continue
                late = mono - waiter.matched_seen
                if late > 1.0 and not await self._deliver(waiter, entry[1]) and late > 10.0:
                    await self.store.lobby.match_delivered(waiter.player, entry[1])  # never made
                    await self._requeue(waiter)
            elif entry[0] != MATCHED and entry[1] != waiter.session.id:
                del self.waiters[waiter.session.id]  # the player queued elsewhere

    async def _told_elsewhere(self, waiter: Waiter) -> bool:
        """Whether the player's entry is gone because another connection of theirs was told
        of a race made since this one queued: then this one is told of it too (never
        queued again while the player has a race)."""
        code = await self.store.lobby.race_since(waiter.player, waiter.queued_at)
        return code is not None and await self._deliver(waiter, code)

    async def _requeue(self, waiter: Waiter) -> None:
        with contextlib.suppress(Conflict):
            await self.queue(
                waiter.session,
                name=waiter.name,
                variant=waiter.variant,
                undo=waiter.undo,
                bots=waiter.pool.split(":")[2] == "bots",
                bot=waiter.bot,
                since=waiter.queued_at,
                rating=waiter.rating,
                address=waiter.address,
                guest=waiter.guest,
                rated=pool_rated(waiter.pool),
            )
