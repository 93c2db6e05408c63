"""What a session stands on: the :class:`Outbox` its frames go to (the transport's
connection) and the :class:`Context` every session of a node shares, with the node's parts
the context names by what the session asks of them (:class:`Transitions`,
:class:`Spawner`, :class:`PresenceCheck`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..accounts import Accounts
from ..closing import Spawner
from ..fanout.changes import Changes
from ..fanout.hub import Hub
from ..limits import AddressLimits
from ..metrics import Metrics
from ..race import Limits, Race
from ..runners.archiver import Archiver
from ..runners.hints import Hints
from ..runners.lobby import Lobby
from ..runners.seeds import Seeds
from ..settings import Settings
from ..store import Store
from ..store.archive_races import FinishedRaces
from ..transport import EventFrame
from ..workers import SolverWorkers
from .snapshots import Snapshots

__all__ = ["Context", "Outbox", "PresenceCheck", "Spawner", "Transitions"]


class Outbox(Protocol):
    """Where a session's frames go (the transport's connection)."""

    together: bool

    def send(self, frame: bytes, wire: bytes | None = None) -> None:
        """Send one frame."""

    def send_ack(self, frame: bytes, about: tuple[str, str], upto: int) -> None:
        """Send an ack; the player's own progress held up to version ``upto`` is dropped."""

    def send_snapshot(self, code: str, frame: bytes) -> None:
        """Send race ``code``'s ``joined`` (a big one is :meth:`unread` until it left)."""

    def unread(self, code: str) -> bool:
        """Whether a big ``joined`` of race ``code`` sent here still waits for the reader."""

    def send_event(self, event: EventFrame) -> None:
        """Send a race event."""

    def send_progress(self, event: EventFrame) -> None:
        """Send a ``progress`` event (possibly held and sent with others)."""

    def drop_held(self, code: str) -> None:
        """Forget the progress held for a race."""

    def close_soon(self, code: int, reason: str) -> None:
        """Close after the frames queued; the session is told
        (:meth:`~.core.Session.closing`)."""


class Transitions(Protocol):
    """Whatever transition of a race is due, performed (the node's)."""

    async def advance(self, code: str) -> Race | None:
        """The race now, after whatever transition is due (start or finish); None when
        there is no such race."""


class PresenceCheck(Protocol):
    """Presence decisions (the node's :class:`~..runners.presence.Presence`)."""

    async def check(self, code: str, *, resumed: str | None = None) -> None:
        """Commit whatever presence decision is due in race ``code`` now; ``resumed``: a
        player who rejoins the race after losing a connection."""


@dataclass(kw_only=True)
class Context:
    """What every session of a node shares."""

    settings: Settings
    limits: Limits
    secret: bytes
    store: Store
    hub: Hub
    changes: Changes
    """Race changes committed and their events handed to the hub."""
    seeds: Seeds
    workers: SolverWorkers
    """The solver's worker processes (hints; the seed pool's proofs)."""
    metrics: Metrics
    clock: Callable[[], float]
    """The deployment's time."""
    transitions: Transitions
    """The races' transitions (the node's :class:`~..runners.transitions.Advancer`)."""
    spawner: Spawner
    """Background work (the node's :meth:`~..node.Node.spawn`)."""
    presence: PresenceCheck
    """Presence decisions (the node's :class:`~..runners.presence.Presence`)."""
    lobby: Lobby
    """The node's lobby: quick match, open races."""
    addresses: AddressLimits | None = field(default=None)
    """The node's limits per client address (None: none)."""
    hints: Hints | None = field(default=None)
    """The node's hints: prefetches and their cache (None: hints searched when asked)."""
    snapshots: Snapshots = field(default_factory=lambda: Snapshots(32 << 20))
    """Finished races' snapshots, encoded once (:mod:`.snapshots`)."""
    archiver: Archiver | None = field(default=None)
    """The records that last (:mod:`..runners.archiver`; None, or its ``archive`` None: the
    node keeps no archive)."""
    accounts: Accounts | None = field(default=None)
    """The accounts (:mod:`..accounts`; None: guests only)."""
    finished: FinishedRaces | None = field(default=None)
    """Where a race is read when it may be finished and gone from Redis: Redis, then the
    archive (:mod:`..store.archive_races`; None: Redis only)."""
