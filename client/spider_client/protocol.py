"""The wire protocol of spider-race, shared by the server and every client.

Every frame is one msgpack map with a ``type`` field; every message type is a stdlib
dataclass below whose ``type`` field has its name as default. The client encodes and
decodes with :func:`encode` / :func:`decode` (no pydantic); the server validates each
incoming frame with one pydantic discriminated union over the *client* messages, in strict
mode. The protocol document (``docs/protocol.md``) shows each message with an example.

Conventions:

- ``req`` — a request id chosen by the client; the reply (``joined``, ``done`` or
  ``error``) carries it back.
- ``seq`` — a player's own action number in one race, 1, 2, 3, …; the server applies
  action ``seq`` only when the player's last applied action is ``seq - 1``, answers an
  action it already applied with the same ack again (``duplicate``), so a client resends
  whatever was not acked after a reconnect and each action is applied exactly once.
- ``version`` — the race's event version; events of one race are numbered 1, 2, 3, … in
  the order every node delivers them. A client that rejoins says the last version it saw
  (``since``) and is caught up.
- Moves and positions are text in the spec's notation; a player's ``view`` is their
  position with every face-down and stock card unknown. No event carries a card identity
  while a race runs, except a player's own view sent to that player and, for races created
  with ``live_boards``, the players' views sent to spectators.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Literal

import msgpack

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_CLIENT_FRAME",
    "ERROR_CODES",
    "ClientMessage",
    "ServerMessage",
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
    "Welcome",
    "Joined",
    "Done",
    "Ack",
    "Error",
    "HintReply",
    "LeaderboardEntry",
    "LeaderboardReply",
    "PlayerInfo",
    "RaceInfo",
    "PlayerJoined",
    "PlayerLeft",
    "PlayerReady",
    "Countdown",
    "Started",
    "Progress",
    "BoardShown",
    "Finished",
    "Prepared",
    "Result",
    "encode",
    "decode",
    "decode_event",
    "EVENT_TYPES",
    "CLIENT_TYPES",
    "SERVER_TYPES",
]

PROTOCOL_VERSION = 1
MAX_CLIENT_FRAME = 4096
"""The largest frame, in bytes, that a server accepts from a client."""

ERROR_CODES: dict[str, str] = {
    "bad_frame": "the frame is not a msgpack map with a known 'type'",
    "invalid": "a field is missing, of the wrong type, or out of range",
    "protocol": "the first message must be hello with a supported protocol version",
    "bad_token": "the session token is forged, altered or from another deployment",
    "not_found": "no race with that join code",
    "wrong_state": "the race is not in a state that allows this",
    "race_full": "the race has its maximum number of players",
    "too_many_races": "the player is in too many races at once",
    "not_a_player": "only a player of this race may do this",
    "finished": "the player's game is over (won, stuck, resigned or out of time)",
    "out_of_order": "seq is not the player's next action number",
    "malformed_move": "the move is not in the spec's notation",
    "illegal_move": "the move is not legal in the player's position",
    "undo_not_allowed": "the race does not allow undo, or there is nothing to undo",
    "hints_not_allowed": "the race does not allow hints",
    "rate_limited": "too many messages; keep flooding and the connection is closed",
    "unavailable": "the service's storage is not answering; try again shortly",
    "internal": "the server failed; nothing was changed",
}
"""Every error code, with what it means."""


# -- client -> server -----------------------------------------------------------------------


@dataclass
class Hello:
    """The first message on a connection. With ``token`` it resumes that player."""

    protocol: int = PROTOCOL_VERSION
    name: str | None = None
    token: str | None = None
    together: bool = False
    """The client takes a frame holding several race events (a msgpack array): the
    server then sends a player's held progress together, in one frame."""
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
    type: Literal["create_race"] = "create_race"


@dataclass
class Join:
    """Join a race by code (reply: ``joined``). Joining again resumes: ``since`` is the last
    event version seen, and the reply carries the events after it."""

    req: int
    code: str
    role: Literal["player", "spectator"] = "player"
    since: int | None = None
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


