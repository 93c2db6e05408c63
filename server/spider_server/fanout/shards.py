"""Sharded pub/sub on a Redis Cluster: each race's channel on the shard that owns its slot.

On a cluster the scripts publish a race's events with ``SPUBLISH`` on the race's channel
(``{race:<code>}:ch``, in the race's hash slot, :mod:`..store.keys`), which only the master that
owns the slot (and its replicas) carries: pub/sub traffic grows with the events, not with
the events times the shards as a cluster-wide ``PUBLISH`` does. A node ``SSUBSCRIBE``\\ s
to the channels of the races it watches, on one connection per master (:class:`ShardFeed`).

When a slot moves (a resharding's ``CLUSTER SETSLOT ... NODE``, a failover), the old owner
ends the subscriptions of its channels (a ``sunsubscribe`` message), or the connection to
a dead master drops: the feed reads the slot map again, subscribes on the new owner (again
until it is accepted), and then calls ``moved(code)``, and the hub reads from the race's
stream whatever was published in between (:meth:`.hub.Hub.refresh`). A single Redis keeps
plain ``PUBLISH``/``SUBSCRIBE``: on one server they cost the same within the noise
(``scripts/pubsub_cost.py`` measures both), and the hub keeps its one pub/sub connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from ..store import keys
from ..store.redisconn import read_message

__all__ = ["RETRY", "ShardFeed"]

log = logging.getLogger(__name__)

RETRY = 0.2
"""Seconds between tries to subscribe a channel whose slot is moving or whose master is
away."""


class _Shard:
    """One master's pub/sub connection and the task that reads it."""

    def __init__(self, feed: ShardFeed, name: str, client: Redis) -> None:
        self.name = name
        self.client = client
        self.pubsub: PubSub = client.pubsub()
        self.task = asyncio.get_running_loop().create_task(self._read(feed))

    async def _read(self, feed: ShardFeed) -> None:
        try:
            while True:
                if not self.pubsub.subscribed:
                    await asyncio.sleep(0.05)
                    continue
                message = await read_message(self.pubsub, timeout=1.0)
                if message is None:
                    continue
                kind, channel = message.get("type"), message.get("channel")
                if kind in ("smessage", b"smessage"):
                    feed.take(channel, message["data"])
                elif kind in ("sunsubscribe", b"sunsubscribe") and isinstance(channel, bytes):
                    feed.ended(self, channel.decode())
        except asyncio.CancelledError:
            raise
        except (RedisError, OSError) as e:
            log.warning("sharded pub/sub connection to %s lost (%s)", self.name, e)
            feed.lost(self)

    async def aclose(self) -> None:
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.client.aclose()


class ShardFeed:
    """The node's sharded subscriptions: ``take(channel, data)`` for each message,
    ``moved(code)`` once a race's subscription is back after its slot moved (what was
    published meanwhile is in the race's stream)."""

    def __init__(
        self,
        cluster: RedisCluster,
        take: Callable[[bytes, bytes], None],
        moved: Callable[[str], None],
    ) -> None:
        self.cluster = cluster
        self.take = take
        self.moved = moved
        self.channels: dict[str, str] = {}
        """The channels wanted, each with the master it is subscribed on ("" while it is
        being moved)."""
        self._shards: dict[str, _Shard] = {}
        self._moving: dict[str, asyncio.Task[None]] = {}

    def _shard(self, node: Any) -> _Shard:
        shard = self._shards.get(node.name)
        if shard is None:
            options = {
                k: v
                for k, v in node.connection_kwargs.items()
                if k in ("username", "password", "socket_connect_timeout", "ssl")
            }
            client = Redis(host=node.host, port=node.port, **options)
            shard = self._shards[node.name] = _Shard(self, node.name, client)
        return shard

    async def _subscribe(self, channel: str) -> None:
        node = self.cluster.get_node_from_key(channel)
        if node is None:
            raise RedisError(f"no master serves {channel}")
        shard = self._shard(node)
        self.channels[channel] = ""
        await shard.pubsub.ssubscribe(channel)
        # the reply (or MOVED) comes on the connection: a moved slot ends it again
        self.channels[channel] = shard.name

    async def add(self, channel: str) -> None:
        """Subscribe to ``channel`` on the master of its slot (raises when it cannot:
        then it is tried again in the background)."""
        if channel in self.channels:
            return
        try:
            await self._subscribe(channel)
        except (RedisError, OSError):
            self._move(channel)
            raise

    async def remove(self, channel: str) -> None:
        name = self.channels.pop(channel, None)
        task = self._moving.pop(channel, None)
        if task is not None:
            task.cancel()
        shard = self._shards.get(name) if name else None
        if shard is not None:
            with contextlib.suppress(RedisError, OSError):
                await shard.pubsub.sunsubscribe(channel)

    def ended(self, shard: _Shard, channel: str) -> None:
        """The master ended a subscription: its slot moved, unless it was let go."""
        if self.channels.get(channel) == shard.name:
            self._move(channel)

    def lost(self, shard: _Shard) -> None:
        """A master's connection dropped: its channels go to whoever owns them now."""
        if self._shards.get(shard.name) is shard:
            del self._shards[shard.name]
        asyncio.get_running_loop().create_task(shard.aclose())
        for channel, name in list(self.channels.items()):
            if name == shard.name:
                self._move(channel)

    def _move(self, channel: str) -> None:
        if channel in self._moving:
            return
        self.channels[channel] = ""
        self._moving[channel] = asyncio.get_running_loop().create_task(self._resubscribe(channel))

    async def _resubscribe(self, channel: str) -> None:
        try:
            while channel in self.channels:
                with contextlib.suppress(RedisError, OSError):
                    await self.cluster.nodes_manager.initialize()
                try:
                    await self._subscribe(channel)
                    owner = self.cluster.get_node_from_key(channel)
                    if owner is not None and owner.name == self.channels.get(channel):
                        break
                except (RedisError, OSError) as e:
                    log.debug("subscribing %s again: %s", channel, e)
                await asyncio.sleep(RETRY)
        finally:
            self._moving.pop(channel, None)
        code = keys.race_of_channel(channel)
        if code is not None and channel in self.channels:
            self.moved(code)

    def counts(self) -> dict[str, int]:
        """Channels subscribed on each master (by its name)."""
        out: dict[str, int] = {}
        for name in self.channels.values():
            if name:
                out[name] = out.get(name, 0) + 1
        return out

    async def aclose(self) -> None:
        for task in list(self._moving.values()):
            task.cancel()
        self._moving.clear()
        for shard in list(self._shards.values()):
            await shard.aclose()
        self._shards.clear()
