"""When a commit counts as saved: the durability levels (``SPIDER_RACE_DURABILITY``).

- ``primary``: once the primary applied it (with its own AOF policy): no wait;
- ``fsync``: once the primary's AOF holds it on disk (``WAITAOF 1 0 <timeout>``);
- ``replica``: once at least one replica has it (``WAIT 1 <timeout>``).

The wait is sent on the connection that made the commits, after them: ``WAIT`` and
``WAITAOF`` wait for everything that connection wrote, so the commits of one batch share
one wait. When the wait is not met within the timeout the commits are applied on the
primary but not known to be saved: each fails with :class:`NotDurable` (a Redis error, so
the caller answers ``unavailable`` and sends no ack); the client's resend of the same seq
is then answered from the stored ack, after a wait of its own (:func:`run_durable`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import (
    AskError,
    ClusterDownError,
    MovedError,
    RedisError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError

__all__ = ["LEVELS", "NotDurable", "Durability", "run_durable", "unmet"]

LEVELS = ("primary", "fsync", "replica")
"""The durability levels, weakest first."""

_REROUTE = (MovedError, AskError, TryAgainError, ClusterDownError, RedisConnectionError)
"""Errors after which a cluster's slot map is read again and the command sent once more
(each commit is a check-and-set, so sending it again is safe)."""


class NotDurable(RedisError):
    """The commit is applied on the primary, but it was not saved as the durability level
    asks within its timeout (or the wait's reply was lost): no ack is sent for it."""


class Durability:
    """One node's durability level and its wait."""

    __slots__ = ("level", "timeout", "command")

    def __init__(self, level: str = "primary", timeout: float = 2.0) -> None:
        level = level.lower()
        if level not in LEVELS:
            raise ValueError(f"durability: one of {', '.join(LEVELS)}, not {level!r}")
        self.level = level
        self.timeout = timeout
        ms = max(1, round(timeout * 1000))
        self.command: tuple[Any, ...] | None = (
            ("WAITAOF", 1, 0, ms)
            if level == "fsync"
            else ("WAIT", 1, ms)
            if level == "replica"
            else None
        )
        """The wait sent after a batch of commits (None: no wait)."""

    @property
    def waits(self) -> bool:
        return self.command is not None

    def failure(self, reply: Any) -> NotDurable | None:
        """None when the wait's ``reply`` says the commits before it are saved, else the
        error each of them fails with."""
        if isinstance(reply, Exception):
            return NotDurable(f"not known to be saved ({self.level}): {reply}")
        try:
            saved = int(reply[0] if self.level == "fsync" else reply) >= 1
        except (TypeError, ValueError, IndexError):
            saved = False
        if saved:
            return None
        what = "on disk" if self.level == "fsync" else "on a replica"
        return NotDurable(f"not saved {what} within {self.timeout:g} s")


async def run_durable(
    redis: Any, durability: Durability, calls: Sequence[tuple[str, Sequence[Any]]]
) -> list[Any]:
    """The replies to ``calls`` ((a key the command touches, the command)), each followed
    on its connection by the durability's wait: a reply whose wait failed becomes a
    :class:`NotDurable` error. Replies are returned (errors in place), not raised. On a
    cluster the commands are grouped by the master of their key, each group and its wait
    on one connection of that master; a command that met a slot move or a lost master
    is sent once more after the slot map is read again (without a wait, one still
    redirected then is sent alone, the cluster client following the redirect)."""
    replies: list[Any] = [None] * len(calls)
    todo = list(range(len(calls)))
    cluster = isinstance(redis, RedisCluster)
    for attempt in range(2 if cluster else 1):
        if attempt and cluster:
            try:
                await redis.nodes_manager.initialize()
            except RedisError:
                break
        if cluster:
            await _run_on_cluster(redis, durability, calls, todo, replies)
        else:
            await _run_on_one(redis, durability, calls, todo, replies)
        todo = [i for i in todo if isinstance(replies[i], _REROUTE)]
        if not todo:
            break
    if cluster and not durability.waits:  # no wait to share: the client follows redirects
        for i in todo:
            if isinstance(replies[i], (MovedError, AskError)):
                try:
                    replies[i] = await redis.execute_command(*calls[i][1])
                except RedisError as e:
                    replies[i] = e
    return replies


async def _run_on_one(
    redis: Redis,
    durability: Durability,
    calls: Sequence[tuple[str, Sequence[Any]]],
    todo: list[int],
    replies: list[Any],
) -> None:
    try:
        async with redis.pipeline(transaction=False) as pipe:
            for i in todo:
                pipe.execute_command(*calls[i][1])
            if durability.command is not None:
                pipe.execute_command(*durability.command)
            got = await pipe.execute(raise_on_error=False)
    except RedisError as e:
        got = [e] * (len(todo) + (durability.command is not None))
    failure = durability.failure(got.pop()) if durability.command is not None else None
    for i, reply in zip(todo, got, strict=True):
        replies[i] = failure if failure is not None and not isinstance(reply, Exception) else reply


async def _run_on_cluster(
    redis: RedisCluster,
    durability: Durability,
    calls: Sequence[tuple[str, Sequence[Any]]],
    todo: list[int],
    replies: list[Any],
) -> None:
    groups: dict[str, tuple[Any, list[int]]] = {}
    for i in todo:
        node = redis.get_node_from_key(calls[i][0])
        if node is None:
            replies[i] = ClusterDownError(f"no master serves {calls[i][0]!r}")
            continue
        groups.setdefault(node.name, (node, []))[1].append(i)
    if not groups:
        return
    try:
        pipe = redis.pipeline()
        order: list[tuple[int | None, Any]] = []
        for node, members in groups.values():
            for i in members:
                pipe.execute_command(*calls[i][1])
                order.append((i, node))
            if durability.command is not None:
                # keyless, sent to the group's master: the pipeline runs each master's
                # commands in order on one connection, so the wait follows its commits
                pipe.execute_command(*durability.command, target_nodes=node)
                order.append((None, node))
        got = await pipe.execute(raise_on_error=False, allow_redirections=False)
    except (RedisError, OSError) as e:
        error = e if isinstance(e, RedisError) else RedisConnectionError(str(e))
        for _, members in groups.values():
            for i in members:
                replies[i] = error
        return
    pending: list[int] = []
    for (slot, _node), reply in zip(order, got, strict=True):
        if slot is not None:
            replies[slot] = reply
            pending.append(slot)
            continue
        failure = durability.failure(reply)
        for j in pending:
            if failure is not None and not isinstance(replies[j], Exception):
                replies[j] = failure
        pending = []


async def unmet(redis: Redis | RedisCluster, durability: Durability) -> str | None:
    """Why no commit can be saved as ``durability`` asks now (None: it can be): no replica
    connected to a primary for ``replica``, a primary without its append-only file for
    ``fsync``. Asked of every primary of a cluster; a Redis error raises."""
    if durability.level == "primary":
        return None
    section = "replication" if durability.level == "replica" else "persistence"
    if isinstance(redis, RedisCluster):
        replies = await redis.info(section, target_nodes=RedisCluster.PRIMARIES)
        # one primary's INFO by itself, or each primary's by node name
        infos = (
            list(replies.values())
            if isinstance(replies, dict) and all(isinstance(v, dict) for v in replies.values())
            else [replies]
        )
    else:
        infos = [await redis.info(section)]
    for info in infos:
        if durability.level == "replica" and int(info.get("connected_slaves", 0)) < 1:
            return "durability replica: a primary has no replica connected"
        if durability.level == "fsync" and int(info.get("aof_enabled", 0)) != 1:
            return "durability fsync: a primary's append-only file is off"
    return None