@dataclass
class Leaderboard:
    """The leaderboard of a variant's daily deal (reply: ``leaderboard_reply``); ``day``
    is ``YYYY-MM-DD`` (UTC), by default today."""

    req: int
    variant: str = "spider4"
    day: str | None = None
    type: Literal["leaderboard"] = "leaderboard"


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
)


# -- server -> client: replies --------------------------------------------------------------


@dataclass
class Welcome:
    """Reply to ``hello``: who the connection speaks for. Keep ``token`` to resume."""

    player: str
    name: str
    token: str
    node: str
    server_time: float
    protocol: int = PROTOCOL_VERSION
    type: Literal["welcome"] = "welcome"


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


@dataclass
class Joined:
    """Reply to ``join`` (and ``create_race``): the race now, and for a player of a running
    race their view and their last applied ``seq``; ``events`` are those after ``since``
    (empty when a snapshot was sent instead)."""

    req: int
    role: str
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
    """Reply to an applied action: the player's new view and progress."""

    code: str
    seq: int
    move: str
    view: str
    status: str
    moves: int
    score: int
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
    type: Literal["error"] = "error"


@dataclass
class HintReply:
    """Reply to ``hint``: the first move of a winning line from the player's position when
    the solver finds one within its budget, otherwise the move players would rank first;
    None when there is no legal move."""

    req: int
    move: str | None
    type: Literal["hint_reply"] = "hint_reply"


@dataclass
class LeaderboardEntry:
    rank: int
    player: str
    name: str
    time: float
    moves: int


@dataclass
class LeaderboardReply:
    """Reply to ``leaderboard``: the day's winners, by time, then moves."""

    req: int
    variant: str
    day: str
    entries: list[LeaderboardEntry] = field(default_factory=list)
    type: Literal["leaderboard_reply"] = "leaderboard_reply"


# -- server -> client: race events (each has the race's code and its version) ---------------


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
    SHA-256 of salt and seed, revealed in ``Finished``."""

    race: str
    version: int
    started_at: float
    ends_at: float
    commitment: str
    type: Literal["started"] = "started"


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


@dataclass
class Prepared:
    """A ``winnable`` race's proven deal is chosen (still secret): ``commitment`` is set,
    and the countdown starts once everyone is ready."""

    race: str
    version: int
    commitment: str
    type: Literal["prepared"] = "prepared"


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
)
ServerMessage = Welcome | Joined | Done | Ack | Error | HintReply | LeaderboardReply | RaceEvent


def _type_name(cls: type) -> str:
    """The ``type`` field's default of a message dataclass."""
    return str({f.name: f.default for f in fields(cls)}["type"])


CLIENT_TYPES: dict[str, type] = {
    _type_name(cls): cls
    for cls in (
        Hello,
        CreateRace,
        Join,
        Leave,
        Ready,
        MoveAction,
        Undo,
        Resign,
        Hint,
        DailyRace,
        Leaderboard,
    )
}
EVENT_CLASSES: tuple[type, ...] = (
    PlayerJoined,
    PlayerLeft,
    PlayerReady,
    Countdown,
    Started,
    Progress,
    BoardShown,
    Finished,
    Prepared,
)
"""The race events (the members of :data:`RaceEvent`)."""
EVENT_TYPES: dict[str, type] = {_type_name(cls): cls for cls in EVENT_CLASSES}
SERVER_TYPES: dict[str, type] = {
    _type_name(cls): cls
    for cls in (
        Welcome,
        Joined,
        Done,
        Ack,
        Error,
        HintReply,
        LeaderboardReply,
        *EVENT_CLASSES,
    )
}


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_map(value: Any) -> dict[str, Any]:
    """A dataclass's fields as a map, one level deep, not to be changed: msgpack's
    ``default`` when packing messages (it packs the values, and calls this again for a
    dataclass among them)."""
    names = _FIELD_NAMES.get(value.__class__)
    if names is None:
        if not is_dataclass(value) or isinstance(value, type):
            raise TypeError(f"cannot encode {value!r}")
        names = _FIELD_NAMES[value.__class__] = tuple(f.name for f in fields(value))
    attrs: dict[str, Any] = value.__dict__
    if len(attrs) == len(names):  # the fields, set in order by __init__ (the usual case)
        return attrs
    return {name: getattr(value, name) for name in names}


