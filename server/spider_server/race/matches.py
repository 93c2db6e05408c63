"""Quick matches that keep their promise (pure decisions).

- A matched player confirms their seat by joining the race (:func:`confirm_seat`: they are
  marked ready); the race counts down once every matched player did.
- A match whose players did not all join within the confirmation window is called off
  (:func:`cancel_match`): every player is out of the race, a ``match_cancelled`` event
  names the ``missing``; the store then deletes the race.
- A player who leaves a matched race before its start *dodges* it (:func:`dodge`). The
  first :data:`FREE_DODGES` in a day cost only a wait before queueing again; from the next
  one on, in a rated race, the dodger stays in the race as ``left`` and ranks last once it
  ends (rules.md §7a), rated against those who raced.
- A player who missed a match or dodged one waits before queueing again
  (:func:`queue_wait`): the wait doubles with each such strike in a day, up to a cap.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Literal

from spider_client.protocol import Countdown, MatchCancelled, Progress

from .model import ALL, TERMINAL, Audience, Race, RaceChange, RaceState, Status
from .transitions import leave, set_ready

__all__ = [
    "FREE_DODGES",
    "Dodge",
    "cancel_match",
    "confirm_seat",
    "dodge",
    "dodge_kind",
    "dodge_costs",
    "queue_wait",
    "unconfirmed",
]

FREE_DODGES = 3
"""Leaves of matched races before their start that a player (or a client address) may
make in a day at the cost of a wait only."""

Dodge = Literal["leave", "stay", "cancel"]
"""What a dodge does: the dodger ``leave``s the race (the others race on), ``stay``s in it
as ``left`` (a dodge that costs), or the match is called off (``cancel``: fewer than two
players would race)."""


def confirm_seat(race: Race, player: str, now: float) -> RaceChange | None:
    """The player joined their quick-match race: their seat is confirmed (ready), and once
    every player's is, the race counts down. None when there is nothing to confirm (not a
    quick-match race, not open, not a player of it, confirmed already, or out of it)."""
    if not race.options.quick or race.state is not RaceState.OPEN:
        return None
    entry = race.players.get(player)
    if entry is None or entry.ready or entry.status in TERMINAL:
        return None
    return set_ready(race, player, True, now)


def unconfirmed(race: Race) -> list[str]:
    """The players of a quick-match race who have not confirmed their seat (joined it),
    in seat order; empty once it counts down."""
    if race.state is not RaceState.OPEN:
        return []
    return [p for p, e in race.players.items() if not e.ready and e.status not in TERMINAL]


def cancel_match(race: Race, missing: Collection[str]) -> RaceChange:
    """Call a quick match off before its start: every player out of the race, and a
    ``match_cancelled`` event naming ``missing`` (who did not join it in time, or left
    it). The race is then deleted."""
    event = MatchCancelled(race=race.code, version=0, missing=list(missing))
    return RaceChange(
        base=race.version,
        race=replace(race, players={}),
        meta=False,
        removed=list(race.players),
        events=[(ALL, event)],
    )


def dodge_costs(dodges: int, *, rated: bool) -> bool:
    """Whether a dodge costs more than a wait: in a rated race, once ``dodges`` (those
    made in the day before this one) reach :data:`FREE_DODGES`."""
    return rated and dodges >= FREE_DODGES


def dodge_kind(race: Race, player: str, *, costly: bool) -> Dodge:
    """What the player's leaving of their quick-match race before its start does (see
    :data:`Dodge`): a dodge that costs keeps them in it while anyone else races; a free
    one takes them out, unless fewer than two players would then race."""
    others = [
        p
        for p, e in race.players.items()
        if p != player and not e.ghost and e.status not in TERMINAL
    ]
    if costly and others:
        return "stay"
    return "leave" if len(others) >= 2 else "cancel"


def dodge(race: Race, player: str, now: float, *, costly: bool) -> RaceChange:
    """The player leaves their quick-match race before its start (open or counting down;
    see :func:`dodge_kind`). Staying, their entry is ``left`` and ready (a
    ``progress`` tells everyone): the race counts down once every other player is ready,
    and at the start their game is over at once. NotAPlayer when not in the race,
    WrongState once it runs."""
    kind = dodge_kind(race, player, costly=costly)
    if kind == "leave" or player not in race.players:
        return leave(race, player, now)
    if race.state not in (RaceState.OPEN, RaceState.COUNTDOWN):
        return leave(race, player, now)  # raises WrongState
    if kind == "cancel":
        return cancel_match(race, [player])
    entry = replace(race.players[player], status=Status.LEFT, ready=True, dodged=True)
    new = replace(race, players={**race.players, player: entry})
    events: list[tuple[Audience, object]] = [
        (ALL, Progress(race=race.code, version=0, player=entry.info()))
    ]
    meta = False
    if new.state is RaceState.OPEN and all(e.ready for e in new.players.values()):
        starts_at = round(now + new.options.countdown, 3)
        new = replace(new, state=RaceState.COUNTDOWN, starts_at=starts_at)
        events.append((ALL, Countdown(race=race.code, version=0, starts_at=starts_at)))
        meta = True
    return RaceChange(base=race.version, race=new, meta=meta, players=[entry], events=events)


def queue_wait(times: Sequence[float], now: float, *, base: float, cap: float) -> float:
    """Seconds before a player (or a client address) whose strikes of the last day were at
    ``times`` may queue again: ``base`` after the last one, doubled for each one before it,
    at most ``cap``; 0 when there are none or the wait is over."""
    if not times:
        return 0.0
    wait = min(cap, base * 2.0 ** min(len(times) - 1, 40))
    return max(0.0, max(times) + wait - now)
