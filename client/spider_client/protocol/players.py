"""What the service keeps about players, and the rematch: profiles, ratings, the rating
ladders, and the rematch (its race event, ``rematch_offer``, is in :mod:`.race_events`).

Ratings are shown as one number (1500 for a new player; see ``docs/protocol.md``,
"Ratings") with ``provisional`` true while the rating is still uncertain. Names are not
unique: ``tag`` is the last 4 characters of the player's id, shown beside a name wherever
two players could be confused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = [
    "Profile",
    "ProfileReply",
    "VariantStats",
    "HistoryLine",
    "RatingChanges",
    "RatingChange",
    "RatingChangesReply",
    "RatingLeaderboard",
    "LadderEntry",
    "RatingLeaderboardReply",
    "Rematch",
]


# -- client messages --------------------------------------------------------------------------


@dataclass
class Profile:
    """A player's profile (reply: ``profile_reply``): by ``player`` id, else by ``name``
    (the account of that name; a guest is found by its id only), else the asker's own.
    ``before``: the reply's ``next`` of the page before, for the races after it (the
    first page without)."""

    req: int
    player: str | None = None
    name: str | None = None
    before: str | None = None
    type: Literal["profile"] = "profile"


@dataclass
class RatingChanges:
    """The rating changes of a finished race (reply: ``rating_changes_reply``)."""

    req: int
    code: str
    type: Literal["rating_changes"] = "rating_changes"


@dataclass
class RatingLeaderboard:
    """A variant's rating ladder, humans' or bots' (reply: ``rating_leaderboard_reply``):
    the top 100 and the asker's own place."""

    req: int
    variant: str = "spider1"
    pool: Literal["humans", "bots"] = "humans"
    type: Literal["rating_leaderboard"] = "rating_leaderboard"


@dataclass
class Rematch:
    """Accept (or offer) the same race again, after race ``code`` finished (reply:
    ``done``): the same options, a fresh deal. The race's players hear a ``rematch`` event;
    the new race is made when every player of the race accepted, or when the offer's
    deadline passes with those who did (two or more, or the one player of a race alone)."""

    req: int
    code: str
    type: Literal["rematch"] = "rematch"


# -- the server's replies -----------------------------------------------------------------------


@dataclass
class VariantStats:
    """A player's record in one variant."""

    variant: str
    played: int
    won: int
    win_rate: float
    """won / played (0 before any race)."""
    best_time: float | None
    streak: int
    """Races won in a row, up to the last."""
    best_streak: int
    rating: int
    provisional: bool
    rated: int
    """Rated races played."""
    best_rating: int | None = None
    history: list[list[float]] = field(default_factory=list)
    """[time, rating] after each of the last rated races, oldest first."""


@dataclass
class HistoryLine:
    """One of the player's last races; ``replay`` is the page's link to it (while the
    finished race is kept)."""

    code: str
    variant: str
    at: float
    rank: int
    of: int
    status: str
    time: float | None
    rated: bool
    before: int | None = None
    after: int | None = None
    replay: str = ""


@dataclass
class ProfileReply:
    """Reply to ``profile``. ``found`` false: no finished race of that player (the other
    fields are then empty). ``races`` is a page of the player's races, newest first;
    ``more``: older races follow, asked for with ``before`` set to ``next``."""

    req: int
    player: str
    name: str
    tag: str
    bot: bool = False
    guest: bool = False
    """The player has no account (a guest, or a player from before accounts): on no
    ladder, and its ratings stay as they are (frozen) until it signs up."""
    found: bool = True
    variants: list[VariantStats] = field(default_factory=list)
    races: list[HistoryLine] = field(default_factory=list)
    more: bool = False
    next: str | None = None
    type: Literal["profile_reply"] = "profile_reply"


@dataclass
class RatingChange:
    player: str
    name: str
    tag: str
    before: int
    after: int
    provisional: bool
    pool: str
    """``humans`` or ``bots``: the ladder the rating is on."""


@dataclass
class RatingChangesReply:
    """Reply to ``rating_changes``: ``applied`` false while the finished race is not written
    yet (ask again shortly); ``changes`` empty for an unrated race."""

    req: int
    code: str
    rated: bool
    applied: bool
    changes: list[RatingChange] = field(default_factory=list)
    type: Literal["rating_changes_reply"] = "rating_changes_reply"


@dataclass
class LadderEntry:
    rank: int
    player: str
    name: str
    tag: str
    rating: int
    provisional: bool


@dataclass
class RatingLeaderboardReply:
    """Reply to ``rating_leaderboard``: best first (equal ratings share a rank), and the
    asker's own line (None when not on it: no rated race in the variant, a provisional
    rating, a guest)."""

    req: int
    variant: str
    pool: str
    entries: list[LadderEntry] = field(default_factory=list)
    me: LadderEntry | None = None
    type: Literal["rating_leaderboard_reply"] = "rating_leaderboard_reply"
