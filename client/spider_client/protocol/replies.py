"""What the server answers a client: ``welcome``, the replies to requests (carrying their
``req``), ``ack`` to an applied action, and ``error``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from .constants import PROTOCOL_VERSION, Role
from .info import RaceInfo

__all__ = [
    "Welcome",
    "Joined",
    "Done",
    "Ack",
    "Error",
    "HintReply",
    "LeaderboardEntry",
    "LeaderboardReply",
    "MyRace",
    "MyRacesReply",
]


@dataclass
class Welcome:
    """Reply to ``hello``: who the connection speaks for. Keep ``token`` to resume.
    ``account``: the account's name when the connection speaks for one (None: a
    guest)."""

    player: str
    name: str
    token: str
    node: str
    server_time: float
    protocol: int = PROTOCOL_VERSION
    account: str | None = None
    type: Literal["welcome"] = "welcome"


@dataclass
class Joined:
    """Reply to ``join`` (and ``create_race``): the race now, and for a player of a running
    race their view and their last applied ``seq``; ``events`` are those after ``since``
    (empty when a snapshot was sent instead)."""

    req: int
    role: Role
    race: RaceInfo
    view: str | None = None
    seq: int = 0
    boards: dict[str, str] | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    type: Literal["joined"] = "joined"


@dataclass
class Done:
    """Reply to ``leave`` and ``ready``."""

    req: int
    type: Literal["done"] = "done"


@dataclass
class Ack:
    """Reply to an applied action: the player's new view and progress, all of the same
    state (the counts are those of the player's next ``progress`` event)."""

    code: str
    seq: int
    move: str
    view: str
    status: str
    moves: int
    score: int
    turned_up: int = 0
    runs: int = 0
    """Sets completed."""
    deals_left: int = 0
    time: float | None = None
    """Seconds from the start to the end of the game (None while it goes on)."""
    duplicate: bool = False
    """True when this action had been applied before (a resend); nothing changed now."""
    type: Literal["ack"] = "ack"


@dataclass
class Error:
    error: str
    """One of :data:`ERROR_CODES`."""
    message: str
    req: int | None = None
    seq: int | None = None
    race: str | None = None
    races: list[str] | None = None
    """``too_many_races``: the codes of the races that count towards the limit."""
    type: Literal["error"] = "error"
    retry_after: float | None = None
    """``rate_limited`` of a ``quick_match``: the seconds before the player may queue again
    (they missed a match or left one before its start)."""


@dataclass
class HintReply:
    """Reply to ``hint``: the first move of a winning line from the player's position when
    the solver finds one within its budget, otherwise the move players would rank first;
    None when there is no legal move. ``moves`` lists the suggestions in order (``move``
    first, then the players' ranking's other moves; at most 3, empty when there is no
    legal move); ``verdict`` is the solver's on the player's full position: ``won`` (a
    winning line starts with ``move``), ``lost`` (no line wins), ``unknown`` (its budget
    ran out), or ``""`` (no search was made)."""

    req: int
    move: str | None
    moves: list[str] = field(default_factory=list)
    verdict: str = ""
    type: Literal["hint_reply"] = "hint_reply"


@dataclass
class LeaderboardEntry:
    rank: int
    player: str
    name: str
    time: float
    moves: int
    bot: bool = False
    """The player said ``bot`` in their hello."""
    race: str | None = None
    """The code of the player's daily race: their run, to race as a ghost."""


@dataclass
class MyRace:
    """One line of ``my_races_reply``."""

    code: str
    variant: str
    state: str
    """open, countdown, running or finished."""
    role: Role
    """``player``, or ``spectator`` for a race this connection watches."""
    players: int
    status: str | None = None
    """The player's own status in the race (None for a spectator)."""
    counts: bool = False
    """Whether it counts towards the per-player limit of races: waiting or running with
    the player's game not over."""
    preparing: bool = False


@dataclass
class MyRacesReply:
    """Reply to ``my_races``: newest first."""

    req: int
    races: list[MyRace] = field(default_factory=list)
    limit: int = 0
    """Races that may count at once (``max_races_per_player``)."""
    type: Literal["my_races_reply"] = "my_races_reply"


@dataclass
class LeaderboardReply:
    """Reply to ``leaderboard``: the day's winners, by time, then moves."""

    req: int
    variant: str
    day: str
    entries: list[LeaderboardEntry] = field(default_factory=list)
    type: Literal["leaderboard_reply"] = "leaderboard_reply"