def fields_of(value: Any) -> dict[str, Any]:
    """A dataclass's fields as a new map, one level deep (nested dataclasses are left as
    they are: :func:`pack` packs them)."""
    return dict(_field_map(value))


def pack(value: Any) -> bytes:
    """``value`` as msgpack, dataclasses as maps of their fields (what
    :func:`dataclasses.asdict` gives, without its deep copies)."""
    data: bytes = msgpack.packb(value, default=_field_map, use_bin_type=True)
    return data


def encode(message: object) -> bytes:
    """One frame: the message's fields as a msgpack map."""
    return pack(message)


def decode_event(data: dict[str, Any]) -> Any:
    """A race event given as a map (as in ``Joined.events``) as its dataclass; ValueError
    when it is not a known event."""
    if not isinstance(data, dict) or data.get("type") not in EVENT_TYPES:
        raise ValueError("not a known event")
    return _build(EVENT_TYPES[data["type"]], data)


def decode(frame: bytes, types: dict[str, type] = SERVER_TYPES) -> Any:
    """Decode a frame into the dataclass its ``type`` names (nested info dataclasses
    included). ValueError for anything else. For clients: trusts the server's shapes."""
    return decode_map(msgpack.unpackb(frame, raw=False), types)


def decode_all(frame: bytes, types: dict[str, type] = SERVER_TYPES) -> list[Any]:
    """The messages of a frame from the server: one message (a map), or several race
    events sent together (an array of maps, in version order). ValueError when a single
    message is not known; in an array, an event this client does not know is left out."""
    data = msgpack.unpackb(frame, raw=False)
    if not isinstance(data, list):
        return [decode_map(data, types)]
    # events sent together: one this client does not know is left out, not the others
    return [
        _build(types[item["type"]], item)
        for item in data
        if isinstance(item, dict) and item.get("type") in types
    ]


def decode_map(data: Any, types: dict[str, type] = SERVER_TYPES) -> Any:
    """A message given as a map, as its dataclass; ValueError when it is not known."""
    if not isinstance(data, dict) or data.get("type") not in types:
        raise ValueError("not a known message")
    return _build(types[data["type"]], data)


_NESTED: dict[str, type] = {"race": RaceInfo, "player": PlayerInfo}


_BUILD_NAMES: dict[type, frozenset[str]] = {}


def _build(cls: type, data: dict[str, Any]) -> Any:
    names = _BUILD_NAMES.get(cls)
    if names is None:
        names = _BUILD_NAMES[cls] = frozenset(f.name for f in fields(cls))
    # every field known (the usual case): a copy; else the fields this client knows
    kwargs = dict(data) if names.issuperset(data) else {k: v for k, v in data.items() if k in names}
    if cls is RaceInfo:
        kwargs["players"] = [PlayerInfo(**p) for p in kwargs.get("players", [])]
        if kwargs.get("results") is not None:
            kwargs["results"] = [Result(**r) for r in kwargs["results"]]
    elif cls is Finished:
        kwargs["results"] = [Result(**r) for r in kwargs["results"]]
    elif cls in (PlayerJoined, Progress):
        kwargs["player"] = PlayerInfo(**kwargs["player"])
    elif cls is Joined:
        kwargs["race"] = _build(RaceInfo, kwargs["race"])
    elif cls is LeaderboardReply:
        kwargs["entries"] = [LeaderboardEntry(**e) for e in kwargs.get("entries", [])]
    return cls(**kwargs)
