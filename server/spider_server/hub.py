"""Fan-out of race events to this node's connections, through Redis.

Every event of a race is appended to the race's stream and published on its channel by the
same script (:mod:`.scripts`), so the channel delivers events in version order to every
node, and the stream holds them for catch-up. The script publishes only when a node other
than the committing one has claimed the race (its ``nodes`` set): the committing node
dispatches its own events at once (:meth:`Hub.committed`), from the stream when something
came between. A node claims a race before subscribing to its channel and renews the claim
while it watches. Per node:

- a :class:`RaceWatch` per race that some connection here watches; the hub subscribes to
  its channel while the watch has subscribers and tracks ``seen``, the highest version it
  has dispatched;
- a :class:`Subscription` per (connection, race) with ``delivered``, the version the
  connection is at. It receives events strictly in version order, each once: an event
  further ahead than the next one makes it catch up from the stream first (events arriving
  meanwhile are held and delivered after, in order);
- a sweep (:meth:`Hub.sweep`, run periodically by the node) that compares every watched
  race's version in Redis with ``seen`` and dispatches what the channel missed (a
  dropped or reconnected subscription).

``board`` events (audience ``spectators``) are counted as delivered to players but not
sent to them, so a player's versions may have gaps where a spectator's have none.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from . import keys
from .errors import Unavailable
from .race import SPECTATORS
from .store import Store, stamp

__all__ = ["EventFrame", "Hub", "RaceWatch", "Subscriber", "Subscription", "array_header"]

log = logging.getLogger(__name__)

GAP_WAIT = 0.05
"""Seconds an event that came early waits for those before it (the replies to this node's
commits may come out of order) before they are read from the stream."""


@dataclass(frozen=True)
class EventFrame:
    """One event ready to send: its version, audience, frame bytes and fields."""

    version: int
    audience: str
    frame: bytes
    fields: dict[str, Any]
    type: str = field(init=False)
    """The event's type (read once)."""
    wire: bytes = field(init=False, repr=False)
    """The frame as a server's websocket frame, built once for every recipient."""
    about: tuple[str, str] = field(init=False, repr=False)
    """(race, player) of a ``progress`` event: a player is sent only the latest of each."""

    def __post_init__(self) -> None:
        kind = str(self.fields.get("type", ""))
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "wire", wire_frame(self.frame))
        info = self.fields.get("player") if kind == "progress" else None
        player = info.get("player") if isinstance(info, dict) else None
        object.__setattr__(self, "about", (str(self.fields.get("race")), str(player)))


def wire_frame(payload: bytes) -> bytes:
    """``payload`` as one unfragmented, unmasked binary websocket frame (RFC 6455 §5.2):
    what a server sends without compression, the same bytes for every connection."""
    n = len(payload)
    if n < 126:
        head = bytes((0x82, n))
    elif n < 1 << 16:
        head = struct.pack("!BBH", 0x82, 126, n)
    else:
        head = struct.pack("!BBQ", 0x82, 127, n)
    return head + payload


def array_header(n: int) -> bytes:
    """The msgpack header of an array of ``n`` items: followed by the items' encodings,
    several frames make one."""
    if n < 16:
        return bytes((0x90 | n,))
    if n < 1 << 16:
        return struct.pack("!BH", 0xDC, n)
    return struct.pack("!BI", 0xDD, n)


def _reply_reader(pubsub: PubSub) -> Any:
    """The hiredis reader of a pub/sub connection (holding replies already received), or
    None when the client reads otherwise."""
    reader = getattr(getattr(pubsub.connection, "_parser", None), "_reader", None)
    return reader if callable(getattr(reader, "gets", None)) else None


class Subscriber(Protocol):
    """The connection side of a subscription."""

    def send_event(self, event: EventFrame) -> None:
        """Send a race event."""

    def send_progress(self, event: EventFrame) -> None:
        """Send a ``progress`` event to a player (who may get several in one frame)."""

    def deal_out(self, code: str) -> None:
        """The race has started: send this player their view of the deal."""


class Subscription:
    """One connection watching one race, as ``role`` (player or spectator)."""

    def __init__(self, hub: Hub, conn: Subscriber, code: str, role: str, delivered: int) -> None:
        self.hub = hub
        self.conn = conn
        self.code = code
        self.role = role
        self.delivered = delivered
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
        if event.type == "started" and self.role == "player":
            self.conn.deal_out(self.code)

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


