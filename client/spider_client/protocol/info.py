"""What everyone may see of a race, its players and its results: the snapshots that replies
and events carry (counts only, never cards)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Result", "PlayerInfo", "RaceInfo"]


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


@dataclass
class PlayerInfo:
    """A player's public progress: counts only, never cards."""

    player: str
    name: str
    ready: bool = False
    connected: bool = True
    status: str = "waiting"
    """waiting, playing, won, stuck, resigned, timeout or left."""
    moves: int = 0
    """Actions made: moves, deals and undos."""
    turned_up: int = 0
    runs: int = 0
    deals_left: int = 0
    score: int = 500
    time: float | None = None
    hints: int = 0
    """Hints asked for so far."""


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
    winnable: bool = False
    hints: bool = False
    preparing: bool = False
    """A ``winnable`` (or daily) race waiting for its proven deal: no countdown yet."""
    daily: str | None = None
    """The UTC day (``YYYY-MM-DD``) of a daily race; its seed, salt, replays and final
    boards stay hidden until that day is over."""
    public: bool = False
    """Listed in the lobby's open races while it waits for players."""
    quick: bool = False
    """Made by the quick-match queue."""
