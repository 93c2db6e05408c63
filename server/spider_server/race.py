"""The race's rules, without I/O: state in, decisions and events out.

A race goes through four states, in order (:class:`RaceState`)::

    open ──(every player ready)──> countdown ──(starts_at)──> running ──> finished
                                                         (everyone done, or the time limit)

Each operation takes the race (and a player's :class:`Game` where it acts on one) as read
from storage, checks that the state allows it (a named :class:`~.errors.RequestError`
otherwise, and nothing changes), and returns a decision: a :class:`RaceChange` (what to
write and which events to append, for a check-and-set on the race's version) or an
:class:`ActionOutcome` (the player's new game, the ack and the events, for a check-and-set
on the player's ``seq``). The caller commits; if the check-and-set loses, it reloads and
asks again. Nothing here reads a clock or a socket: ``now`` is always an argument.

Events are protocol dataclasses whose ``version`` is 0 here; storage numbers them when it
appends them. Every event goes to everyone in the race (audience ``all``) except ``board``
events, which go to spectators only (audience ``spectators``).

No event carries a card while the race runs, except ``board`` events of a race created with
live boards; an :class:`~spider_client.protocol.Ack` carries the mover's own view.
"""

from __future__ import annotations

import enum
import hashlib
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from spider_client.protocol import (
    Ack,
    Countdown,
    CreateRace,
    Finished,
    PlayerInfo,
    PlayerJoined,
    PlayerLeft,
    PlayerReady,
    Prepared,
    Progress,
    RaceInfo,
    Result,
    Started,
    encode,
    fields_of,
    pack,
)
from spider_client.protocol import BoardShown as BoardEvent
from spider_engine import (
    Board,
    IllegalMoveError,
    InvalidMoveError,
    Move,
    VariantError,
    find_variant,
)

from .errors import (
    GameOver,
    IllegalMove,
    InvalidMessage,
    MalformedMove,
    NotAPlayer,
    RaceFull,
    UndoNotAllowed,
    WrongState,
)