class RaceWatch:
    """What this node knows of a race its connections watch."""

    def __init__(self, code: str) -> None:
        self.code = code
        self.subs: set[Subscription] = set()
        self.seen: int | None = None
        self.state: str | None = None
        self.starts_at: float | None = None
        self.ends_at: float | None = None
        self.statuses: dict[str, str] = {}
        self.unseen = False
        """Events were committed here before anything was dispatched (the snapshot of the
        first subscription may be older than them): it catches up."""
        self.early: dict[int, tuple[str, bytes]] = {}
        """Events that came before one they follow (version -> audience, data): the
        replies to this node's commits, and the channel, may interleave out of order."""
        self.gap_timer: asyncio.TimerHandle | None = None
        self.next_attempt = 0.0
        """Monotonic time before which the node does not try a transition again."""

    def note(self, fields: dict[str, Any]) -> None:
        """Keep the race's state, times and player statuses up to date from an event."""
        kind = fields.get("type")
        if kind == "countdown":
            self.state, self.starts_at = "countdown", fields["starts_at"]
        elif kind == "started":
            self.state, self.ends_at = "running", fields["ends_at"]
            self.statuses = {p: "playing" for p in self.statuses}
        elif kind == "finished":
            self.state = "finished"
        elif kind in ("player_joined", "progress"):
            info = fields["player"]
            self.statuses[info["player"]] = info["status"]
        elif kind == "player_left":
            self.statuses.pop(fields["player"], None)
        self.next_attempt = 0.0


