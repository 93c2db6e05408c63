"""What one node follows of a race: a :class:`RaceWatch` per race some connection here
watches, and a :class:`Subscription` per (connection, race).

A subscription receives events strictly in version order, each once: an event further
ahead than the next one makes it catch up from the stream first (events arriving
meanwhile are held and delivered after, in order). ``board`` events (audience
``spectators``) are counted as delivered to players but not sent to them, so a player's
versions may have gaps where a spectator's have none.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import Unavailable
from ..race import (
    SPECTATORS,
    TERMINAL,
    Entry,
    Race,
    RaceOptions,
    RaceState,
    Status,
    next_idle,
)
from ..transport import EventFrame

__all__ = ["EventSource", "RaceWatch", "Subscriber", "Subscription"]

log = logging.getLogger(__name__)


class EventSource(Protocol):
    """Where a subscription catches up from (the hub)."""

    async def fetch(self, code: str, after: int) -> list[EventFrame] | None:
        """The race's events after version ``after``, from the stream; None if trimmed."""


class Subscriber(Protocol):
    """The connection side of a subscription."""

    def send_event(self, event: EventFrame) -> None:
        """Send a race event."""

    def send_progress(self, event: EventFrame) -> None:
        """Send a ``progress`` event to a player (who may get several in one frame)."""


class Subscription:
    """One connection watching one race, as ``role`` (player or spectator). A player's
    ``on_started`` is called with the race's code once its ``started`` event is delivered
    (the session sends the player their view of the deal); ``on_cancelled`` once a
    ``match_cancelled`` is (the quick match is called off: the session stops following
    it)."""

    def __init__(
        self,
        hub: EventSource,
        conn: Subscriber,
        code: str,
        role: str,
        delivered: int,
        *,
        on_started: Callable[[str], None] | None = None,
        on_cancelled: Callable[[str], None] | None = None,
    ) -> None:
        self.hub = hub
        self.conn = conn
        self.code = code
        self.role = role
        self.delivered = delivered
        self.on_started = on_started
        self.on_cancelled = on_cancelled
        self._pending: list[EventFrame] = []
        self._catching_up: asyncio.Task[None] | None = None

    def offer(self, event: EventFrame) -> None:
        """Deliver ``event`` if it is the next; hold it and catch up if it is further."""
        if self._catching_up is not None:
            self._pending.append(event)
        elif event.version <= self.delivered:
            return
        elif event.version == self.delivered + 1:
            self._deliver(event)
        else:
            self._pending.append(event)
            self.catch_up()

    def catch_up(self) -> None:
        """Fetch from the stream every event after ``delivered`` (in the background)."""
        if self._catching_up is None:
            self._catching_up = asyncio.get_running_loop().create_task(self._catch_up())

    def close(self) -> None:
        if self._catching_up is not None:
            self._catching_up.cancel()
            self._catching_up = None

    def _deliver(self, event: EventFrame) -> None:
        self.delivered = event.version
        if self.role == "spectator":
            self.conn.send_event(event)
        elif event.audience != SPECTATORS:
            if event.type == "progress":
                self.conn.send_progress(event)
            else:
                self.conn.send_event(event)
        if event.type == "started" and self.role == "player" and self.on_started is not None:
            self.on_started(self.code)
        elif event.type == "match_cancelled" and self.on_cancelled is not None:
            self.on_cancelled(self.code)

    async def _catch_up(self) -> None:
        try:
            for _ in range(5):
                fetched = await self.hub.fetch(self.code, self.delivered)
                if fetched is None:
                    break  # trimmed: what is gone is gone
                for event in fetched:
                    if event.version == self.delivered + 1:
                        self._deliver(event)
                pending = sorted(
                    (e for e in self._pending if e.version > self.delivered),
                    key=lambda e: e.version,
                )
                self._pending = []
                while pending and pending[0].version <= self.delivered + 1:
                    event = pending.pop(0)
                    if event.version == self.delivered + 1:
                        self._deliver(event)
                if not pending:
                    return
                self._pending = pending
            # a gap that the stream cannot fill: deliver what there is, in order
            for event in sorted(self._pending, key=lambda e: e.version):
                if event.version > self.delivered:
                    self._deliver(event)
            self._pending = []
        except Unavailable:
            log.warning("catch-up of race %s failed: storage unavailable", self.code)
        finally:
            self._catching_up = None


def _light_view(
    code: str,
    state: RaceState,
    starts_at: float | None,
    ends_at: float | None,
    statuses: dict[str, str],
    idle: dict[str, float] | None = None,
) -> Race:
    """A race that holds only what :func:`~..race.due_transition` and
    :func:`~..race.next_idle` read: its state, times, and players' statuses and idle
    deadlines (the rest is left empty; nothing else reads it)."""
    idle = idle or {}
    return Race(
        code=code,
        options=RaceOptions(
            variant="", max_players=0, time_limit=0, undo=False, live_boards=False, countdown=0
        ),
        state=state,
        version=0,
        creator="",
        created_at=0.0,
        seed="",
        salt="",
        commitment="",
        players={
            p: Entry(player=p, name="", order=0, status=s, idle_at=idle.get(p))
            for p, s in statuses.items()
        },
        starts_at=starts_at,
        ends_at=ends_at,
    )


