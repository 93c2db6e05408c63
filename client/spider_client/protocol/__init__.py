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

The modules: :mod:`~.constants` (version, frame limit, error codes),
:mod:`~.client_messages` (client to server), :mod:`~.replies` (the server's answers),
:mod:`~.race_events` (what everyone in a race is sent), :mod:`~.info` (the race, player
and result snapshots they carry), :mod:`~.players` (profiles, ratings, the rating ladders,
the rematch) and :mod:`~.codec` (type names and msgpack). Import the
names from here.
"""

from __future__ import annotations

from .client_messages import (
    ClientMessage,
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
from .codec import (
    CLIENT_TYPES,
    EVENT_CLASSES,
    EVENT_TYPES,
    SERVER_TYPES,
    ServerMessage,
    decode,
    decode_all,
    decode_event,
    decode_map,
    encode,
    fields_of,
    pack,
)
from .constants import (
    ERROR_CODES,
    MAX_CLIENT_FRAME,
    PROTOCOL_VERSION,
    PlayerStatus,
    RaceState,
    Role,
    is_player_status,
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
    "PROTOCOL_VERSION",
    "MAX_CLIENT_FRAME",
    "ERROR_CODES",
    "Role",
    "RaceState",
    "PlayerStatus",
    "is_player_status",
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
    "MyRaces",
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
    "ParInfo",
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
    "Away",
    "Back",
    "Par",
    "MatchCancelled",
    "Result",
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
    "RematchOffer",
    "OpenRaces",
    "OpenRace",
    "OpenRaceList",
    "OpenRaceChanged",
    "QuickMatch",
    "Queued",
    "CancelMatch",
    "Matched",
    "encode",
    "decode",
    "decode_event",
    "EVENT_TYPES",
    "CLIENT_TYPES",
    "SERVER_TYPES",
    "RaceEvent",
    "EVENT_CLASSES",
    "decode_all",
    "decode_map",
    "fields_of",
    "pack",
]