class Hub:
    """The node's watches of races, fed by one pub/sub connection and the sweep."""

    def __init__(
        self,
        redis: Redis,
        store: Store,
        *,
        node: str,
        on_event: Callable[[RaceWatch, EventFrame], None],
    ) -> None:
        self.redis = redis
        self.store = store
        self.node = node
        self.on_event = on_event
        self.watches: dict[str, RaceWatch] = {}
        self._pubsub: PubSub | None = None
        self._listener: asyncio.Task[None] | None = None
        self._refreshing: dict[str, asyncio.Task[None]] = {}
        store.on_commit = self.committed

    async def start(self) -> None:
        """Subscribe (to this node's own channel, so the connection is always in use) and
        start listening. When Redis does not answer yet, the listener keeps trying."""
        with contextlib.suppress(RedisError, OSError, Unavailable):
            await self._connect()
        self._listener = asyncio.get_running_loop().create_task(self._listen())

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        for task in list(self._refreshing.values()):
            task.cancel()
        for watch in self.watches.values():
            for sub in watch.subs:
                sub.close()
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    async def _connect(self) -> None:
        if self.watches:  # claim before subscribing: what is published after is heard
            await self.store.claim_watch(list(self.watches), self.store.clock())
        pubsub = self.redis.pubsub()
        channels = [f"node:{self.node}"] + [keys.channel(c) for c in self.watches]
        try:
            await pubsub.subscribe(*channels)
        except BaseException:
            with contextlib.suppress(Exception):
                await pubsub.aclose()
            raise
        self._pubsub = pubsub

    async def _listen(self) -> None:
        while True:
            pubsub = self._pubsub
            if pubsub is None:
                await asyncio.sleep(0.2)
                with contextlib.suppress(RedisError, OSError, Unavailable):
                    await self._connect()
                    await self.sweep()  # what was published while disconnected
                continue
            try:
                message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if message is not None and message.get("type") == "message":
                    self._take_message(message["channel"], message["data"])
                await self._take_buffered(pubsub)
            except (RedisError, OSError) as e:
                log.warning("pub/sub connection lost (%s); reconnecting", e)
                self._pubsub = None
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                continue

    async def _take_buffered(self, pubsub: PubSub) -> None:
        """Take the messages that came with the last one at once, from the reply reader,
        rather than through the client's layers one message at a time."""
        reader = _reply_reader(pubsub)
        while reader is not None:
            reply = reader.gets()
            if isinstance(reply, list) and len(reply) == 3 and reply[0] == b"message":
                self._take_message(reply[1], reply[2])
            elif isinstance(reply, (list, bytes)):  # (un)subscribe, pong: the client's
                message = await pubsub.handle_message(reply, ignore_subscribe_messages=True)
                if message is not None and message.get("type") == "message":
                    self._take_message(message["channel"], message["data"])
            elif isinstance(reply, Exception):  # an error reply: as the client would raise it
                raise reply
            else:  # no whole reply left (the reader's marker for that)
                return

    def _take_message(self, channel: bytes, data: bytes) -> None:
        try:
            self._on_message(channel, data)
        except Exception:
            log.exception("could not dispatch %r on %r", data, channel)

    def _on_message(self, channel: bytes, data: bytes) -> None:
        name = channel.decode()
        if not name.startswith("{race:"):
            return
        code = name[len("{race:") : name.index("}")]
        watch = self.watches.get(code)
        if watch is None:
            return
        version, audience, payload = data.split(b":", 2)
        self._dispatch(watch, int(version), audience.decode(), payload)

    def committed(self, code: str, version: int, events: Sequence[tuple[str, bytes]]) -> None:
        """Dispatch the events this node has just committed (``version`` is the last one's)
        at once: the mover's ack and their progress go out together, and a copy from the
        channel is skipped as seen. Events that come before one they follow wait for it
        (:meth:`_dispatch`)."""
        watch = self.watches.get(code)
        if watch is None:
            return
        if watch.seen is None:
            watch.unseen = True
            return
        first = version - len(events) + 1
        for i, (audience, data) in enumerate(events):
            self._dispatch(watch, first + i, audience, data)

    def refresh(self, watch: RaceWatch) -> None:
        """Dispatch, from the stream, what was committed after what this node dispatched
        (in the background; one fetch at a time per race, then again if more came)."""
        if watch.code not in self._refreshing:
            task = asyncio.get_running_loop().create_task(self._refresh(watch))
            self._refreshing[watch.code] = task

    async def _refresh(self, watch: RaceWatch) -> None:
        try:
            while self.watches.get(watch.code) is watch and watch.seen is not None:
                seen = watch.seen
                try:
                    fetched = await self.fetch(watch.code, seen)
                except Unavailable:
                    return  # the sweep tries again
                if fetched is None:  # trimmed: the subscriptions catch up as far as they can
                    return
                self._emit_fetched(watch, fetched)
                if not fetched or watch.seen == seen:
                    return
        finally:
            self._refreshing.pop(watch.code, None)

    def _dispatch(self, watch: RaceWatch, version: int, audience: str, data: bytes) -> None:
        """Dispatch an event in version order: one already dispatched is skipped (the
        channel, this node's commits and the sweep may each bring it); one that comes
        early waits for those before it, at most :data:`GAP_WAIT` seconds before they are
        read from the stream."""
        seen = watch.seen
        if seen is not None and version <= seen:
            return
        if seen is not None and version > seen + 1:
            watch.early[version] = (audience, data)
            if watch.gap_timer is None:
                watch.gap_timer = asyncio.get_running_loop().call_later(
                    GAP_WAIT, self._gap_due, watch
                )
            return
        self._emit_stored(watch, version, audience, data)
        if watch.early:
            self._take_early(watch)

    def _emit_stored(self, watch: RaceWatch, version: int, audience: str, data: bytes) -> None:
        frame, fields = stamp(version, data)
        self._emit(watch, EventFrame(version, audience, frame, fields))

    def _emit_fetched(self, watch: RaceWatch, fetched: list[EventFrame]) -> None:
        """Dispatch the events read from the stream that were not yet, then those that
        came early and now follow."""
        for event in fetched:
            if watch.seen is None or event.version > watch.seen:
                self._emit(watch, event)
        self._take_early(watch)

    def _take_early(self, watch: RaceWatch) -> None:
        """Dispatch the early events that now follow, and forget those passed."""
        early = watch.early
        while early and watch.seen is not None:
            version = watch.seen + 1
            item = early.pop(version, None)
            if item is None:
                for v in [v for v in early if v <= watch.seen]:
                    del early[v]
                break
            self._emit_stored(watch, version, *item)
        if not early and watch.gap_timer is not None:
            watch.gap_timer.cancel()
            watch.gap_timer = None

    def _gap_due(self, watch: RaceWatch) -> None:
        watch.gap_timer = None
        if watch.early and self.watches.get(watch.code) is watch:
            self.refresh(watch)

    def _emit(self, watch: RaceWatch, event: EventFrame) -> None:
        watch.seen = event.version
        watch.note(event.fields)
        for sub in list(watch.subs):
            sub.offer(event)
        self.on_event(watch, event)

    async def fetch(self, code: str, after: int) -> list[EventFrame] | None:
        """The race's events after version ``after``, from the stream; None if trimmed."""
        stored = await self.store.events_after(code, after)
        if stored is None:
            return None
        out = []
        for version, audience, data in stored:
            frame, fields = stamp(version, data)
            out.append(EventFrame(version, audience, frame, fields))
        return out

    async def watch(self, code: str) -> RaceWatch:
        """The watch of a race, subscribing to its channel if it is new here. Subscribe
        before reading a snapshot, so nothing after the snapshot can be missed."""
        watch = self.watches.get(code)
        if watch is None:
            watch = self.watches[code] = RaceWatch(code)
            # without a connection, the listener claims and subscribes to every watched
            # race when it reconnects
            if self._pubsub is not None:
                try:
                    # claimed first: every event committed after the claim is published
                    await self.store.claim_watch([code], self.store.clock())
                    await self._pubsub.subscribe(keys.channel(code))
                except (RedisError, OSError, Unavailable) as e:
                    log.warning("subscribe to race %s failed: %s", code, e)
        return watch

    async def renew(self) -> None:
        """Renew this node's claims on the races it watches (run well within the claim's
        life, ``presence_ttl``)."""
        if self.watches:
            await self.store.claim_watch(list(self.watches), self.store.clock())

    def add(
        self,
        sub: Subscription,
        *,
        state: str,
        starts_at: float | None,
        ends_at: float | None,
        statuses: dict[str, str],
    ) -> None:
        """Start delivering a race's events to ``sub`` (from ``sub.delivered``, the version
        of the snapshot it was sent); what this node dispatched since is caught up."""
        watch = self.watches.get(sub.code)
        if watch is None:  # pragma: no cover - callers watch first
            watch = self.watches[sub.code] = RaceWatch(sub.code)
        if watch.seen is None or watch.seen <= sub.delivered:
            watch.seen = sub.delivered
            watch.state, watch.starts_at, watch.ends_at = state, starts_at, ends_at
            watch.statuses = dict(statuses)
            watch.next_attempt = 0.0
        watch.subs.add(sub)
        if watch.seen > sub.delivered:
            sub.catch_up()
        if watch.unseen:
            watch.unseen = False
            self.refresh(watch)

    def remove(self, sub: Subscription) -> None:
        """Stop delivering to ``sub``; unsubscribe from the race when no one here watches."""
        sub.close()
        watch = self.watches.get(sub.code)
        if watch is None:
            return
        watch.subs.discard(sub)
        self.release(sub.code)

    def release(self, code: str) -> None:
        """Forget a race that no subscription here watches."""
        watch = self.watches.get(code)
        if watch is None or watch.subs:
            return
        del self.watches[code]
        if watch.gap_timer is not None:
            watch.gap_timer.cancel()
        if self._pubsub is not None:
            asyncio.get_running_loop().create_task(self._unsubscribe(code))

    async def _unsubscribe(self, code: str) -> None:
        if code in self.watches or self._pubsub is None:
            return
        with contextlib.suppress(RedisError, OSError, Unavailable):
            await self._pubsub.unsubscribe(keys.channel(code))
            if code not in self.watches:  # not watched again meanwhile
                await self.store.drop_watch(code)

    async def sweep(self) -> None:
        """Dispatch events that the channel did not bring (compares each watched race's
        version in Redis with what was dispatched here)."""
        watches = list(self.watches.values())
        if not watches:
            return
        versions: list[Any] = []
        try:
            for start in range(0, len(watches), 128):  # short turns of the event loop
                async with self.redis.pipeline(transaction=False) as pipe:
                    for w in watches[start : start + 128]:
                        pipe.hget(keys.meta(w.code), "version")
                    versions += await pipe.execute()
        except (RedisError, OSError):
            return
        for watch, version in zip(watches, versions, strict=True):
            if version is None or watch.seen is None or int(version) <= watch.seen:
                continue
            try:
                fetched = await self.fetch(watch.code, watch.seen)
            except Unavailable:
                return
            if fetched is None:  # trimmed: subscriptions catch up as far as they can
                watch.seen = int(version)
                self._take_early(watch)
                continue
            self._emit_fetched(watch, fetched)
