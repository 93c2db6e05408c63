"""What :meth:`Client.events() <spider_client.Client.events>` yields.

The server's race events and replies are the protocol's dataclasses
(:class:`~spider_client.protocol.Progress`, :class:`~spider_client.protocol.Ack`, …); the
events below are the client's own, about its connection and its view. Every event has a
``type`` text, so a program may dispatch on either the class or ``event.type``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .protocol import Ack, Error, Matched, RaceEvent

__all__ = ["Disconnected", "Reconnected", "ViewChanged", "Event"]


@dataclass
class Disconnected:
    """The connection dropped. With ``reconnecting`` the client is trying the URLs again
    (a :class:`Reconnected` follows when it is back); without, it gave up and
    ``events()`` ends after this event."""

    code: int | None
    """The websocket close code (1006: dropped without a close frame; 1012: the server
    restarts), None when there was no connection."""
    reason: str
    reconnecting: bool
    type: Literal["disconnected"] = "disconnected"


@dataclass
class Reconnected:
    """The client is connected again, resumed as the same player and caught up with its
    race: ``since`` is the last event version it had seen, ``caught_up`` how many missed
    events followed (they were yielded before this event), ``resent`` the seq numbers of
    actions sent again because no ack had come (the server applies each once)."""

    url: str
    node: str
    attempts: int
    since: int | None = None
    caught_up: int = 0
    snapshot: bool = False
    """True when the server answered with a snapshot of the race instead of the events."""
    resent: list[int] = field(default_factory=list)
    type: Literal["reconnected"] = "reconnected"


@dataclass
class ViewChanged:
    """The player's view changed (an ack, the deal, a resume): ``view`` is its text,
    ``seq`` the player's last applied action number; ``client.view`` is already the new
    position."""

    view: str
    seq: int
    type: Literal["view"] = "view"


Event = RaceEvent | Ack | Error | Matched | Disconnected | Reconnected | ViewChanged
"""Everything :meth:`Client.events` may yield."""
