"""The client's errors: one root, a class per server error code.

Every error this package raises is a :class:`SpiderClientError`. An ``error`` message from
the server that answers one of the client's requests or actions is raised to the caller who
made it as the :class:`ServerError` subclass of its code (:func:`error_from_message`); the
message itself is kept on the exception. The tree::

    SpiderClientError
    ├── ConnectFailed            no server of the URL list answered (first connect)
    ├── ConnectionLost           the connection dropped and could not be resumed
    ├── RequestInterrupted       the connection dropped while a non-repeatable request
    │                            (create_race) was in flight: it may or may not have happened
    ├── NotInRace                an action before joining a race, or as a spectator
    ├── UnsupportedWebsockets    the installed websockets lacks what the client relies on
    └── ServerError              the server answered with an error (``.code``, ``.message``)
        ├── BadRequest           bad_frame, invalid, protocol
        │   └── MalformedMove    malformed_move
        ├── BadToken             bad_token
        ├── MissingScope         missing_scope: the API token lacks the message's scope
        ├── NotFound             not_found
        ├── WrongState           wrong_state
        │   └── GameOver         finished: the player's game is over
        ├── RaceFull             race_full
        ├── TooManyRaces         too_many_races
        ├── NotAPlayer           not_a_player
        ├── OutOfOrder           out_of_order
        ├── IllegalMove          illegal_move
        ├── UndoNotAllowed       undo_not_allowed
        ├── HintsNotAllowed      hints_not_allowed
        ├── TooManyActions       too_many_actions
        ├── HumansOnly           humans_only: a bot in a race for humans only
        ├── AccountRequired      account_required: a guest in a rated race
        ├── OtherKind            other_kind: a bot in people's rated race, or the reverse
        ├── RateLimited          rate_limited
        ├── Unavailable          unavailable: storage not answering, try again shortly
        └── InternalError        internal
"""

from __future__ import annotations

from .protocol import Error

__all__ = [
    "SpiderClientError",
    "ConnectFailed",
    "ConnectionLost",
    "RequestInterrupted",
    "NotInRace",
    "UnsupportedWebsockets",
    "ServerError",
    "BadRequest",
    "MalformedMove",
    "BadToken",
    "MissingScope",
    "NotFound",
    "WrongState",
    "GameOver",
    "RaceFull",
    "TooManyRaces",
    "NotAPlayer",
    "OutOfOrder",
    "IllegalMove",
    "UndoNotAllowed",
    "HintsNotAllowed",
    "HumansOnly",
    "AccountRequired",
    "OtherKind",
    "RateLimited",
    "TooManyActions",
    "Unavailable",
    "InternalError",
    "ERROR_CLASSES",
    "error_from_message",
]


class SpiderClientError(Exception):
    """Root of every error the client raises."""


class ConnectFailed(SpiderClientError):
    """No URL of the list accepted a connection and a ``hello`` (first connect only)."""


class ConnectionLost(SpiderClientError):
    """The connection dropped and reconnecting gave up (or the client was closed); every
    request and action still waiting fails with this."""


class RequestInterrupted(SpiderClientError):
    """The connection dropped while a request that cannot be safely repeated was in flight
    (``create_race``): whether it happened is unknown."""


class NotInRace(SpiderClientError):
    """An operation that needs a race (as a player, for actions) before joining one."""


class UnsupportedWebsockets(SpiderClientError):
    """The installed websockets lacks an attribute the client writes frames through (raised
    when ``spider_client`` is imported or a connection opens, with the versions supported:
    :data:`spider_client._wire.SUPPORTED_WEBSOCKETS`)."""


class ServerError(SpiderClientError):
    """The server answered with an ``error`` message. ``code`` is one of
    :data:`~spider_client.protocol.ERROR_CODES`; ``error`` is the message itself."""

    code: str = ""

    def __init__(self, error: Error) -> None:
        super().__init__(f"{error.error}: {error.message}")
        self.error = error
        self.code = error.error
        self.message = error.message


class BadRequest(ServerError):
    """The server could not take the frame: bad_frame, invalid or protocol."""


class MalformedMove(BadRequest):
    """The move is not in the spec's notation."""


class BadToken(ServerError):
    """The session token is forged, altered or from another deployment."""


class MissingScope(ServerError):
    """The connection said hello with an API token that lacks the scope this message
    needs (docs/protocol.md, *API tokens*)."""


class NotFound(ServerError):
    """No race with that join code."""


class WrongState(ServerError):
    """The race is not in a state that allows this (not started yet, already over, …)."""


class GameOver(WrongState):
    """The player's game is over: won, stuck, resigned or out of time."""


class RaceFull(ServerError):
    """The race has its maximum number of players."""


class TooManyRaces(ServerError):
    """The player is in too many races at once: ``races`` are the codes of those that
    count (waiting, or running with the player's game not over)."""

    @property
    def races(self) -> list[str]:
        return list(self.error.races or [])


class NotAPlayer(ServerError):
    """Only a player of the race may do this."""


class OutOfOrder(ServerError):
    """The action's seq is not the player's next action number."""


class IllegalMove(ServerError):
    """The move is not legal in the player's position."""


class UndoNotAllowed(ServerError):
    """The race does not allow undo, or there is nothing to undo."""


class HintsNotAllowed(ServerError):
    """The race does not allow hints."""


class TooManyActions(ServerError):
    """The game has the most actions a game may have (only a resign is taken)."""


class HumansOnly(ServerError):
    """The race is for humans only, and this client said it is a bot."""


class AccountRequired(ServerError):
    """Only a player signed in to an account may do this: race a rated race, queue for
    a rated quick match (a guest may watch, and race casual races)."""


class OtherKind(ServerError):
    """A rated race is between players of one kind: a bot joining people's rated race,
    or a person joining bots'."""


class RateLimited(ServerError):
    """Too many messages; the server closes connections that keep flooding."""

    retry_after: float | None = None
    """For a refused ``hello``: the seconds the server's close (1013) said to wait before
    connecting again; for a refused ``quick_match``: the seconds before the player may
    queue again (the error's ``retry_after``); else None."""

    def __init__(self, error: Error) -> None:
        super().__init__(error)
        self.retry_after = error.retry_after


class Unavailable(ServerError):
    """The service's storage is not answering; nothing changed; try again shortly."""


class InternalError(ServerError):
    """The server failed; nothing was changed."""


ERROR_CLASSES: dict[str, type[ServerError]] = {
    "bad_frame": BadRequest,
    "invalid": BadRequest,
    "protocol": BadRequest,
    "bad_token": BadToken,
    "missing_scope": MissingScope,
    "not_found": NotFound,
    "wrong_state": WrongState,
    "race_full": RaceFull,
    "too_many_races": TooManyRaces,
    "not_a_player": NotAPlayer,
    "finished": GameOver,
    "out_of_order": OutOfOrder,
    "malformed_move": MalformedMove,
    "illegal_move": IllegalMove,
    "undo_not_allowed": UndoNotAllowed,
    "hints_not_allowed": HintsNotAllowed,
    "too_many_actions": TooManyActions,
    "humans_only": HumansOnly,
    "account_required": AccountRequired,
    "other_kind": OtherKind,
    "rate_limited": RateLimited,
    "unavailable": Unavailable,
    "internal": InternalError,
}
"""The exception class of every error code of the protocol."""


def error_from_message(error: Error) -> ServerError:
    """The exception for a server ``error`` message (a plain :class:`ServerError` for a code
    this client does not know)."""
    return ERROR_CLASSES.get(error.error, ServerError)(error)
