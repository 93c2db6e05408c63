"""The server's errors.

Every error the server raises on purpose derives from :class:`ServerError`. Errors that
answer a client's request carry the protocol's error code (``spider_client.protocol.
ERROR_CODES``) in ``code``; the connection turns them into an ``error`` frame and changes
nothing. The tree::

    ServerError(Exception)
    ├── RequestError                 a request refused; ``code`` is the wire error code
    │   ├── BadFrame                 bad_frame       not a msgpack map with a known type
    │   ├── InvalidMessage           invalid         missing field, wrong type, out of range
    │   ├── ProtocolViolation        protocol        hello first, with a supported version
    │   ├── BadToken                 bad_token       forged, altered or foreign token
    │   ├── MissingScope             missing_scope   the API token lacks the message's scope
    │   ├── RaceNotFound             not_found       no race with that code
    │   ├── WrongState               wrong_state     the race's state does not allow it
    │   ├── RaceFull                 race_full       the race has its maximum of players
    │   ├── TooManyRaces             too_many_races  the player is in too many races
    │   ├── NotAPlayer               not_a_player    only a player of the race may do it
    │   ├── GameOver                 finished        the player's game is over
    │   ├── OutOfOrder               out_of_order    seq is not the next action number
    │   ├── MalformedMove            malformed_move  not a move in the spec's notation
    │   ├── IllegalMove              illegal_move    not legal in the player's position
    │   ├── UndoNotAllowed           undo_not_allowed  no undo in this race, or nothing to undo
    │   ├── TooManyActions           too_many_actions  the game has its maximum of actions
    │   ├── HintsNotAllowed          hints_not_allowed  no hints in this race
    │   ├── HumansOnly               humans_only     a bot in a race for humans only
    │   ├── AccountRequired          account_required  a guest where only accounts race
    │   ├── OtherKind                other_kind      a rated race of the other kind (bots, people)
    │   ├── RateLimited              rate_limited    too many messages, or solver work over a quota
    │   └── Unavailable              unavailable     Redis is not answering
    ├── Conflict                     a check-and-set lost to another writer (retried inside)
    ├── ConfigError                  a setting that cannot be used
    ├── EmbeddedRedisError           the embedded redis-server could not start
    └── EmbeddedDatabaseError        the embedded PostgreSQL could not start
"""

from __future__ import annotations

from typing import ClassVar

__all__ = [
    "ArchiveError",
    "BadFrame",
    "BadToken",
    "ConfigError",
    "Conflict",
    "EmbeddedDatabaseError",
    "EmbeddedRedisError",
    "GameOver",
    "HumansOnly",
    "AccountRequired",
    "OtherKind",
    "IllegalMove",
    "InvalidMessage",
    "MissingScope",
    "MalformedMove",
    "NotAPlayer",
    "OutOfOrder",
    "ProtocolViolation",
    "RaceFull",
    "RaceNotFound",
    "RateLimited",
    "RequestError",
    "ServerError",
    "TooManyActions",
    "TooManyRaces",
    "Unavailable",
    "Contended",
    "UndoNotAllowed",
    "WrongState",
]


class ServerError(Exception):
    """Root of every error the server raises on purpose."""


class RequestError(ServerError):
    """A client's request that is refused; nothing was changed. ``code`` is the wire code."""

    code: ClassVar[str] = "internal"

    def __init__(self, message: str, *, req: int | None = None) -> None:
        super().__init__(message)
        self.req = req
        """The request id to answer with, when the request was too broken to read it."""


class BadFrame(RequestError):
    code = "bad_frame"


class InvalidMessage(RequestError):
    code = "invalid"


class ProtocolViolation(RequestError):
    code = "protocol"


class BadToken(RequestError):
    code = "bad_token"


class MissingScope(RequestError):
    code = "missing_scope"


class RaceNotFound(RequestError):
    code = "not_found"


class WrongState(RequestError):
    code = "wrong_state"


class RaceFull(RequestError):
    code = "race_full"


class TooManyRaces(RequestError):
    code = "too_many_races"

    def __init__(self, message: str, *, races: list[str] | None = None) -> None:
        super().__init__(message)
        self.races = races
        """The codes of the races that count towards the limit (the error's ``races``)."""


class NotAPlayer(RequestError):
    code = "not_a_player"


class GameOver(RequestError):
    code = "finished"


class OutOfOrder(RequestError):
    code = "out_of_order"


class MalformedMove(RequestError):
    code = "malformed_move"


class IllegalMove(RequestError):
    code = "illegal_move"


class UndoNotAllowed(RequestError):
    code = "undo_not_allowed"


class TooManyActions(RequestError):
    code = "too_many_actions"


class HintsNotAllowed(RequestError):
    code = "hints_not_allowed"


class HumansOnly(RequestError):
    code = "humans_only"


class AccountRequired(RequestError):
    code = "account_required"


class OtherKind(RequestError):
    code = "other_kind"


class RateLimited(RequestError):
    code = "rate_limited"


class Unavailable(RequestError):
    code = "unavailable"


class Contended(Unavailable):
    """A check-and-set lost every try (:func:`~.store.check_and_set`)."""


class Conflict(ServerError):
    """A check-and-set found the state changed since it was read; the caller reloads."""


class ConfigError(ServerError):
    """A setting that cannot be used."""


class ArchiveError(ServerError):
    """The database cannot be used by this node (its schema is newer than the node knows)."""


class EmbeddedRedisError(ServerError):
    """The embedded redis-server could not be found or did not start."""


class EmbeddedDatabaseError(ServerError):
    """The embedded PostgreSQL could not be found, made or started."""
