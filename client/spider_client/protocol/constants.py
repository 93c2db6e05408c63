"""The protocol's version, the client frame's size limit, and every error code."""

from __future__ import annotations

from typing import Literal, TypeGuard, get_args

__all__ = [
    "PROTOCOL_VERSION",
    "MAX_CLIENT_FRAME",
    "ERROR_CODES",
    "Role",
    "RaceState",
    "PlayerStatus",
    "is_player_status",
]

PROTOCOL_VERSION = 1
MAX_CLIENT_FRAME = 4096
"""The largest frame, in bytes, that a server accepts from a client."""

Role = Literal["player", "spectator"]
"""A member's role in a race."""
RaceState = Literal["open", "countdown", "running", "finished"]
"""Where a race is in its life."""
PlayerStatus = Literal[
    "waiting", "playing", "won", "stuck", "resigned", "timeout", "left", "abandoned", "idle"
]
"""A player's status in a race (``left``, ``abandoned`` and ``idle`` count as resigned)."""


def is_player_status(text: str | None) -> TypeGuard[PlayerStatus]:
    """Whether ``text`` is one of the statuses this protocol knows."""
    return text in get_args(PlayerStatus)


ERROR_CODES: dict[str, str] = {
    "bad_frame": "the frame is not a msgpack map with a known 'type'",
    "invalid": "a field is missing, of the wrong type, or out of range",
    "protocol": "the first message must be hello with a supported protocol version",
    "bad_token": "the session token is forged, altered or from another deployment",
    "missing_scope": "the API token the connection said hello with lacks this message's scope",
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
    "too_many_actions": "the game has the most actions a game may have; only resign is taken",
    "humans_only": "the race is for humans only and this player said it is a bot",
    "account_required": "only players signed in to an account may do this (a rated race)",
    "other_kind": "a rated race is between players of one kind: bots with bots, people with people",
    "rate_limited": "too many messages; keep flooding and the connection is closed",
    "unavailable": "the service's storage is not answering; try again shortly",
    "internal": "the server failed; nothing was changed",
}
"""Every error code, with what it means."""
