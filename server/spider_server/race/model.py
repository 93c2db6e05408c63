"""A race's state as storage holds it, and the shapes of the decisions on it.

:class:`Race` (with its players' public :class:`Entry` rows) and each player's private
:class:`Game` are what the operations read; :class:`RaceChange` and :class:`ActionOutcome`
are what they decide, for the caller to commit.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Literal

from spider_client.protocol import Ack, ParInfo, PlayerInfo, Result, fields_of, pack
from spider_engine import Board

from .options import RaceOptions

__all__ = [
    "ALL",
    "SPECTATORS",
    "ActionKind",
    "ActionOutcome",
    "Audience",
    "Entry",
    "FORFEIT",
    "Final",
    "Game",
    "Race",
    "RaceChange",
    "RaceState",
    "RematchState",
    "Status",
    "TERMINAL",
    "entry_of",
    "event_data",
]

Audience = Literal["all", "spectators"]
ActionKind = Literal["move", "undo", "resign", "leave"]
ALL: Literal["all"] = "all"
SPECTATORS: Literal["spectators"] = "spectators"


class RaceState(enum.Enum):
    """Where a race is in its life; each state allows a few operations."""

    OPEN = "open"
    """Players join, leave and mark themselves ready."""
    COUNTDOWN = "countdown"
    """Everyone was ready; the deal is out at ``starts_at``. Players may still leave."""
    RUNNING = "running"
    """Players move; ends when every player is done or at ``ends_at``."""
    FINISHED = "finished"
    """Results, seed, salt, replays and final boards are public."""


class Status:
    """A player's status (``PlayerInfo.status``)."""

    WAITING = "waiting"
    PLAYING = "playing"
    WON = "won"
    STUCK = "stuck"
    """No legal move in a race without undo; with undo, a position that offers no move
    and no deal, only undo, for the race's ``away_grace`` (rules.md §7a)."""
    RESIGNED = "resigned"
    TIMEOUT = "timeout"
    LEFT = "left"
    """Left a running race: counts as resigned."""
    ABANDONED = "abandoned"
    """Away from a running race for longer than the grace period in all (its spells
    summed): counts as resigned."""
    IDLE = "idle"
    """No action (move, deal or undo) for the race's ``idle_limit``: counts as resigned."""


FORFEIT = frozenset({Status.RESIGNED, Status.LEFT, Status.ABANDONED, Status.IDLE})
"""Statuses of a game given up (rules.md §7a): ranked below every player who played on."""

TERMINAL = frozenset({Status.WON, Status.STUCK, Status.TIMEOUT}) | FORFEIT
"""Statuses of a game that is over."""


@dataclass(kw_only=True)
class Entry:
    """A player's public entry in a race: counts, never cards."""

    player: str
    name: str
    order: int
    ready: bool = False
    status: str = Status.WAITING
    moves: int = 0
    turned_up: int = 0
    runs: int = 0
    """Sets completed (rules.md §7a): runs for the Spider family, each deck's sets for
    the others."""
    deals_left: int = 0
    score: int = 500
    time: float | None = None
    hints: int = 0
    suited: int = 0
    """The ``suited`` score of the position now (0 for a variant without one)."""
    raised_at: float = 0.0
    """Race time (seconds from the start) of the action that last raised the player's
    progress (sets completed, cards turned up, suited score); 0 before any did."""
    away_since: float | None = None
    """Since when (server time) the player is away from the running race (no connection
    of theirs watches it), as committed with an ``away`` event; None while present."""
    away_total: float = 0.0
    """Seconds the player was away from the running race in the spells that ended (each
    ``back``, or an action that proved them present); with the spell under way, it is what
    the race's ``away_grace`` bounds (rules.md §7a)."""
    idle_at: float | None = None
    """While the player's game is on: the server time by which they must act (move, deal
    or undo) or be out as ``idle`` (the start, or their last action, plus the race's
    ``idle_limit``); None before the start (and in entries stored without it)."""
    undo_only_since: float | None = None
    """Since when (server time) the player's position offers only undo (the game's;
    kept here so that every node's sweep sees it without reading games)."""
    bot: bool = False
    """The player's hello said ``bot`` when they joined (entries stored without it: a
    person)."""
    ghost: bool = False
    """A recorded run replayed on the race's clock (:mod:`.ghosts`), not a live player."""
    guest: bool = False
    """The player had no account when they joined (a guest's connection, on a server that
    keeps accounts); kept as it was for the race even if the guest signs up later."""
    dodged: bool = False
    """Left the quick-match race before its start past the free dodges (:mod:`.matches`):
    ``left`` from the start, ranked below every player who raced (rules.md §7a)."""

    @property
    def progress(self) -> tuple[int, int, int]:
        """The progress of rules.md §7a: (sets completed, cards turned up, suited score)."""
        return (self.runs, self.turned_up, self.suited)

    def info(self, *, online: bool = True) -> PlayerInfo:
        """The public entry; ``connected`` when ``online`` (a connection of the player
        watches the race) and not marked away; ``idle_at`` while the game is on."""
        return PlayerInfo(
            player=self.player,
            name=self.name,
            ready=self.ready,
            connected=online and self.away_since is None,
            away_since=self.away_since,
            idle_at=self.idle_at if self.status == Status.PLAYING and not self.ghost else None,
            status=self.status,
            moves=self.moves,
            turned_up=self.turned_up,
            runs=self.runs,
            deals_left=self.deals_left,
            score=self.score,
            time=self.time,
            hints=self.hints,
            bot=self.bot,
            ghost=self.ghost,
            guest=self.guest,
        )


