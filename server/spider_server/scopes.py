"""What an API token may do: the scope each client message needs.

A connection that said hello with a personal API token (``a1.``) holds that token's
scopes; a session token, the page's cookie and a guest hold every scope (``None``). Each
message type needs one scope (:data:`SCOPE_OF`; ``join`` and ``leave`` need
``race:read`` as a spectator and ``race:play`` as a player), and ``bot:play`` (a bot
account's tokens only) stands for every one of them. A message whose scope the
connection lacks is refused with ``missing_scope`` before its handler runs: it changes
nothing and reads nothing.
"""

from __future__ import annotations

from collections.abc import Collection

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

from .errors import MissingScope

__all__ = ["BOT_PLAY", "RACE_CREATE", "RACE_PLAY", "RACE_READ", "SCOPES", "SCOPE_OF", "check"]

RACE_READ = "race:read"
RACE_PLAY = "race:play"
RACE_CREATE = "race:create"
BOT_PLAY = "bot:play"
SCOPES = (RACE_READ, RACE_PLAY, RACE_CREATE, BOT_PLAY)
"""Every scope a token may hold."""

SCOPE_OF: dict[type[object], str | None] = {
    Hello: None,
    Join: RACE_PLAY,  # RACE_READ as a spectator
    Leave: RACE_PLAY,  # RACE_READ for a race followed as a spectator
    Ready: RACE_PLAY,
    MoveAction: RACE_PLAY,
    Undo: RACE_PLAY,
    Resign: RACE_PLAY,
    Hint: RACE_PLAY,
    DailyRace: RACE_PLAY,
    QuickMatch: RACE_PLAY,
    CancelMatch: RACE_PLAY,
    CreateRace: RACE_CREATE,
    Rematch: RACE_CREATE,
    OpenRaces: RACE_READ,
    MyRaces: RACE_READ,
    Leaderboard: RACE_READ,
    Profile: RACE_READ,
    RatingChanges: RACE_READ,
    RatingLeaderboard: RACE_READ,
}
"""Message type -> the scope it needs (None: none, ``hello``)."""


def needed(message: object, *, spectating: Collection[str] = ()) -> str | None:
    """The scope ``message`` needs; ``spectating`` are the codes of the races the
    connection follows as a spectator (a ``leave`` of one needs ``race:read``). A message
    type missing from :data:`SCOPE_OF` needs ``bot:play`` (fails closed)."""
    if isinstance(message, Join) and message.role == "spectator":
        return RACE_READ
    if isinstance(message, Leave) and message.code in spectating:
        return RACE_READ
    return SCOPE_OF.get(type(message), BOT_PLAY)  # a message the table lacks: refused


def check(
    scopes: Collection[str] | None, message: object, *, spectating: Collection[str] = ()
) -> None:
    """Nothing when ``scopes`` (None: every one) allow ``message``; else
    :class:`~.errors.MissingScope` naming the scope it needs."""
    if scopes is None or BOT_PLAY in scopes:
        return
    scope = needed(message, spectating=spectating)
    if scope is not None and scope not in scopes:
        kind = getattr(message, "type", type(message).__name__)
        raise MissingScope(f"{kind} needs the scope {scope}, which this token lacks")
