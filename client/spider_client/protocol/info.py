"""What everyone may see of a race, its players and its results: the snapshots that replies
and events carry (counts only, never cards)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ParInfo", "Result", "PlayerInfo", "RaceInfo"]


@dataclass
class Result:
    """One player's line in the ranking."""

    rank: int
    player: str
    name: str
    status: str
    time: float | None
    """Seconds from the start to the win (None when not won)."""
    runs: int
    moves: int
    score: int
    hints: int = 0
    """Hints the player asked for."""
    bot: bool = False
    """The player said ``bot`` in their hello."""
    ghost: bool = False
    """A ghost's line: ranked with the players, never rated nor on a leaderboard."""
    guest: bool = False
    """A guest's line: a player without an account (a server that keeps accounts says
    so; a ghost, and an account's bot, are not guests)."""


@dataclass
class ParInfo:
    """A finished deal's par: the shortest winning line the server knows. ``moves`` is its
    length, ``line`` its moves in notation (moves name columns, never cards) and ``first``
    the length of the solver's first line (None when the solver found none); ``none`` (the
    others None) when the solver did not settle the deal within the budget and no other
    winning line is known: no par. ``provisional``: the shortest line known at the finish
    (the deal's proof, a winner's moves) while the solver looks for a shorter one; a
    settled par replaces it."""

    moves: int | None = None
    line: list[str] | None = None
    first: int | None = None
    none: bool = False
    provisional: bool = False


@dataclass
class PlayerInfo:
    """A player's public progress: counts only, never cards."""

    player: str
    name: str
    ready: bool = False
    connected: bool = True
    status: str = "waiting"
    """waiting, playing, won, stuck, resigned, timeout, left, abandoned or idle."""
    moves: int = 0
    """Actions made: moves, deals and undos."""
    turned_up: int = 0
    runs: int = 0
    deals_left: int = 0
    score: int = 500
    time: float | None = None
    hints: int = 0
    """Hints asked for so far."""
    away_since: float | None = None
    """While the player is away from a running race (``away``): since when, in the
    server's time; else None."""
    bot: bool = False
    """The player said ``bot`` in their hello (declared, not detected)."""
    ghost: bool = False
    """A ghost: a recorded run of a finished game on the same deal, replayed on the
    race's clock as it was recorded (its progress only, like any player's)."""
    guest: bool = False
    """A guest: a player without an account, whose name anyone may take (said by a
    server that keeps accounts only; never a ghost, nor an account's bot)."""
    idle_at: float | None = None
    """While the player's game is on in the running race: the server time by which they
    must act (move, deal or undo) or be out as ``idle`` (their last action, or the start,
    plus the race's ``idle_limit``); else None."""


@dataclass
class RaceInfo:
    """A snapshot of a race as everyone may see it."""

    code: str
    variant: str
    state: str
    """open, countdown, running or finished."""
    version: int
    creator: str
    max_players: int
    time_limit: int
    undo: bool
    live_boards: bool
    countdown: int
    players: list[PlayerInfo] = field(default_factory=list)
    spectators: int = 0
    commitment: str | None = None
    starts_at: float | None = None
    ends_at: float | None = None
    results: list[Result] | None = None
    seed: str | None = None
    salt: str | None = None
    replays: dict[str, list[str]] | None = None
    """After the race: every player's actions (moves, ``undo``, ``resign``) in order."""
    replay_times: dict[str, list[int]] | None = None
    """After the race: each action's race time in ms, parallel to ``replays`` (players of
    races from before times were kept are left out)."""
    winnable: bool = False
    hints: bool = False
    preparing: bool = False
    """A ``winnable`` (or daily) race waiting for its proven deal: no countdown yet."""
    away_grace: int = 60
    """Seconds a player of the running race may be away, in all (every spell away summed),
    before they are out as ``abandoned``; also how long a position that offers only undo
    may stay so before the player is ``stuck``."""
    daily: str | None = None
    """The UTC day (``YYYY-MM-DD``) of a daily race; its seed, salt, replays and final
    boards stay hidden until that day is over."""
    seed_chosen: bool = False
    """The creator chose the deal's seed (so they know the deal); such a race is never
    rated."""
    humans_only: bool = False
    """Players whose hello said ``bot`` are refused."""
    rated: bool = False
    """The finish moves the players' ratings (``rating_changes`` tells how)."""
    par: ParInfo | None = None
    """A finished race's par once the server has it (``par`` event); None before, and for
    a daily race until its day is over."""
    public: bool = False
    """Listed in the lobby's open races while it waits for players."""
    quick: bool = False
    """Made by the quick-match queue."""
    idle_limit: int = 180
    """Seconds a player of the running race may go without an action (move, deal or undo),
    from the start or their last one, before they are out as ``idle``."""
