"""Fan-out of race events to this node's connections, through Redis.

Every event of a race is appended to the race's stream and published on its channel by the
same script (:mod:`..store.scripts`), so the channel delivers events in version order to every
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
from collections.abc import Callable, Sequence

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from ..closing import stop
from ..errors import Unavailable
from ..store import Store, keys
from ..store.redisconn import raise_if_cancelled, read_message, take_buffered
from ..transport import EventFrame
from .shards import ShardFeed
from .watches import RaceWatch, Subscriber, Subscription

__all__ = ["GAP_WAIT", "EventFrame", "Hub", "RaceWatch", "Subscriber", "Subscription"]

log = logging.getLogger(__name__)

GAP_WAIT = 0.05
"""Seconds an event that came early waits for those before it (the replies to this node's
commits may come out of order) before they are read from the stream."""


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
        self.shards: ShardFeed | None = None
        """On a cluster: the sharded subscriptions (:mod:`.shards`), in place of the one
        pub/sub connection."""

    def _moved(self, code: str) -> None:
        watch = self.watches.get(code)
        if watch is not None and watch.seen is not None:
            self.refresh(watch)

    async def start(self) -> None:
        """Subscribe (to this node's own channel, so the connection is always in use) and
        start listening. When Redis does not answer yet, the listener keeps trying. On a
        cluster, the races' channels are sharded (:mod:`.shards`)."""
        if isinstance(self.redis, RedisCluster):
            self.shards = ShardFeed(self.redis, self._take_message, self._moved)
            return
        with contextlib.suppress(RedisError, OSError, Unavailable):
            await self._connect()
        self._listener = asyncio.get_running_loop().create_task(self._listen())

    async def close(self) -> None:
        if self._listener is not None:
            await stop(self._listener)
        for task in list(self._refreshing.values()):
            task.cancel()
        for watch in self.watches.values():
            for sub in watch.subs:
                sub.close()
        if self.shards is not None:
            await self.shards.aclose()
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()

    async def _connect(self) -> None:
        if self.watches:  # claim before subscribing: what is published after is heard
            await self.store.presence.claim_watch(list(self.watches), self.store.clock())
        pubsub = self.redis.pubsub()
        channels = [keys.node_channel(self.node)] + [keys.channel(c) for c in self.watches]
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
                raise_if_cancelled()  # a cancel that came out as the call's own error
                continue
            try:
                message = await read_message(pubsub, ignore_subscribe_messages=True, timeout=1.0)
                if message is not None and message.get("type") == "message":
                    self._take_message(message["channel"], message["data"])
                await take_buffered(pubsub, self._take_message)
            except (RedisError, OSError) as e:
                raise_if_cancelled()
                log.warning("pub/sub connection lost (%s); reconnecting", e)
                self._pubsub = None
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                continue

    def _take_message(self, channel: bytes, data: bytes) -> None:
        try:
            self._on_message(channel, data)
        except Exception:
            log.exception("could not dispatch %r on %r", data, channel)

    def _on_message(self, channel: bytes, data: bytes) -> None:
        code = keys.race_of_channel(channel.decode())
        watch = self.watches.get(code) if code is not None else None
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
                    fetched = await self.store.races.events_after(watch.code, seen)
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
        self._emit(watch, EventFrame.stored(version, audience, data))

    def _emit_fetched(self, watch: RaceWatch, fetched: list[tuple[int, str, bytes]]) -> None:
        """Dispatch the events read from the stream that were not yet (each made a frame
        only then: this node's commits may have dispatched some while the read was on its
        way), then those that came early and now follow."""
        for version, audience, data in fetched:
            if watch.seen is None or version > watch.seen:
                self._emit_stored(watch, version, audience, data)
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
        stored = await self.store.races.events_after(code, after)
        if stored is None:
            return None
        return [EventFrame.stored(version, audience, data) for version, audience, data in stored]

    async def watch(self, code: str) -> RaceWatch:
        """The watch of a race, subscribing to its channel if it is new here. Subscribe
        before reading a snapshot, so nothing after the snapshot can be missed."""
        watch = self.watches.get(code)
        if watch is None:
            watch = self.watches[code] = RaceWatch(code)
            if self.shards is not None:
                try:
                    await self.store.presence.claim_watch([code], self.store.clock())
                    await self.shards.add(keys.channel(code))
                except (RedisError, OSError, Unavailable) as e:  # tried again meanwhile
                    log.warning("subscribe to race %s failed: %s", code, e)
            # without a connection, the listener claims and subscribes to every watched
            # race when it reconnects
            elif self._pubsub is not None:
                try:
                    # claimed first: every event committed after the claim is published
                    await self.store.presence.claim_watch([code], self.store.clock())
                    await self._pubsub.subscribe(keys.channel(code))
                except (RedisError, OSError, Unavailable) as e:
                    log.warning("subscribe to race %s failed: %s", code, e)
        return watch

    async def renew(self) -> None:
        """Renew this node's claims on the races it watches (run well within the claim's
        life, ``presence_ttl``)."""
        if self.watches:
            await self.store.presence.claim_watch(list(self.watches), self.store.clock())

    def add(
        self,
        sub: Subscription,
        *,
        state: str,
        starts_at: float | None,
        ends_at: float | None,
        statuses: dict[str, str],
        ghosts: bool = False,
        idle: dict[str, float] | None = None,
    ) -> None:
        """Start delivering a race's events to ``sub`` (from ``sub.delivered``, the version
        of the snapshot it was sent); what this node dispatched since is caught up.
        ``statuses`` are the live players' (``idle``: their idle deadlines); ``ghosts``
        whether the race has ghosts."""
        watch = self.watches.get(sub.code)
        if watch is None:  # pragma: no cover - callers watch first
            watch = self.watches[sub.code] = RaceWatch(sub.code)
        watch.ghosts = watch.ghosts or ghosts
        if watch.seen is None or watch.seen <= sub.delivered or watch.view is None:
            watch.seen = max(watch.seen or 0, sub.delivered)
            watch.set_view(state, starts_at, ends_at, statuses, idle)
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
        if self._pubsub is not None or self.shards is not None:
            asyncio.get_running_loop().create_task(self._unsubscribe(code))

    async def _unsubscribe(self, code: str) -> None:
        if code in self.watches or (self._pubsub is None and self.shards is None):
            return
        with contextlib.suppress(RedisError, OSError, Unavailable):
            if self.shards is not None:
                await self.shards.remove(keys.channel(code))
            elif self._pubsub is not None:
                await self._pubsub.unsubscribe(keys.channel(code))
            if code not in self.watches:  # not watched again meanwhile
                await self.store.presence.drop_watch(code)

    async def sweep(self) -> None:
        """Dispatch events that the channel did not bring (compares each watched race's
        version in Redis with what was dispatched here)."""
        watches = list(self.watches.values())
        if not watches:
            return
        try:
            versions = await self.store.races.race_versions([w.code for w in watches])
        except Unavailable:
            return
        for watch, version in zip(watches, versions, strict=True):
            if version is None or watch.seen is None or version <= watch.seen:
                continue
            try:
                fetched = await self.store.races.events_after(watch.code, watch.seen)
            except Unavailable:
                return
            if fetched is None:  # trimmed: subscriptions catch up as far as they can
                watch.seen = version
                self._take_early(watch)
                continue
            self._emit_fetched(watch, fetched)