def _first_due(view: Race | None) -> float:
    """The first time at which :func:`~..race.due_transition` or an idle player may be
    due in race ``view`` (``-inf``: now, every player's game is over; ``inf``: never)."""
    if view is None:
        return math.inf
    if view.state is RaceState.COUNTDOWN:
        return math.inf if view.starts_at is None else view.starts_at
    if view.state is not RaceState.RUNNING:
        return math.inf
    if all(e.status in TERMINAL for e in view.players.values() if not e.ghost):
        return -math.inf
    idle = next_idle(view)
    ends_at = math.inf if view.ends_at is None else view.ends_at
    return ends_at if idle is None else min(ends_at, idle)


class RaceWatch:
    """What this node knows of a race its connections watch."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.subs: set[Subscription] = set()
        self.seen: int | None = None
        self.view: Race | None = None
        """The race as far as its transitions go (state, times, players' statuses: what
        :func:`~..race.due_transition` reads), from the first subscription's snapshot and
        then the events; None before that, or once the race is gone."""
        self.unseen = False
        """Events were committed here before anything was dispatched (the snapshot of the
        first subscription may be older than them): it catches up."""
        self.early: dict[int, tuple[str, bytes]] = {}
        """Events that came before one they follow (version -> audience, data): the
        replies to this node's commits, and the channel, may interleave out of order."""
        self.gap_timer: asyncio.TimerHandle | None = None
        self.next_attempt = 0.0
        """Monotonic time before which the node does not try a transition again."""
        self.next_idle_check = 0.0
        """Monotonic time before which the node does not check for idle players again."""
        self._idle_due: float | None = None
        self._idle_known = False
        """Whether ``_idle_due`` is :func:`~..race.next_idle` of the view as it is."""
        self._wake = -math.inf
        """No later than the first time at which something may be due (:meth:`wake_at`):
        a change that may bring that time forward works it out again; a move, which only
        puts its player's idle deadline later, leaves it as it is."""
        self.ghosts = False
        """The race has ghosts (:mod:`..runners.ghosts`): this node emits their due actions. Ghosts
        are not in :attr:`view`: they never hold the race's end."""

    def idle_due(self) -> float | None:
        """When the next player may be out as idle, as far as the view knows (None: no
        player's game is on, or no view); worked out again only after the view changed."""
        if not self._idle_known:
            self._idle_due = None if self.view is None else next_idle(self.view)
            self._idle_known = True
        return self._idle_due

    def wake_at(self, now: float) -> float:
        """The first time (the race's clock) at which a transition or an idle player may
        be due, as far as the view knows: the node's tick looks at this race no sooner.
        Worked out again only when that time has come (a move since may have put it
        later) or a change may have brought it forward."""
        if self._wake <= now:
            self._wake = _first_due(self.view)
        return self._wake

    @property
    def state(self) -> str | None:
        """The race's state as this node knows it (None: not known)."""
        return None if self.view is None else self.view.state.value

    def set_view(
        self,
        state: str,
        starts_at: float | None,
        ends_at: float | None,
        statuses: dict[str, str],
        idle: dict[str, float] | None = None,
    ) -> None:
        """Know the race as a snapshot shows it (``idle``: the players' idle deadlines)."""
        self.view = _light_view(self.code, RaceState(state), starts_at, ends_at, statuses, idle)
        self.next_attempt = self.next_idle_check = 0.0
        self._idle_known = False
        self._wake = -math.inf

    def set_status(self, player: str, status: str, idle_at: float | None = None) -> None:
        """Know a player's status (from an event, or from this node's own commit), and
        their idle deadline when given."""
        view = self.view
        if view is None:
            return
        self._idle_known = False
        entry = view.players.get(player)
        if entry is None:
            view.players[player] = Entry(
                player=player, name="", order=0, status=status, idle_at=idle_at
            )
            self._wake = -math.inf
        else:
            if entry.status != status or (idle_at is not None and idle_at < self._wake):
                self._wake = -math.inf  # may end the race, or be the first idle deadline
            entry.status = status
            if idle_at is not None:
                entry.idle_at = idle_at

    def note(self, fields: dict[str, Any]) -> None:
        """Keep the race's state, times and player statuses up to date from an event."""
        kind = fields.get("type")
        view = self.view
        self._idle_known = False
        if kind not in ("player_joined", "progress"):
            self._wake = -math.inf  # a new state, time or player: worked out again
        if kind == "countdown":
            if view is None:
                view = self.view = _light_view(self.code, RaceState.COUNTDOWN, None, None, {})
            view.state, view.starts_at = RaceState.COUNTDOWN, fields["starts_at"]
        elif kind == "started":
            if view is None:
                view = self.view = _light_view(self.code, RaceState.RUNNING, None, None, {})
            view.state, view.ends_at = RaceState.RUNNING, fields["ends_at"]
            for entry in view.players.values():
                if entry.status == Status.LEFT:
                    continue  # left before the start (a dodge that costs): out already
                entry.status = Status.PLAYING
                entry.idle_at = fields.get("idle_at")
        elif kind == "finished":
            if view is None:
                view = self.view = _light_view(self.code, RaceState.FINISHED, None, None, {})
            view.state = RaceState.FINISHED
        elif view is None:
            pass  # players' statuses come with the first snapshot
        elif kind in ("player_joined", "progress"):
            info = fields["player"]
            if info.get("ghost"):
                self.ghosts = True
            else:
                self.set_status(info["player"], info["status"], info.get("idle_at"))
        elif kind == "player_left":
            view.players.pop(fields["player"], None)
        self.next_attempt = 0.0
