"""What a client sends to the server: ``hello``, the requests (each with a ``req`` id its
reply carries back) and the actions (each with the player's next ``seq``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .constants import PROTOCOL_VERSION, Role
from .lobby import CancelMatch, OpenRaces, QuickMatch
from .players import Profile, RatingChanges, RatingLeaderboard, Rematch

__all__ = [
    "Hello",
    "CreateRace",
    "Join",
    "Leave",
    "Ready",
    "MoveAction",
    "Undo",
    "Resign",
    "Hint",
    "DailyRace",
    "Leaderboard",
    "MyRaces",
    "ClientMessage",
]


@dataclass
class Hello:
    """The first message on a connection. With ``token`` it resumes that player."""

    protocol: int = PROTOCOL_VERSION
    name: str | None = None
    token: str | None = None
    together: bool = False
    """The client takes a frame holding several race events (a msgpack array): the
    server then sends a player's held progress together, in one frame."""
    bot: bool = False
    """The connection plays for a program, not a person. A guest's is its own
    declaration, believed; an account's is the account's kind (a bot account is a bot
    whatever it says, a human's account saying ``bot`` is ``invalid``). A bot is marked as
    one everywhere and refused from races created ``humans_only``."""
    type: Literal["hello"] = "hello"


@dataclass
class CreateRace:
    """Create a race; the creator joins it as a player (reply: ``joined``)."""

    req: int
    variant: str = "spider4"
    seed: str | None = None
    """A seed to deal; by default a random secret one (at least 128 bits)."""
    max_players: int = 8
    time_limit: int = 1800
    """Seconds from the start; every race has one."""
    undo: bool = True
    live_boards: bool = False
    """Stream the players' boards to spectators while the race runs."""
    countdown: int = 3
    """Seconds between everyone being ready and the deal."""
    winnable: bool = False
    """Deal from a seed the solver has proved winnable (not with ``seed``); until one is
    proven the race is ``preparing`` and its countdown waits."""
    hints: bool = False
    """Players may ask for hints (each is counted and shown in the results)."""
    away_grace: int | None = None
    """Seconds a player may be away from the running race, in all, before they are out as
    ``abandoned`` (and a position offering only undo may last before it is ``stuck``);
    None: the server's default (``SPIDER_RACE_AWAY_GRACE``)."""
    idle_limit: int | None = None
    """Seconds a player may go without an action (move, deal or undo) in the running race
    before they are out as ``idle``; None: the server's default
    (``SPIDER_RACE_IDLE_LIMIT``). A rated race has the server's fixed one
    (``SPIDER_RACE_RATED_IDLE_LIMIT``): another value is ``invalid``."""
    humans_only: bool = False
    """Refuse bots: bot accounts' players, and guests whose hello said ``bot`` (error
    ``humans_only``)."""
    rated: bool = False
    """The finish moves the players' ratings in the variant (never with ``seed``)."""
    public: bool = False
    """List the race in the lobby's open races while it waits for players (else it is
    joined by its code only)."""
    type: Literal["create_race"] = "create_race"
    ghosts: list[dict[str, str]] | None = None
    """Recorded runs to race (at most 5), each ``{"race": CODE, "player": PLAYER_ID}`` of a
    finished, revealed race with the same variant, undo and time limit, all on one deal:
    the race deals that deal (no ``seed``, not ``winnable``)."""


@dataclass
class Join:
    """Join a race by code (reply: ``joined``). Joining again resumes: ``since`` is the last
    event version seen, and the reply carries the events after it. ``moved``: this
    connection takes over from another live connection of the same player (race affinity
    moving to the race's node), so nothing was lost and no ``away`` is recorded."""

    req: int
    code: str
    role: Role = "player"
    since: int | None = None
    moved: bool = False
    type: Literal["join"] = "join"


@dataclass
class Leave:
    req: int
    code: str
    type: Literal["leave"] = "leave"


@dataclass
class Ready:
    """Mark the player ready (or not); when every player is ready the countdown starts."""

    req: int
    code: str
    ready: bool = True
    type: Literal["ready"] = "ready"


@dataclass
class MoveAction:
    """A move or a deal (``+``) in the spec's notation (reply: ``ack`` or ``error``)."""

    code: str
    seq: int
    move: str
    type: Literal["move"] = "move"


@dataclass
class Undo:
    """Take back the player's last move or deal, when the race allows undo."""

    code: str
    seq: int
    type: Literal["undo"] = "undo"


@dataclass
class Resign:
    code: str
    seq: int
    type: Literal["resign"] = "resign"


@dataclass
class Hint:
    """Ask for a hint in a race that allows them (reply: ``hint_reply``). The hint is worked
    out from the player's full position, so it is counted and shown in the results."""

    req: int
    code: str
    type: Literal["hint"] = "hint"


@dataclass
class DailyRace:
    """Race the day's deal of a variant alone (reply: ``joined``): the same proven-winnable
    deal for everyone on a UTC day, one race per player and day (asking again rejoins it)."""

    req: int
    variant: str = "spider4"
    type: Literal["daily_race"] = "daily_race"
    ghosts: list[dict[str, str]] | None = None
    """Runs of the same day's daily deal to race (``{"race": CODE, "player": PLAYER_ID}``,
    the codes the leaderboard's entries name), when the race is made (asking again rejoins
    it as it is). Progress only: the deal stays hidden until the day is over."""


@dataclass
class Leaderboard:
    """The leaderboard of a variant's daily deal (reply: ``leaderboard_reply``); ``day``
    is ``YYYY-MM-DD`` (UTC), by default today."""

    req: int
    variant: str = "spider4"
    day: str | None = None
    type: Literal["leaderboard"] = "leaderboard"


@dataclass
class MyRaces:
    """The races this player is in, and those this connection watches (reply:
    ``my_races_reply``)."""

    req: int
    type: Literal["my_races"] = "my_races"


ClientMessage = (
    Hello
    | CreateRace
    | Join
    | Leave
    | Ready
    | MoveAction
    | Undo
    | Resign
    | Hint
    | DailyRace
    | Leaderboard
    | MyRaces
    | Profile
    | RatingChanges
    | RatingLeaderboard
    | Rematch
    | OpenRaces
    | QuickMatch
    | CancelMatch
)
