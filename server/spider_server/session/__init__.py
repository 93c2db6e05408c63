"""One connection's side of the protocol, without sockets.

:class:`Session` joins the handlers (:mod:`.races`, :mod:`.actions`, :mod:`.profile`) to the protocol state
of :mod:`.core`; :data:`HANDLERS` is the table from message type to handler. The
transport hands it frames and takes its frames (an :class:`~.core.Outbox`); everything
else it reaches through its :class:`~.core.Context`.
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

from .actions import ActionHandlers
from .core import MAX_NAME, Context, Handler, Outbox, State, display_name, race_code
from .lists import ListHandlers
from .lobby import LobbyHandlers
from .profile import ProfileHandlers
from .races import RaceHandlers

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


class Session(ActionHandlers, RaceHandlers, ListHandlers, ProfileHandlers, LobbyHandlers):
    """One connection: says hello, then joins races and acts in them (and finds them in
    the lobby)."""


HANDLERS: dict[type, Handler] = {
    MoveAction: Session.act,
    Undo: Session.act,
    Resign: Session.act,
    Hello: Session.hello,
    CreateRace: Session.create_race,
    Join: Session.join,
    Leave: Session.leave,
    Ready: Session.ready,
    Hint: Session.hint,
    DailyRace: Session.daily_race,
    Leaderboard: Session.leaderboard,
    MyRaces: Session.my_races,
    Profile: Session.profile,
    RatingChanges: Session.rating_changes,
    RatingLeaderboard: Session.rating_leaderboard,
    Rematch: Session.rematch,
    OpenRaces: Session.open_races,
    QuickMatch: Session.quick_match,
    CancelMatch: Session.cancel_match,
}
"""Message type -> the session's handler of it."""

Session.handlers = HANDLERS
