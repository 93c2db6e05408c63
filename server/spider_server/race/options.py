"""What a race may be created with, and what it was created with."""

from __future__ import annotations

from dataclasses import dataclass

from spider_client.protocol import CreateRace
from spider_engine import Variant, VariantError, find_variant

from ..errors import InvalidMessage

__all__ = [
    "MIN_RATED_COUNTDOWN",
    "RATED_TIME_LIMITS",
    "Limits",
    "RaceOptions",
    "idle_limit_of",
    "offered_variant",
    "rated_time_limits",
    "unrated_because",
]

RATED_TIME_LIMITS: dict[str, tuple[int, ...]] = {
    "spider1": (300, 600, 900),
    "spider2": (600, 900, 1200),
    "spider4": (900, 1200, 1800),
}
"""The time limits (seconds) a rated race of each variant may have; a variant not named
here: :data:`OTHER_RATED_TIME_LIMITS`. The deployment may set one list for every variant
(``SPIDER_RACE_RATED_TIME_LIMITS``)."""
OTHER_RATED_TIME_LIMITS = (900, 1800)
MIN_RATED_COUNTDOWN = 3
"""The shortest countdown of a rated race (seconds): every player sees the start coming."""


def offered_variant(name: str) -> Variant:
    """The variant of that name that races are offered in; InvalidMessage when there is
    none, or it is not offered."""
    try:
        variant = find_variant(name)
    except VariantError as e:
        raise InvalidMessage(f"variant: {e}") from None
    if not variant.listed:
        raise InvalidMessage(f"variant: {name!r} is not offered")
    return variant


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What a race may be created with."""

    max_players: int = 16
    max_time_limit: int = 4 * 3600
    max_countdown: int = 60
    max_seed_length: int = 200
    away_grace: int = 60
    """The ``away_grace`` of a race created without one."""
    max_away_grace: int = 3600
    idle_limit: int = 180
    """The ``idle_limit`` of a race created without one."""
    min_idle_limit: int = 30
    max_idle_limit: int = 3600
    rated_idle_limit: int = 120
    """The ``idle_limit`` of every rated race (quick matches too): fixed."""
    rated_time_limits: tuple[int, ...] = ()
    """The time limits a rated race may have, for every variant (empty: each variant's
    own, :data:`RATED_TIME_LIMITS`)."""


@dataclass(frozen=True, kw_only=True)
class RaceOptions:
    """The options a race was created with (fixed for its life)."""

    variant: str
    max_players: int
    time_limit: int
    undo: bool
    live_boards: bool
    countdown: int
    winnable: bool = False
    hints: bool = False
    daily: str = ""
    """The UTC day (``YYYY-MM-DD``) of a daily race, else empty."""
    away_grace: int = 60
    """Seconds a player may be away from the running race, in all (rules.md §7a), before
    they are out as ``abandoned``, and a position offering only undo may last before it is
    ``stuck``."""
    seed_chosen: bool = False
    """The creator chose the seed (they know the deal): said in the race's info, never
    rated."""
    humans_only: bool = False
    """Players whose hello said ``bot`` may not join (an honour rule: the flag is
    declared, not detected)."""
    rated: bool = False
    """The finish moves the players' ratings (:mod:`.ratings`)."""
    public: bool = False
    """Listed in the lobby's open races while it waits for players."""
    quick: bool = False
    """Made by the quick-match queue (its players are matched, never joining by code)."""
    idle_limit: int = 180
    """Seconds a player may go without an action (move, deal or undo), from the start or
    their last one, before they are out as ``idle`` (rules.md §7a)."""

    @classmethod
    def from_request(cls, msg: CreateRace, limits: Limits) -> RaceOptions:
        """The options of a ``create_race``; :class:`InvalidMessage` when one is out of range
        or the variant is unknown."""
        variant = offered_variant(msg.variant)
        if not 1 <= msg.max_players <= limits.max_players:
            raise InvalidMessage(f"max_players: between 1 and {limits.max_players}")
        if not 1 <= msg.time_limit <= limits.max_time_limit:
            raise InvalidMessage(f"time_limit: between 1 and {limits.max_time_limit} seconds")
        if not 0 <= msg.countdown <= limits.max_countdown:
            raise InvalidMessage(f"countdown: between 0 and {limits.max_countdown} seconds")
        if msg.seed is not None and not 1 <= len(msg.seed) <= limits.max_seed_length:
            raise InvalidMessage(f"seed: 1 to {limits.max_seed_length} characters")
        grace = limits.away_grace if msg.away_grace is None else msg.away_grace
        if not 1 <= grace <= limits.max_away_grace:
            raise InvalidMessage(f"away_grace: between 1 and {limits.max_away_grace} seconds")
        if msg.winnable and msg.seed is not None:
            raise InvalidMessage("seed: a winnable race is dealt from a proven seed")
        rated = bool(getattr(msg, "rated", False))
        if rated and (why := unrated_because(msg, variant.id, limits)) is not None:
            raise InvalidMessage(f"rated: {why}")
        idle = idle_limit_of(getattr(msg, "idle_limit", None), rated=rated, limits=limits)
        return cls(
            variant=variant.id,
            max_players=msg.max_players,
            time_limit=msg.time_limit,
            undo=msg.undo,
            live_boards=msg.live_boards,
            countdown=msg.countdown,
            winnable=msg.winnable,
            hints=msg.hints,
            away_grace=grace,
            seed_chosen=msg.seed is not None,
            humans_only=msg.humans_only,
            rated=rated,
            public=msg.public,
            idle_limit=idle,
        )


