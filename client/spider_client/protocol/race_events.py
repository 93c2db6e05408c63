"""The race's events, sent to everyone in a race; each has the race's code and its
``version`` (1, 2, 3, … in the order every node delivers them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .info import PlayerInfo, Result

__all__ = [
    "PlayerJoined",
    "PlayerLeft",
    "PlayerReady",
    "Countdown",
    "Started",
    "Progress",
    "BoardShown",
    "Finished",
    "Prepared",
    "Away",
    "Back",
    "RematchOffer",
    "Par",
    "MatchCancelled",
    "RaceEvent",
]


@dataclass
class PlayerJoined:
    race: str
    version: int
    player: PlayerInfo
    type: Literal["player_joined"] = "player_joined"


@dataclass
class PlayerLeft:
    race: str
    version: int
    player: str
    type: Literal["player_left"] = "player_left"


@dataclass
class PlayerReady:
    race: str
    version: int
    player: str
    ready: bool
    type: Literal["player_ready"] = "player_ready"


@dataclass
class Countdown:
    race: str
    version: int
    starts_at: float
    type: Literal["countdown"] = "countdown"


@dataclass
class Started:
    """The deal is out. Each player gets the deal as an ``ack`` with ``seq`` 0 and ``move``
    ``""`` carrying their first view (or in ``joined`` when they rejoin); ``commitment`` is
    SHA-256 of salt and seed, revealed in ``Finished``. ``idle_at`` is every player's
    first idle deadline (``started_at`` plus the race's ``idle_limit``: see
    ``PlayerInfo.idle_at``)."""

    race: str
    version: int
    started_at: float
    ends_at: float
    commitment: str
    type: Literal["started"] = "started"
    idle_at: float | None = None


@dataclass
class Progress:
    race: str
    version: int
    player: PlayerInfo
    type: Literal["progress"] = "progress"


@dataclass
class BoardShown:
    """A player's view, sent to spectators of live-board races only."""

    race: str
    version: int
    player: str
    view: str
    type: Literal["board"] = "board"


@dataclass
class Finished:
    """The results, and the deal revealed. For a daily race, ``seed``, ``salt``,
    ``replays`` and ``boards`` are None until its day is over (then ``join`` shows them)."""

    race: str
    version: int
    results: list[Result]
    seed: str | None
    salt: str | None
    commitment: str
    replays: dict[str, list[str]] | None
    boards: dict[str, str] | None
    """Every player's final full position."""
    type: Literal["finished"] = "finished"
    replay_times: dict[str, list[int]] | None = None
    """Each action's race time in milliseconds, parallel to ``replays`` (None with it;
    players whose times were not kept are left out)."""


@dataclass
class Prepared:
    """A ``winnable`` race's proven deal is chosen (still secret): ``commitment`` is set,
    and the countdown starts once everyone is ready."""

    race: str
    version: int
    commitment: str
    type: Literal["prepared"] = "prepared"


@dataclass
class Away:
    """A player of a running race is away: no connection of theirs has watched the race
    since ``since`` (the server's time). ``players[].connected`` is then false and
    ``away_since`` is ``since``; a player away for the race's ``away_grace`` in all (this
    spell and the ones before summed) is out as ``abandoned`` (a ``progress`` with that
    status)."""

    race: str
    version: int
    player: str
    since: float
    type: Literal["away"] = "away"


@dataclass
class Back:
    """A player who was away watches the race again, after ``away`` seconds away
    (``total``: seconds away in all in this race, this spell included):
    ``players[].connected`` is true again and ``away_since`` null."""

    race: str
    version: int
    player: str
    away: float
    type: Literal["back"] = "back"
    total: float | None = None


@dataclass
class RematchOffer:
    """A race event of a finished race: who accepted the rematch so far and until when the
    offer waits (``deadline``, server time); once made, ``code`` is the new race's join
    code (join it as a player: you are in it, ready)."""

    race: str
    version: int
    accepted: list[str]
    deadline: float
    code: str | None = None
    type: Literal["rematch_offer"] = "rematch_offer"


@dataclass
class Par:
    """A finished race's par has landed (computed in the background after the finish):
    ``moves`` (the par line's length), ``line`` (its moves in notation, replayable from the
    revealed deal) and ``first`` (the solver's first line's length, None when it found
    none); or ``none`` true (the others null) when the solver did not settle the deal within
    its budget and no winning line is known. ``provisional`` true: the shortest line known
    at the finish (the deal's proof, a winner's moves), sent at once; a shorter provisional
    line may follow, and a settled par (``provisional`` false) ends them, once per race.
    Never during a daily race's day."""

    race: str
    version: int
    moves: int | None = None
    line: list[str] | None = None
    first: int | None = None
    none: bool = False
    provisional: bool = False
    type: Literal["par"] = "par"


@dataclass
class MatchCancelled:
    """A quick-match race is called off before its start: ``missing`` did not join it in
    time (or left it, leaving one player), so it will not be raced. Its players are out of
    it and it is deleted; those who had joined are first in line when they queue again for
    the same pool (``quick_match``: the client library and the page do it at once)."""

    race: str
    version: int
    missing: list[str]
    type: Literal["match_cancelled"] = "match_cancelled"


RaceEvent = (
    PlayerJoined
    | PlayerLeft
    | PlayerReady
    | Countdown
    | Started
    | Progress
    | BoardShown
    | Finished
    | Prepared
    | Away
    | Back
    | RematchOffer
    | Par
    | MatchCancelled
)
