"""Frames to messages and back: which ``type`` names which dataclass, and the msgpack codec.

A frame is one msgpack map (a message), or from the server an array of maps (race events
sent together). The client decodes with :func:`decode` / :func:`decode_all` and trusts the
server's shapes; the server validates the client's frames itself (with pydantic) and builds
its frames with :func:`pack`.
"""

from __future__ import annotations

from dataclasses import fields, is_dataclass
from typing import Any

import msgpack

from .client_messages import (
    CreateRace,
    DailyRace,
    Hello,
    Hint,
    Join,
    Leaderboard,
    Leave,
    MoveAction,
    MyRaces,
    Ready,
    Resign,
    Undo,
)
from .info import ParInfo, PlayerInfo, RaceInfo, Result
from .lobby import (
    CancelMatch,
    Matched,
    OpenRace,
    OpenRaceChanged,
    OpenRaceList,
    OpenRaces,
    Queued,
    QuickMatch,
)
from .players import (
    HistoryLine,
    LadderEntry,
    Profile,
    ProfileReply,
    RatingChange,
    RatingChanges,
    RatingChangesReply,
    RatingLeaderboard,
    RatingLeaderboardReply,
    Rematch,
    VariantStats,
)
from .race_events import (
    Away,
    Back,
    BoardShown,
    Countdown,
    Finished,
    MatchCancelled,
    Par,
    PlayerJoined,
    PlayerLeft,
    PlayerReady,
    Prepared,
    Progress,
    RaceEvent,
    RematchOffer,
    Started,
)
from .replies import (
    Ack,
    Done,
    Error,
    HintReply,
    Joined,
    LeaderboardEntry,
    LeaderboardReply,
    MyRace,
    MyRacesReply,
    Welcome,
)

__all__ = [
    "ServerMessage",
    "CLIENT_TYPES",
    "EVENT_CLASSES",
    "EVENT_TYPES",
    "SERVER_TYPES",
    "fields_of",
    "pack",
    "encode",
    "decode_event",
    "decode",
    "decode_all",
    "decode_map",
]

ServerMessage = (
    Welcome
    | Joined
    | Done
    | Ack
    | Error
    | HintReply
    | LeaderboardReply
    | MyRacesReply
    | ProfileReply
    | RatingChangesReply
    | RatingLeaderboardReply
    | RaceEvent
    | OpenRaceList
    | OpenRaceChanged
    | Queued
    | Matched
)


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
        MyRaces,
        Profile,
        RatingChanges,
        RatingLeaderboard,
        Rematch,
        OpenRaces,
        QuickMatch,
        CancelMatch,
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
    Away,
    Back,
    RematchOffer,
    Par,
    MatchCancelled,
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
        MyRacesReply,
        ProfileReply,
        RatingChangesReply,
        RatingLeaderboardReply,
        OpenRaceList,
        OpenRaceChanged,
        Queued,
        Matched,
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


_BUILD_NAMES: dict[type, frozenset[str]] = {}


def _build(cls: type, data: dict[str, Any]) -> Any:
    names = _BUILD_NAMES.get(cls)
    if names is None:
        names = _BUILD_NAMES[cls] = frozenset(f.name for f in fields(cls))
    # every field known (the usual case): a copy; else the fields this client knows
    kwargs = dict(data) if names.issuperset(data) else {k: v for k, v in data.items() if k in names}
    if cls is RaceInfo:
        kwargs["players"] = [_build(PlayerInfo, i) for i in kwargs.get("players", [])]
        if kwargs.get("results") is not None:
            kwargs["results"] = [_build(Result, r) for r in kwargs["results"]]
        if kwargs.get("par") is not None:
            kwargs["par"] = _build(ParInfo, kwargs["par"])
    elif cls is Finished:
        kwargs["results"] = [_build(Result, r) for r in kwargs["results"]]
    elif cls in (PlayerJoined, Progress):
        kwargs["player"] = _build(PlayerInfo, kwargs["player"])
    elif cls is Joined:
        kwargs["race"] = _build(RaceInfo, kwargs["race"])
    elif cls is OpenRaceList:
        kwargs["races"] = [OpenRace(**r) for r in kwargs.get("races", [])]
    elif cls is OpenRaceChanged and kwargs.get("race") is not None:
        kwargs["race"] = OpenRace(**kwargs["race"])
    elif cls is LeaderboardReply:
        kwargs["entries"] = [_build(LeaderboardEntry, e) for e in kwargs.get("entries", [])]
    elif cls is MyRacesReply:
        kwargs["races"] = [_build(MyRace, r) for r in kwargs.get("races", [])]
    elif cls is ProfileReply:
        kwargs["variants"] = [_build(VariantStats, v) for v in kwargs.get("variants", [])]
        kwargs["races"] = [_build(HistoryLine, r) for r in kwargs.get("races", [])]
    elif cls is RatingChangesReply:
        kwargs["changes"] = [_build(RatingChange, c) for c in kwargs.get("changes", [])]
    elif cls is RatingLeaderboardReply:
        kwargs["entries"] = [_build(LadderEntry, e) for e in kwargs.get("entries", [])]
        if kwargs.get("me") is not None:
            kwargs["me"] = _build(LadderEntry, kwargs["me"])
    return cls(**kwargs)