def idle_limit_of(asked: int | None, *, rated: bool, limits: Limits) -> int:
    """The ``idle_limit`` of a race created with ``asked`` (None: the default): a rated
    race's is :attr:`Limits.rated_idle_limit` (asking for another is InvalidMessage), any
    other's between :attr:`Limits.min_idle_limit` and :attr:`Limits.max_idle_limit`."""
    if rated:
        if asked is not None and asked != limits.rated_idle_limit:
            raise InvalidMessage(f"idle_limit: a rated race's is {limits.rated_idle_limit} seconds")
        return limits.rated_idle_limit
    idle = limits.idle_limit if asked is None else asked
    if not limits.min_idle_limit <= idle <= limits.max_idle_limit:
        raise InvalidMessage(
            f"idle_limit: between {limits.min_idle_limit} and {limits.max_idle_limit} seconds"
        )
    return idle


def rated_time_limits(variant: str, limits: Limits) -> tuple[int, ...]:
    """The time limits a rated race of ``variant`` may have."""
    if limits.rated_time_limits:
        return limits.rated_time_limits
    return RATED_TIME_LIMITS.get(variant, OTHER_RATED_TIME_LIMITS)


def unrated_because(msg: CreateRace, variant: str, limits: Limits) -> str | None:
    """Why a race created so cannot be rated, or None when it can. A rated race is made
    on the server's own terms (docs/spec/rules.md, *Rated races*): public (a private race
    is casual), a time limit of :func:`rated_time_limits`, a countdown of
    :data:`MIN_RATED_COUNTDOWN` seconds or more, a seed the server draws (a chosen one:
    someone may know the deal), no ghosts, no live boards (a watcher would see the deal
    the others race), no hints, the server's ``away_grace``."""
    allowed = rated_time_limits(variant, limits)
    if msg.seed is not None:
        return "a race dealt from a chosen seed is never rated"
    if getattr(msg, "ghosts", None):
        return "a race with ghosts is never rated"
    if not msg.public:
        return "a private race is casual: a rated race is public (or a quick match)"
    if msg.time_limit not in allowed:
        return f"time_limit: a rated {variant} race's is one of {_seconds(allowed)}"
    if msg.countdown < MIN_RATED_COUNTDOWN:
        return f"countdown: a rated race's is at least {MIN_RATED_COUNTDOWN} seconds"
    if msg.live_boards:
        return "live boards show the deal to a watcher: a rated race has none"
    if msg.hints:
        return "a rated race has no hints"
    if msg.away_grace is not None:
        return f"away_grace: a rated race has the server's ({limits.away_grace} seconds)"
    return None


def _seconds(allowed: tuple[int, ...]) -> str:
    """``5, 10, 15 minutes (300, 600, 900 seconds)``, or seconds alone."""
    seconds = ", ".join(str(s) for s in allowed)
    if all(s % 60 == 0 for s in allowed):
        return f"{', '.join(str(s // 60) for s in allowed)} minutes ({seconds} seconds)"
    return f"{seconds} seconds"