__all__ = [
    "ALL",
    "ActionKind",
    "SPECTATORS",
    "ActionOutcome",
    "Entry",
    "Final",
    "Game",
    "Limits",
    "Race",
    "RaceChange",
    "RaceOptions",
    "RaceState",
    "Status",
    "TERMINAL",
    "apply_action",
    "commitment",
    "count_hint",
    "create_race",
    "due_transition",
    "effective_moves",
    "finish",
    "join",
    "leave",
    "new_code",
    "new_salt",
    "normalize_code",
    "new_seed",
    "prepare",
    "revealed",
    "race_info",
    "rank",
    "replay",
    "runs_completed",
    "set_ready",
    "start",
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
    """No legal move in a race without undo (with undo, a stuck player plays on)."""
    RESIGNED = "resigned"
    TIMEOUT = "timeout"
    LEFT = "left"
    """Left a running race: counts as resigned."""


TERMINAL = frozenset({Status.WON, Status.STUCK, Status.RESIGNED, Status.TIMEOUT, Status.LEFT})
"""Statuses of a game that is over."""


@dataclass(frozen=True, kw_only=True)
class Limits:
    """What a race may be created with."""

    max_players: int = 16
    max_time_limit: int = 4 * 3600
    max_countdown: int = 60
    max_seed_length: int = 200


@dataclass(frozen=True, kw_only=True)
class RaceOptions:
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

    @classmethod
    def from_request(cls, msg: CreateRace, limits: Limits) -> RaceOptions:
        """The options of a ``create_race``; :class:`InvalidMessage` when one is out of range
        or the variant is unknown."""
        try:
            variant = find_variant(msg.variant)
        except VariantError as e:
            raise InvalidMessage(f"variant: {e}") from None
        if not variant.listed:
            raise InvalidMessage(f"variant: {msg.variant!r} is not offered")
        if not 1 <= msg.max_players <= limits.max_players:
            raise InvalidMessage(f"max_players: between 1 and {limits.max_players}")
        if not 1 <= msg.time_limit <= limits.max_time_limit:
            raise InvalidMessage(f"time_limit: between 1 and {limits.max_time_limit} seconds")
        if not 0 <= msg.countdown <= limits.max_countdown:
            raise InvalidMessage(f"countdown: between 0 and {limits.max_countdown} seconds")
        if msg.seed is not None and not 1 <= len(msg.seed) <= limits.max_seed_length:
            raise InvalidMessage(f"seed: 1 to {limits.max_seed_length} characters")
        if msg.winnable and msg.seed is not None:
            raise InvalidMessage("seed: a winnable race is dealt from a proven seed")
        return cls(
            variant=variant.id,
            max_players=msg.max_players,
            time_limit=msg.time_limit,
            undo=msg.undo,
            live_boards=msg.live_boards,
            countdown=msg.countdown,
            winnable=msg.winnable,
            hints=msg.hints,
        )


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
    deals_left: int = 0
    score: int = 500
    time: float | None = None
    hints: int = 0

    def info(self, *, connected: bool = True) -> PlayerInfo:
        return PlayerInfo(
            player=self.player,
            name=self.name,
            ready=self.ready,
            connected=connected,
            status=self.status,
            moves=self.moves,
            turned_up=self.turned_up,
            runs=self.runs,
            deals_left=self.deals_left,
            score=self.score,
            time=self.time,
            hints=self.hints,
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
    deals_left: int = 0
    score: int = 500
    time: float | None = None
    down0: int = 0
    """Face-down cards at the deal (``turned_up`` counts from it)."""


@dataclass(kw_only=True)
class Final:
    """What the finish reveals."""

    results: list[Result]
    replays: dict[str, list[str]]
    boards: dict[str, str]


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


# -- join codes -----------------------------------------------------------------------------

CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
"""Join code characters: digits and capitals without 0/O and 1/I."""
CODE_LENGTH = 5


def new_code() -> str:
    """A random join code such as ``K7QX2`` (32**5 codes; the creator retries on a clash)."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: str) -> str | None:
    """The join code a person typed (any case, surrounding spaces), or None if it cannot
    be one."""
    code = text.strip().upper()
    if len(code) != CODE_LENGTH or not _CODE_CHARS.issuperset(code):
        return None
    return code


_CODE_CHARS = frozenset(CODE_ALPHABET)


# -- fairness -------------------------------------------------------------------------------


def new_seed() -> str:
    """A random secret seed: 32 hex digits (128 bits)."""
    return secrets.token_hex(16)


def new_salt() -> str:
    """A random salt: 64 hex digits (32 bytes)."""
    return secrets.token_hex(32)


def commitment(seed: str, salt: str) -> str:
    """``SHA-256(bytes.fromhex(salt) + seed.encode("utf-8"))``, lower-case hex."""
    return hashlib.sha256(bytes.fromhex(salt) + seed.encode("utf-8")).hexdigest()


# -- open races -----------------------------------------------------------------------------


def create_race(
    *,
    code: str,
    options: RaceOptions,
    creator: str,
    name: str,
    now: float,
    seed: str | None = None,
    salt: str | None = None,
    preparing: bool = False,
) -> RaceChange:
    """A new open race whose creator is its first player (not ready); with ``preparing``,
    without a deal until :func:`prepare` gives it one."""
    seed = new_seed() if seed is None else seed
    salt = new_salt() if salt is None else salt
    if preparing:
        seed = salt = ""
    race = Race(
        code=code,
        options=options,
        state=RaceState.OPEN,
        version=0,
        creator=creator,
        created_at=now,
        seed=seed,
        salt=salt,
        commitment=commitment(seed, salt) if not preparing else "",
        preparing=preparing,
    )
    change = join(race, creator, name, now)
    assert change is not None
    return change


def join(race: Race, player: str, name: str, now: float) -> RaceChange | None:
    """Add a player to an open race; None when they are in it already (a rejoin).
    WrongState unless open, RaceFull at the maximum."""
    if player in race.players:
        return None
    if race.state is not RaceState.OPEN:
        raise WrongState(f"race {race.code} is {race.state.value}: join as a spectator")
    if len(race.players) >= race.options.max_players:
        raise RaceFull(f"race {race.code} has its {race.options.max_players} players")
    entry = Entry(
        player=player,
        name=name,
        order=race.next_order,
        deals_left=len(find_variant(race.options.variant).stock_deals),
    )
    new = replace(race, players={**race.players, player: entry}, next_order=race.next_order + 1)
    event = PlayerJoined(race=race.code, version=0, player=entry.info())
    return RaceChange(base=race.version, race=new, players=[entry], events=[(ALL, event)])


def leave(race: Race, player: str, now: float) -> RaceChange:
    """Take a player out of an open race or one counting down (the countdown goes on for
    the others; the race is deleted when no player is left). NotAPlayer when not in it;
    WrongState when running or finished (a running game is left by resigning)."""
    if player not in race.players:
        raise NotAPlayer(f"not a player of race {race.code}")
    if race.state not in (RaceState.OPEN, RaceState.COUNTDOWN):
        raise WrongState(f"race {race.code} is {race.state.value}")
    players = {p: e for p, e in race.players.items() if p != player}
    new = replace(race, players=players)
    if not players:
        return RaceChange(base=race.version, race=new, removed=[player], delete=True)
    change = RaceChange(
        base=race.version,
        race=new,
        removed=[player],
        events=[(ALL, PlayerLeft(race=race.code, version=0, player=player))],
    )
    if race.state is RaceState.OPEN:
        _maybe_countdown(change, now)
    return change


def set_ready(race: Race, player: str, ready: bool, now: float) -> RaceChange | None:
    """Mark a player ready or not; when every player of an open race is ready, the countdown
    starts (``countdown`` event, ``starts_at`` = now + the race's countdown). None when
    nothing changes. NotAPlayer when not in it; WrongState unless open."""
    entry = race.players.get(player)
    if entry is None:
        raise NotAPlayer(f"not a player of race {race.code}")
    if race.state is not RaceState.OPEN:
        raise WrongState(f"race {race.code} is {race.state.value}")
    if entry.ready == ready:
        return None
    entry = replace(entry, ready=ready)
    new = replace(race, players={**race.players, player: entry})
    change = RaceChange(
        base=race.version,
        race=new,
        meta=False,
        players=[entry],
        events=[(ALL, PlayerReady(race=race.code, version=0, player=player, ready=ready))],
    )
    _maybe_countdown(change, now)
    return change


def prepare(race: Race, seed: str, now: float) -> RaceChange:
    """Give a preparing race its proven seed (with a new salt): a ``prepared`` event with
    the commitment, then the countdown if everyone is ready. WrongState unless preparing."""
    if not race.preparing:
        raise WrongState(f"race {race.code} has its deal")
    salt = new_salt()
    digest = commitment(seed, salt)
    new = replace(race, seed=seed, salt=salt, commitment=digest, preparing=False)
    event = Prepared(race=race.code, version=0, commitment=digest)
    change = RaceChange(base=race.version, race=new, events=[(ALL, event)])
    _maybe_countdown(change, now)
    return change


def revealed(race: Race, now: float | None) -> bool:
    """Whether the deal (seed, salt, replays, final boards) of a finished race is public:
    at once for a race, after its day (UTC) for a daily race."""
    if race.state is not RaceState.FINISHED:
        return False
    if not race.options.daily:
        return True
    return now is not None and now >= day_end(race.options.daily)


def day_end(day: str) -> float:
    """The end of a UTC day ``YYYY-MM-DD``, in seconds since the epoch."""
    import datetime

    start = datetime.datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=datetime.UTC)
    return (start + datetime.timedelta(days=1)).timestamp()


def _maybe_countdown(change: RaceChange, now: float) -> None:
    race = change.race
    if (
        race.state is RaceState.OPEN
        and not race.preparing
        and race.players
        and all(e.ready for e in race.players.values())
    ):
        starts_at = round(now + race.options.countdown, 3)
        change.race = replace(race, state=RaceState.COUNTDOWN, starts_at=starts_at)
        change.meta = True
        change.events.append((ALL, Countdown(race=race.code, version=0, starts_at=starts_at)))


# -- the start and the finish ---------------------------------------------------------------


def due_transition(race: Race, now: float) -> Literal["start", "finish"] | None:
    """Which transition is due now: ``start`` once a countdown reaches ``starts_at``,
    ``finish`` once a running race reaches ``ends_at`` or every player's game is over."""
    if race.state is RaceState.COUNTDOWN and race.starts_at is not None and now >= race.starts_at:
        return "start"
    if race.state is RaceState.RUNNING:
        if race.ends_at is not None and now >= race.ends_at:
            return "finish"
        if all(e.status in TERMINAL for e in race.players.values()):
            return "finish"
    return None


def start(race: Race, now: float) -> RaceChange:
    """Deal: every player gets ``Board.deal(variant, seed)`` at ``starts_at`` (the same
    server time for all, whichever node performs it); with live boards, spectators get
    each player's view of it. WrongState unless the countdown is over."""
    if due_transition(race, now) != "start":
        raise WrongState(f"race {race.code} is {race.state.value}, not due to start")
    assert race.starts_at is not None
    board = Board.deal(race.options.variant, race.seed)
    position = board.text()
    started_at = race.starts_at
    ends_at = round(started_at + race.options.time_limit, 3)
    players: dict[str, Entry] = {}
    games: list[Game] = []
    for pid, entry in race.players.items():
        game = Game(
            player=pid,
            position=position,
            deals_left=board.deals_left(),
            runs=runs_completed(board),
            score=board.classic_score(0),
            down0=sum(board.down),
        )
        game.status = _status(board, race.options, game.status)
        games.append(game)
        players[pid] = _entry_of(entry, game)
    new = replace(
        race,
        state=RaceState.RUNNING,
        players=players,
        started_at=started_at,
        ends_at=ends_at,
    )
    event = Started(
        race=race.code,
        version=0,
        started_at=started_at,
        ends_at=ends_at,
        commitment=race.commitment,
    )
    events: list[tuple[Audience, object]] = [(ALL, event)]
    if race.options.live_boards:
        view = board.view_text()
        events += [
            (SPECTATORS, BoardEvent(race=race.code, version=0, player=pid, view=view))
            for pid in players
        ]
    return RaceChange(
        base=race.version,
        race=new,
        players=list(players.values()),
        games=games,
        events=events,
    )


def finish(
    race: Race,
    games: dict[str, Game],
    replays: dict[str, list[str]],
    now: float,
    hints: dict[str, int] | None = None,
) -> RaceChange:
    """End a running race that is due to end: every game not over is out of time
    (``timeout``); results ranked by :func:`rank`; the ``finished`` event reveals seed,
    salt, every player's actions and final full position (for a daily race: not before
    its day is over, see :func:`revealed`). ``hints`` are the hints each player asked for.
    WrongState when not due."""
    if due_transition(race, now) != "finish":
        raise WrongState(f"race {race.code} is {race.state.value}, not due to finish")
    players: dict[str, Entry] = {}
    changed: list[Game] = []
    for pid, entry in race.players.items():
        game = games[pid]
        if game.status not in TERMINAL:
            game = replace(game, status=Status.TIMEOUT, time=float(race.options.time_limit))
            changed.append(game)
        players[pid] = _entry_of(entry, game)
        if hints and hints.get(pid):
            players[pid] = replace(players[pid], hints=hints[pid])
    results = rank(players.values())
    final = Final(
        results=results,
        replays={pid: list(replays.get(pid, [])) for pid in players},
        boards={pid: games[pid].position for pid in players},
    )
    new = replace(race, state=RaceState.FINISHED, players=players, final=final)
    public = revealed(new, now)
    event = Finished(
        race=race.code,
        version=0,
        results=results,
        seed=race.seed if public else None,
        salt=race.salt if public else None,
        commitment=race.commitment,
        replays=final.replays if public else None,
        boards=final.boards if public else None,
    )
    return RaceChange(
        base=race.version,
        race=new,
        players=list(players.values()),
        games=changed,
        events=[(ALL, event)],
        finished=True,
    )


def rank(entries: Iterable[Entry]) -> list[Result]:
    """The ranking: players who won first, by time; then by runs completed (more first),
    then by score (higher first). Equal keys share a rank (1, 2, 2, 4); among equals, join
    order."""

    def key(e: Entry) -> tuple[int, float, int, int]:
        won = e.status == Status.WON
        return (0 if won else 1, (e.time or 0.0) if won else 0.0, -e.runs, -e.score)

    ordered = sorted(entries, key=lambda e: (key(e), e.order))
    results: list[Result] = []
    previous: tuple[int, float, int, int] | None = None
    rank_now = 0
    for i, e in enumerate(ordered, start=1):
        k = key(e)
        if k != previous:
            rank_now = i
            previous = k
        results.append(
            Result(
                rank=rank_now,
                player=e.player,
                name=e.name,
                status=e.status,
                time=e.time if e.status == Status.WON else None,
                runs=e.runs,
                moves=e.moves,
                score=e.score,
                hints=e.hints,
            )
        )
    return results


# -- actions --------------------------------------------------------------------------------


def effective_moves(actions: Sequence[str]) -> list[str]:
    """The moves that stand after the undos in ``actions`` (``resign`` ends nothing here)."""
    stack: list[str] = []
    for action in actions:
        if action == "undo":
            if stack:
                stack.pop()
        elif action != "resign":
            stack.append(action)
    return stack


def replay(variant: str, seed: str, actions: Sequence[str]) -> Board:
    """The board after ``actions`` from the seeded deal, with its undo stack (each move
    pushed with the engine's checks; ``undo`` is the engine's pop)."""
    board = Board.deal(variant, seed)
    for action in actions:
        if action == "undo":
            board.pop()
        elif action != "resign":
            board.push(Move.from_text(action))
    return board


def apply_action(
    race: Race,
    game: Game,
    kind: ActionKind,
    *,
    move: str = "",
    actions: Sequence[str] = (),
    now: float,
    board: Board | None = None,
) -> ActionOutcome:
    """Apply a player's next action (number ``game.seq + 1``) with the engine.

    ``kind`` is ``move`` (a move or ``+`` in ``move``), ``undo`` (``actions`` must be the
    player's actions so far), ``resign``, or ``leave`` (a resign that marks the player
    ``left``). Raises GameOver when the race or the player's game is over or the time is
    up, WrongState before the start, MalformedMove, IllegalMove, UndoNotAllowed; nothing
    changes then. ``board``, when given, is ``game.position`` already parsed (a ``move``
    is pushed onto it, so it must not be used again unless the action is committed); the
    outcome's ``board`` is the position after the action.
    """
    if race.state is RaceState.FINISHED:
        raise GameOver(f"race {race.code} is over")
    if race.state is not RaceState.RUNNING:
        raise WrongState(f"race {race.code} is {race.state.value}")
    if game.status in TERMINAL:
        raise GameOver(f"your game is over ({game.status})")
    if race.ends_at is not None and now >= race.ends_at:
        raise GameOver("the time limit is reached")
    options = race.options
    status = Status.PLAYING
    if kind == "move":
        try:
            parsed = Move.from_text(move)
        except InvalidMoveError as e:
            raise MalformedMove(str(e)) from None
        if board is None:
            board = Board.from_text(game.position)
        try:
            board.push(parsed)
        except IllegalMoveError as e:
            raise IllegalMove(str(e)) from None
        action = parsed.text()
        moves = game.moves + 1
    elif kind == "undo":
        if not options.undo:
            raise UndoNotAllowed("this race does not allow undo")
        stack = effective_moves(actions)
        if not stack:
            raise UndoNotAllowed("there is nothing to undo")
        board = replay(options.variant, race.seed, stack)
        board.pop()
        action = "undo"
        moves = game.moves + 1
    else:
        board = Board.from_text(game.position)
        action = "resign"
        moves = game.moves
        status = Status.LEFT if kind == "leave" else Status.RESIGNED
    if status == Status.PLAYING:
        status = _status(board, options, status)
    seq = game.seq + 1
    elapsed = round(now - (race.started_at or now), 3)
    position, view = board.texts()
    new = Game(
        player=game.player,
        seq=seq,
        position=position,
        status=status,
        moves=moves,
        turned_up=game.down0 - sum(board.down),
        runs=runs_completed(board),
        deals_left=board.deals_left(),
        score=board.classic_score(moves),
        time=elapsed if status in TERMINAL else None,
        down0=game.down0,
    )
    entry = _entry_of(race.players[game.player], new)
    ack = Ack(
        code=race.code,
        seq=seq,
        move=action,
        view=view,
        status=status,
        moves=moves,
        score=new.score,
    )
    events: list[tuple[Audience, object]] = [
        (ALL, Progress(race=race.code, version=0, player=entry.info()))
    ]
    if options.live_boards:
        events.append(
            (SPECTATORS, BoardEvent(race=race.code, version=0, player=game.player, view=ack.view))
        )
    return ActionOutcome(
        game=new,
        entry=entry,
        action=action,
        ack=ack,
        events=events,
        board=board,
        stored_events=[(audience, event_data(event)) for audience, event in events],
        ack_frame=encode(ack),
    )


def runs_completed(board: Board) -> int:
    """Runs completed: those in the foundation, and with ``keep`` the complete runs at
    column ends (as the classic score counts them)."""
    runs = len(board.foundation)
    complete = getattr(board.variant, "complete_runs_at_ends", None)
    if board.variant.keep and complete is not None:
        runs += int(complete(board))
    return runs


def _status(board: Board, options: RaceOptions, status: str) -> str:
    if board.is_won():
        return Status.WON
    if not options.undo and board.is_stuck():
        return Status.STUCK
    return status


def _entry_of(entry: Entry, game: Game) -> Entry:
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
    )


# -- snapshots ------------------------------------------------------------------------------


def race_info(
    race: Race, *, online: Iterable[str] = (), spectators: int = 0, now: float | None = None
) -> RaceInfo:
    """The race as everyone may see it: no seed or salt (nor results and replays) before the
    finish (for a daily race, before its day is over at ``now``). ``online`` are the players
    connected to it now."""
    connected = set(online)
    final = race.final if race.state is RaceState.FINISHED else None
    public = revealed(race, now)
    return RaceInfo(
        code=race.code,
        variant=race.options.variant,
        state=race.state.value,
        version=race.version,
        creator=race.creator,
        max_players=race.options.max_players,
        time_limit=race.options.time_limit,
        undo=race.options.undo,
        live_boards=race.options.live_boards,
        countdown=race.options.countdown,
        players=[e.info(connected=e.player in connected) for e in race.players.values()],
        spectators=spectators,
        commitment=race.commitment or None,
        starts_at=race.starts_at,
        ends_at=race.ends_at,
        results=final.results if final else None,
        seed=race.seed if final and public else None,
        salt=race.salt if final and public else None,
        replays=final.replays if final and public else None,
        winnable=race.options.winnable,
        hints=race.options.hints,
        preparing=race.preparing,
        daily=race.options.daily or None,
    )


def count_hint(race: Race, player: str, count: int) -> RaceChange | None:
    """The change that shows everyone a player's hints asked for (``count``, as counted
    apart from the race), or None unless the race runs with that player in it."""
    entry = race.players.get(player)
    if entry is None or race.state is not RaceState.RUNNING:
        return None
    entry = replace(entry, hints=max(count, entry.hints))
    return RaceChange(
        base=race.version,
        race=race,
        meta=False,
        players=[entry],
        events=[(ALL, Progress(race=race.code, version=0, player=entry.info()))],
    )
