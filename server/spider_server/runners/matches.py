"""Quick matches that keep their promise: a match counts once every matched player has
joined its race within ``match_confirm`` seconds; players who miss a match, or leave one
before its start, wait before queueing again (:mod:`..race.matches` decides; this module
reads and commits).

When the lobby makes a match it remembers the race's seats with the time by which every
player must have joined (:meth:`Matches.expect`, before the race exists). On every turn of
the lobby each node takes the matches whose time is up (:meth:`Matches.settle_due`; one
script hands each to one node for a lease, and another node takes it up if that one dies):
a race whose players all joined counts down and is forgotten; otherwise the match is
called off (:meth:`Matches.call_off`): the players who joined are put first in line for
the same pool (they queue again on the ``match_cancelled`` event and are matched before
anyone queued after them), the race is deleted, and each player who did not join gets a
strike. A strike (a missed match, or a dodge: :meth:`Matches.dodge`) counts for a day,
against the player and against the client address they queued from, and the wait before
queueing again doubles with each (:meth:`Matches.queue_wait`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

from .. import race as rules
from ..errors import Unavailable
from ..fanout.changes import Changes
from ..race import TERMINAL, Race, RaceChange, RaceState
from ..settings import Settings
from ..store import Store
from ..store.lobby import Group
from ..store.matching import Seat
from ..store.redisconn import raise_if_cancelled

__all__ = ["LEASE", "Matches"]

log = logging.getLogger(__name__)

LEASE = 30.0
"""Seconds a node holds a match it settles before another may take it up."""
TRIES = 3
"""Times a match is decided again when its race changed under the decision."""


class Matches:
    """Matches waiting for their players, called off, dodged; the strikes and waits."""

    def __init__(
        self, store: Store, changes: Changes, settings: Settings, *, clock: Callable[[], float]
    ) -> None:
        self.store = store
        self.changes = changes
        self.settings = settings
        self.clock = clock
        """The deployment's time."""
        self.called_off = 0
        """Matches this node called off."""

    async def expect(self, code: str, pool: str, group: Group, now: float) -> float:
        """Remember match ``code`` of ``pool`` before its race is committed; the time by
        which its players must have joined it."""
        seats = {m.player: _seat(m.address, m.since, now) for m in group}
        deadline = round(now + self.settings.match_confirm, 3)
        await self.store.matching.expect(code, pool, seats, deadline)
        return deadline

    # -- settling ---------------------------------------------------------------------------

    async def settle_due(self) -> None:
        """Settle every match whose players' time to join is up. A match left unsettled
        (its race changed under every try, or a failure, logged) is given back, to be
        taken up again on the next turn: the lease only covers a node that dies, or loses
        Redis, while it holds a match."""
        left = []
        for code in await self.store.matching.due(self.clock(), lease=LEASE):
            try:
                if await self.settle(code):
                    continue
            except Unavailable:
                raise
            except Exception:
                raise_if_cancelled()
                log.exception("settling quick match %s failed", code)
            left.append(code)
        await self.store.matching.give_back(left, self.clock())

    async def settle(self, code: str) -> bool:
        """The time to join match ``code`` is up: call it off unless every player joined.
        False when its race changed under every try (nothing settled: decide again)."""
        for _ in range(TRIES):
            race = await self.store.races.load_race(code)
            if race is None or not race.options.quick:
                break
            if race.state is RaceState.OPEN and not race.players:  # called off already
                await self._delete(code)
                break
            missing = rules.unconfirmed(race)
            if not missing:  # every player joined: it counts down
                break
            if await self.call_off(race, missing, strike=True):
                break
        else:
            return False
        await self.store.matching.settled(code)
        return True

    async def call_off(self, race: Race, missing: list[str], *, strike: bool) -> bool:
        """Call off the quick match of ``race`` (as read) because of ``missing``: the other
        players are put first in line (before anyone hears of it), the race is deleted,
        and with ``strike`` each missing player gets a strike (a missed match). False when
        the race changed since it was read (nothing done: decide again)."""
        code, now = race.code, self.clock()
        pool, seats = await self.store.matching.seats(code)
        stay = {
            p: seats[p].since if p in seats else now
            for p, e in race.players.items()
            if p not in missing and e.status not in TERMINAL and not e.ghost
        }
        if pool:
            await self.store.matching.put_first(stay, pool)

        def decide(now_race: Race | None) -> RaceChange | None:
            if now_race is None or now_race.version != race.version:
                return None
            return rules.cancel_match(now_race, missing)

        attempt = await self.changes.race(code, decide, known=race)
        if attempt.decision is None:
            await self.store.matching.drop_first(list(stay))
            return False
        self.called_off += 1
        await self._delete(code)
        if strike:
            for player in missing:
                seat = seats.get(player)
                address = seat.address if seat is not None else ""
                await self.store.matching.strike(player, address, "n", code, now)
        return True

    async def _delete(self, code: str) -> None:
        """Delete a race called off (no players left in it)."""

        def decide(race: Race | None) -> RaceChange | None:
            if race is None or race.players or race.state is not RaceState.OPEN:
                return None
            return RaceChange(base=race.version, race=race, delete=True)

        await self.changes.race(code, decide)

    # -- dodges and waits -------------------------------------------------------------------

    async def dodge(self, race: Race, player: str, address: str) -> Race | None:
        """The player leaves their quick-match race before its start: a dodge
        (:func:`~..race.dodge`). The first :data:`~..race.FREE_DODGES` in a day (counted
        for the player and for the address) cost a strike only; from the next one on, in
        a rated race, the player stays in it as ``left`` and ranks last. A dodge that
        would leave fewer than two players before anyone counts down calls the match
        off (the others first in line). Returns the race after it (None: gone)."""
        now = self.clock()
        strikes = await self.store.matching.strikes(player, address, now)
        code = race.code
        dodges = max(
            sum(1 for kind, _ in strikes.player if kind == "d"),
            sum(1 for kind, _ in strikes.address if kind == "d"),
        )
        costly = rules.dodge_costs(dodges, rated=race.options.rated)
        loaded: Race | None = race
        for _ in range(TRIES):
            if loaded is None or player not in loaded.players:
                return loaded
            if loaded.state not in (RaceState.OPEN, RaceState.COUNTDOWN):
                return loaded
            kind = rules.dodge_kind(loaded, player, costly=costly)
            if kind == "cancel" and loaded.state is RaceState.OPEN:
                if await self.call_off(loaded, [player], strike=False):
                    await self.store.matching.strike(player, address, "d", code, now)
                    await self.store.matching.settled(code)
                    return None
                loaded = await self.store.races.load_race(code)
                continue
            attempt = await self.changes.race(
                code, lambda r: _dodged(r, player, self.clock(), costly), known=loaded
            )
            if attempt.decision is not None:
                await self.store.matching.strike(player, address, "d", code, now)
            return attempt.loaded if attempt.decision is None else attempt.decision.race
        return loaded

    async def queue_wait(self, player: str, address: str) -> float:
        """Seconds before the player, queueing from ``address``, may queue again (0: now):
        the longer of their own wait and their address's (:func:`~..race.queue_wait`); none
        for a player first in line (their match was called off, not by them)."""
        if await self.store.matching.is_first(player):
            return 0.0
        now = self.clock()
        strikes = await self.store.matching.strikes(player, address, now)
        s = self.settings
        return max(
            rules.queue_wait(
                [t for _, t in found], now, base=s.match_penalty, cap=s.match_penalty_max
            )
            for found in (strikes.player, strikes.address)
        )

    async def first_since(self, player: str, pool: str) -> float | None:
        """When the player queued for a match of ``pool`` called off not by them (they
        queue again ahead of everyone), taken; None when they have no such place."""
        found = await self.store.matching.take_first(player)
        return found[1] if found is not None and found[0] == pool else None


def _seat(address: str, since: float, now: float) -> Seat:
    """A member's seat (``since`` unknown: ``now``)."""
    return Seat(address, now if math.isnan(since) else since)


def _dodged(race: Race | None, player: str, now: float, costly: bool) -> RaceChange | None:
    """The player's dodge of ``race`` (None: nothing to leave), never a call-off here: once
    it counts down, the others race on (a call-off is :meth:`Matches.call_off`'s)."""
    if race is None or player not in race.players:
        return None
    if race.state not in (RaceState.OPEN, RaceState.COUNTDOWN):
        return None
    if race.players[player].status in TERMINAL:
        return None
    if rules.dodge_kind(race, player, costly=costly) == "cancel":
        return rules.leave(race, player, now)
    return rules.dodge(race, player, now, costly=costly)
