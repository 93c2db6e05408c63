"""The lobby's messages: the list of open (public) races and the quick-match queue.

- ``open_races`` (request): the public races waiting for players, one an address at a
  time, the longest waiting first (of a variant, rated only, when asked; the filter comes
  before the list's length); with ``watch``, ``open_race`` events follow on this
  connection whenever one is listed, changes or leaves the list (``race`` None: no longer
  listed: it started, filled and counted down, or its creator left it).
- ``quick_match`` (request, reply ``queued``): queue for a race of ``variant`` with
  players of similar rating; the server sends ``matched`` (the race's code) once it
  made one for you (you are its player already: join it at once, which confirms your
  seat; the countdown starts once every matched player did). ``cancel_match`` leaves the
  queue (reply ``done``). A player is in one queue at a time; a connection that closes
  leaves its queue. A player who missed a match or left one before its start waits
  before queueing again (``rate_limited`` with ``retry_after``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "CancelMatch",
    "Matched",
    "OpenRace",
    "OpenRaceChanged",
    "OpenRaces",
    "OpenRaceList",
    "QuickMatch",
    "Queued",
]


@dataclass
class OpenRaces:
    """Ask for the public races waiting for players (reply: ``open_race_list``); with
    ``watch``, follow the list's changes (``open_race`` events; ``watch`` False stops)."""

    req: int
    watch: bool = False
    variant: str | None = None
    """Only races of this variant (the events are not filtered)."""
    rated: bool = False
    """Only rated races."""
    type: Literal["open_races"] = "open_races"


@dataclass
class OpenRace:
    """One public race waiting for players, as the lobby lists it."""

    code: str
    variant: str
    state: str
    """``open`` (a race that counts down or runs is no longer listed)."""
    players: int
    """Seats taken."""
    max_players: int
    time_limit: int
    undo: bool
    countdown: int
    winnable: bool
    hints: bool
    creator: str
    creator_name: str
    created_at: float
    version: int
    creator_rating: float | None = None
    """The creator's rating shown in the variant (1500 for a player without one; None
    from a server that does not say)."""
    creator_provisional: bool = True
    """Whether the creator's rating is still provisional (shown with a ``?``)."""
    rated: bool = False
    """The finish moves the players' ratings."""
    live_boards: bool = False
    """Spectators see the boards while the race runs."""
    humans_only: bool = False
    """Players whose hello said ``bot`` may not join."""
    creator_guest: bool = False
    """The creator is a guest (no account: anyone may take the name)."""

    @property
    def free(self) -> int:
        """Seats free."""
        return max(0, self.max_players - self.players)


@dataclass
class OpenRaceList:
    """Reply to ``open_races``: the listed races, in the list's order (one an address at a
    time, the longest waiting first)."""

    req: int
    races: list[OpenRace] = field(default_factory=list)
    type: Literal["open_race_list"] = "open_race_list"


@dataclass
class OpenRaceChanged:
    """A listed race changed (``race``), or left the list (``race`` None)."""

    code: str
    race: OpenRace | None = None
    type: Literal["open_race"] = "open_race"


@dataclass
class QuickMatch:
    """Queue for a quick-match race of ``variant`` (reply: ``queued``; later ``matched``).
    Queueing again moves the player to the new queue (one queue at a time)."""

    req: int
    variant: str = "spider4"
    undo: bool = True
    """The one option a quick-match race may choose; the others are the server's
    standard ones (time limit, countdown)."""
    with_bots: bool = False
    """A human who opts into bots queues with them (bots always queue with bots)."""
    rated: bool | None = None
    """The rated pool (accounts only: a guest asking for it is refused with
    ``account_required``) or the casual one (anyone; the race made is not rated). None:
    rated for an account, casual for a guest."""
    type: Literal["quick_match"] = "quick_match"


@dataclass
class Queued:
    """Reply to ``quick_match``: in the queue ``pool``; ``wait`` is the most seconds anyone
    waits while someone else is queued in it."""

    req: int
    variant: str
    pool: str
    wait: float
    rated: bool = True
    """Whether the race this queue makes is rated (the casual pool's is not)."""
    type: Literal["queued"] = "queued"


@dataclass
class CancelMatch:
    """Leave the quick-match queue (reply: ``done``; nothing happens when not queued)."""

    req: int
    type: Literal["cancel_match"] = "cancel_match"


@dataclass
class Matched:
    """A quick match was found: the race ``code`` has you as a player. Join it by
    ``confirm_by`` (the server's time): joining confirms your seat, and the race counts
    down once every matched player did; otherwise it is called off
    (``match_cancelled``)."""

    code: str
    variant: str
    players: list[str] = field(default_factory=list)
    """The players' ids, in seat order."""
    starts_at: float | None = None
    """When the race starts, once it counts down (None until every player joined)."""
    type: Literal["matched"] = "matched"
    confirm_by: float | None = None
    """The server's time by which every matched player must have joined."""
