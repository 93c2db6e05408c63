"""A session's part in keeping quick matches honest: the wait before queueing again
(:func:`check_queue_wait`), the seat confirmed by joining the race a match made
(:func:`confirm_seat`), leaving it before its start (:func:`dodge`), and the race of a
match called off (:func:`match_cancelled`). The decisions are the node's
:class:`~..runners.matches.Matches`'."""

from __future__ import annotations

import math

from .. import race as rules
from ..errors import NotAPlayer, RateLimited
from ..race import Race, RaceState
from .core import Session

__all__ = ["QueueWait", "check_queue_wait", "confirm_seat", "dodge", "match_cancelled"]


class QueueWait(RateLimited):
    """The player (or their address) missed a quick match or left one before its start
    lately: ``retry_after`` seconds before they may queue again (``rate_limited``)."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


async def check_queue_wait(session: Session) -> None:
    """QueueWait while the player, or anyone queueing from their address, must wait
    before queueing again."""
    wait = await session.ctx.lobby.matches.queue_wait(session.player, session.address)
    if wait > 0:
        seconds = math.ceil(wait)
        raise QueueWait(
            f"a quick match was missed or left before its start from here; queue again in"
            f" {seconds} s",
            retry_after=float(seconds),
        )


def check_seat(race: Race, player: str) -> None:
    """NotAPlayer for anyone but its matched players joining an open quick-match race as
    a player (its seats are the match's; once it counts down, nobody joins anyway)."""
    if race.options.quick and race.state is RaceState.OPEN and player not in race.players:
        raise NotAPlayer(f"race {race.code} is a quick match's: only its players join it")


async def confirm_seat(session: Session, race: Race) -> Race:
    """The player joined their quick-match race: their seat is confirmed (once every
    player's is, it counts down, at once with no countdown). Returns the race after."""
    ctx = session.ctx
    if not race.options.quick or race.state is not RaceState.OPEN:
        return race
    attempt = await ctx.changes.race(
        race.code,
        lambda r: None if r is None else rules.confirm_seat(r, session.player, ctx.clock()),
        known=race,
    )
    now = attempt.decision.race if attempt.decision is not None else attempt.loaded
    if now is not None and now.state is RaceState.COUNTDOWN and now.options.countdown == 0:
        return await ctx.transitions.advance(race.code) or now
    return now or race


async def dodge(session: Session, race: Race) -> Race | None:
    """The player leaves their quick-match race before its start: a dodge
    (:meth:`~..runners.matches.Matches.dodge`); the race after (None: gone). Out of it,
    it leaves the player's list of races."""
    ctx = session.ctx
    after = await ctx.lobby.matches.dodge(race, session.player, session.address)
    if after is None or session.player not in after.players:
        await ctx.store.players.drop_player_races(session.player, [race.code])
    return after


def match_cancelled(session: Session, code: str) -> None:
    """A quick match this connection follows is called off: stop following its race (it
    is deleted). A player who had joined it queues again, first in line."""
    sub = session.subs.get(code)
    if sub is not None:
        session.unsubscribe(sub)
