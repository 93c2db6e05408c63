"""One connection's side of the protocol, without sockets.

:class:`Session` (:mod:`.core`) is a connection's protocol state; the handlers of the
messages are functions of the session and the message, module by module (:mod:`.actions`,
:mod:`.races`, :mod:`.joining`, :mod:`.lists`, :mod:`.profile`, :mod:`.lobby`), and
:data:`HANDLERS` is the table from message type to handler, which every session
dispatches by. The transport hands a session frames and takes its frames (an
:class:`~.parts.Outbox`); everything else it reaches through its :class:`~.parts.Context`.
"""

from __future__ import annotations

from spider_client.protocol import (
    CancelMatch,
    CreateRace,
    DailyRace,
    Hello,
    Hint,
    Join,
    Leaderboard,
    Leave,
    MoveAction,
    MyRaces,
    OpenRaces,
    Profile,
    QuickMatch,
    RatingChanges,
    RatingLeaderboard,
    Ready,
    Rematch,
    Resign,
    Undo,
)

from . import actions, lists, lobby, profile, races
from .core import MAX_NAME, Handler, Session, State, display_name, race_code
from .parts import Context, Outbox

__all__ = [
    "HANDLERS",
    "MAX_NAME",
    "Context",
    "Outbox",
    "Session",
    "State",
    "display_name",
    "race_code",
]

HANDLERS: dict[type[object], Handler] = {
    MoveAction: actions.act,
    Undo: actions.act,
    Resign: actions.act,
    Hello: Session.hello,
    CreateRace: races.create_race,
    Join: races.join,
    Leave: races.leave,
    Ready: races.ready,
    Hint: races.hint,
    DailyRace: races.daily_race,
    Leaderboard: lists.leaderboard,
    MyRaces: lists.my_races,
    Profile: profile.profile,
    RatingChanges: profile.rating_changes,
    RatingLeaderboard: profile.rating_leaderboard,
    Rematch: profile.rematch,
    OpenRaces: lobby.open_races,
    QuickMatch: lobby.quick_match,
    CancelMatch: lobby.cancel_match,
}
"""Message type -> its handler, called with the session and the message."""

Session.handlers = HANDLERS