@dataclass(kw_only=True)
class Game:
    """A player's game in a race that started: private (the position knows every card)."""

    player: str
    seq: int = 0
    """The number of the last applied action (0 before the first)."""
    position: str
    """The full position now, in the spec's notation."""
    status: str = Status.PLAYING
    moves: int = 0
    turned_up: int = 0
    runs: int = 0
    """Sets completed (rules.md §7a): runs for the Spider family, each deck's sets for
    the others."""
    deals_left: int = 0
    score: int = 500
    time: float | None = None
    down0: int = 0
    """Face-down cards at the deal (``turned_up`` counts from it)."""
    suited: int = 0
    """The ``suited`` score of the position (0 for a variant without one)."""
    raised_at: float = 0.0
    """Race time of the action that last raised the progress (``runs``, ``turned_up``,
    ``suited``, compared as a tuple); 0 before any did."""
    undo_only_since: float | None = None
    """Since when (server time) the position offers no move and no deal, only undo (a
    race with undo); None when it offers more. After the race's ``away_grace`` the game
    is ``stuck``."""

    @property
    def progress(self) -> tuple[int, int, int]:
        """The progress of rules.md §7a: (sets completed, cards turned up, suited score)."""
        return (self.runs, self.turned_up, self.suited)


@dataclass(kw_only=True)
class Final:
    """What the finish reveals."""

    results: list[Result]
    replays: dict[str, list[str]]
    boards: dict[str, str]
    times: dict[str, list[int]] = field(default_factory=dict)
    """Each player's action times (ms from the start), parallel to ``replays``; a player
    whose times were not kept (a race from before they were) is left out."""


@dataclass(kw_only=True)
class Race:
    """A race as storage holds it. ``players`` is in join order."""

    code: str
    options: RaceOptions
    state: RaceState
    version: int
    creator: str
    created_at: float
    seed: str
    salt: str
    commitment: str
    players: dict[str, Entry] = field(default_factory=dict)
    next_order: int = 0
    starts_at: float | None = None
    started_at: float | None = None
    ends_at: float | None = None
    final: Final | None = None
    preparing: bool = False
    """Waiting for a proven seed (``seed``, ``salt`` and ``commitment`` are empty)."""
    rematch: RematchState | None = None
    """A finished race's rematch offer (:mod:`.rematch`)."""
    par: ParInfo | None = None
    """After the finish, once computed (in the background): the deal's par."""


@dataclass(kw_only=True)
class RematchState:
    """Who accepted a finished race's rematch, until when the offer waits, and the new
    race's code once it is made."""

    accepted: list[str]
    deadline: float
    code: str | None = None


@dataclass(kw_only=True)
class RaceChange:
    """A decision on a race: commit it only if the race's version is still ``base``.

    ``race`` is the race after the change; ``meta`` says whether its own fields changed;
    ``players`` are entries written, ``removed`` entries deleted, ``games`` games written
    whole (the start), ``events`` appended in order. ``delete`` drops the whole race."""

    base: int
    race: Race
    meta: bool = True
    players: list[Entry] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    games: list[Game] = field(default_factory=list)
    events: list[tuple[Audience, object]] = field(default_factory=list)
    delete: bool = False
    finished: bool = False
    ghost_runs: dict[str, bytes] = field(default_factory=dict)
    """Recorded runs of the race's ghosts to write (ghost id -> stored run), at creation."""


def event_data(event: object) -> bytes:
    """The stored form of an event: msgpack of its fields without ``version``."""
    fields = fields_of(event)
    fields.pop("version", None)
    return pack(fields)


@dataclass(kw_only=True)
class ActionOutcome:
    """A decision on one player's action: commit it only if the game's seq is still
    ``game.seq - 1``."""

    game: Game
    entry: Entry
    action: str
    ack: Ack
    events: list[tuple[Audience, object]]
    board: Board | None = field(default=None, compare=False, repr=False)
    """The player's position after the action (the engine's board), for a caller that
    keeps it to decide the next action without parsing ``game.position`` again."""

    stored_events: list[tuple[Audience, bytes]] = field(repr=False)
    """The events in their stored form (msgpack of their fields without ``version``),
    encoded once: committed, and dispatched by the node that committed them."""
    ack_frame: bytes = field(repr=False)
    """The ack's frame, encoded once: the same bytes are stored (for a resent action)
    and sent."""
    time_ms: int = 0
    """The action's race time in milliseconds (kept with the action: timed replays)."""


def entry_of(entry: Entry, game: Game) -> Entry:
    """``entry`` with the counts, status and time of the player's ``game`` (and whether
    the player is away, their time away and their idle deadline, from ``entry``)."""
    return Entry(
        player=entry.player,
        name=entry.name,
        order=entry.order,
        ready=entry.ready,
        hints=entry.hints,
        status=game.status,
        moves=game.moves,
        turned_up=game.turned_up,
        runs=game.runs,
        deals_left=game.deals_left,
        score=game.score,
        time=game.time,
        suited=game.suited,
        raised_at=game.raised_at,
        away_since=entry.away_since,
        away_total=entry.away_total,
        idle_at=entry.idle_at,
        undo_only_since=game.undo_only_since,
        bot=entry.bot,
        ghost=entry.ghost,
        guest=entry.guest,
        dodged=entry.dodged,
    )
