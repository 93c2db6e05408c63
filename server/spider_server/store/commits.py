"""Committing :mod:`..race`'s decisions with the scripts of :mod:`..scripts`, and the one
route of every commit's events to the node's hub.

A race change is a check-and-set on the race's version, a player's action a check-and-set
on the player's seq; a lost check-and-set raises :class:`~..errors.Conflict` and the caller
decides again (:func:`.guard.cas_tries`). Whichever it was, the committed events go to
:attr:`StoreBase.on_commit` (the hub) at once: the node that commits dispatches its own
events, and the channel carries them only to the other nodes.

The players' actions committed in one turn of the event loop go to Redis in one write, on
a connection of their own (:class:`~..redisconn.CommandLink`), each still its own atomic
script call with its own check-and-set: batching changes the round trips, not the
guarantees (README, "Under load": races of ten and of one reach 0.99-1.14 of the echo
baseline's moves a second with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError

from .. import keys
from ..errors import Conflict, WrongState
from ..race import ActionOutcome, Race, RaceChange, event_data
from ..redisconn import CommandLink
from ..scripts import COMMIT_ACTION, COMMIT_RACE, RESAVE_ACK, sharded
from ..settings import Settings
from .codec import entry_bytes, game_fields, meta_fields, pack_payload, text
from .durability import Durability, run_durable
from .guard import as_unavailable

__all__ = ["Acked", "OnCommit", "StoreBase"]

OnCommit = Callable[[str, int, Sequence[tuple[str, bytes]]], None]
"""Called with (code, version, events) when a commit of this node went through."""
Acked = Callable[[bytes, tuple[str, str], int], None]
"""Sends the mover's ack once their action is committed, before its events are
dispatched (the ack goes out before their progress): called with the ack's frame, the
(race, player) it is about, and the last version before the action's events (the
player's own progress held up to it is dropped: the ack carries their status and
counts). The transport's :meth:`~..transport.Connection.send_ack`."""


def _player_keys(code: str, pid: str) -> list[str]:
    """A player's keys of a race (their TTLs follow the race's; deleted with it)."""
    return [
        keys.game(code, pid),
        keys.actions(code, pid),
        keys.acks(code, pid),
        keys.stack(code, pid),
        keys.marks(code, pid),
        keys.times(code, pid),
    ]


class StoreBase:
    """One node's access to the races in Redis: the commits. Every method raises
    :class:`~..errors.Unavailable` when Redis does not answer."""

    def __init__(
        self,
        redis: Redis,
        settings: Settings,
        *,
        batch: bool = True,
        clock: Callable[[], float] = time.time,
        health: Any = None,
    ) -> None:
        self.redis = redis
        self.health = health if health is not None else redis
        """The client that answers :meth:`answers` (the node's asks once, without
        retries)."""
        self.settings = settings
        self.clock = clock
        """The deployment's time (claims to watch races expire by it)."""
        self.on_commit: OnCommit | None = None
        """Called with (code, version, events) when a race change or an action this node
        made is committed: the node dispatches its own events (the channel carries them
        only to the other nodes)."""
        # on a cluster, a race's events go out on its own shard (SPUBLISH, :mod:`..shards`)
        shard = sharded if isinstance(redis, RedisCluster) else str
        self._commit_race = redis.register_script(shard(COMMIT_RACE))
        self._commit_action = redis.register_script(shard(COMMIT_ACTION))
        self._resave_ack = redis.register_script(RESAVE_ACK)
        self.batch = batch
        """Whether players' actions committed at the same moment share one round trip."""
        self._pending: list[tuple[list[str], list[str | bytes], asyncio.Future[Any]]] = []
        self._link = CommandLink(redis) if batch and isinstance(redis, Redis) else None
        """The commits' own pipelined connection (one Redis; a cluster uses pipelines)."""
        self._action_keys: dict[tuple[str, str], list[str]] = {}
        """The keys an action of (race, player) touches (kept for the next action)."""
        self._flushes: set[asyncio.Task[None]] = set()
        self.durability = Durability(settings.durability, settings.durability_timeout)
        """When a commit counts as saved (:mod:`.durability`): the commits of one batch
        share one wait, after them on their connection, before any of them is acked."""

    def _waited(self, replies: list[Any]) -> list[Any]:
        """The replies of a batch that ended with the durability's wait (taken off): each
        commit fails with the wait's failure, if any."""
        failure = self.durability.failure(replies.pop())
        if failure is None:
            return replies
        return [r if isinstance(r, Exception) else failure for r in replies]

    async def _durable_script(self, script: Any, key_list: list[str], args: list[Any]) -> Any:
        """Run a script with the durability's wait after it (raises its error)."""
        call = ("EVALSHA", script.sha, len(key_list), *key_list, *args)
        (reply,) = await run_durable(self.redis, self.durability, [(key_list[0], call)])
        if isinstance(reply, NoScriptError):  # not run: Redis lost its scripts
            call = ("EVAL", script.script, len(key_list), *key_list, *args)
            (reply,) = await run_durable(self.redis, self.durability, [(key_list[0], call)])
        if isinstance(reply, Exception):
            raise reply
        return reply

    def _run_action_script(self, key_list: list[str], args: list[str | bytes]) -> Awaitable[Any]:
        """Run the action script; with batching, the calls made during one turn of the
        event loop go to Redis in one pipeline (each call still runs atomically on its own,
        with its own check-and-set: batching changes the round trips, not the guarantees)."""
        if not self.batch:
            return self._commit_action(keys=key_list, args=args)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((key_list, args, future))
        if len(self._pending) == 1:
            loop.call_soon(self._flush_soon)
        return future

    def _flush_soon(self) -> None:
        batch, self._pending = self._pending, []
        task = asyncio.get_running_loop().create_task(self._flush(batch))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(
        self, batch: list[tuple[list[str], list[str | bytes], asyncio.Future[Any]]]
    ) -> None:
        script = self._commit_action
        wait = self.durability.command
        replies: list[Any]
        try:
            if self._link is not None:
                commands = [("EVALSHA", script.sha, len(k), *k, *a) for k, a, _ in batch]
                replies = await self._link.run(commands if wait is None else [*commands, wait])
                if wait is not None:
                    replies = self._waited(replies)
                lost = [i for i, r in enumerate(replies) if type(r) is RedisConnectionError]
                if lost:  # once more on a new connection: each commit is a check-and-set
                    with contextlib.suppress(RedisError):  # no connection: they stay lost
                        retry = [commands[i] for i in lost]
                        again = await self._link.run(retry if wait is None else [*retry, wait])
                        if wait is not None:
                            again = self._waited(again)
                        for i, reply in zip(lost, again, strict=True):
                            replies[i] = reply
            else:  # a cluster: each master's commits on one connection, then its wait
                calls = [(k[0], ("EVALSHA", script.sha, len(k), *k, *a)) for k, a, _ in batch]
                replies = await run_durable(self.redis, self.durability, calls)
            for i, reply in enumerate(replies):
                if isinstance(reply, NoScriptError):  # not run: Redis lost its scripts
                    key_list, args, _ = batch[i]
                    try:
                        if wait is None:
                            replies[i] = await script(keys=key_list, args=args)
                        else:
                            replies[i] = await self._durable_script(script, key_list, args)
                    except RedisError as e:
                        replies[i] = e
        except BaseException as e:
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(e if isinstance(e, Exception) else RedisError(str(e)))
            if not isinstance(e, Exception):
                raise
            return
        for (_, _, future), reply in zip(batch, replies, strict=True):
            if future.done():
                continue
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    async def aclose(self) -> None:
        """Close the commits' connection (the client is closed by its owner)."""
        if self._link is not None:
            await self._link.aclose()

    async def answers(self) -> bool:
        """Whether Redis answers PING now (with the node's health client: one try, within
        a second)."""
        try:
            return bool(await self.health.ping())
        except (RedisError, OSError):
            return False

    async def now(self) -> float:
        """Redis's clock, in seconds."""
        with as_unavailable:
            sec, usec = await self.redis.time()
        return sec + usec / 1e6

    def _race_keys(self, race: Race) -> list[str]:
        code = race.code
        out = [
            keys.meta(code),
            keys.players(code),
            keys.events(code),
            keys.nodes(code),
            keys.online(code),
            keys.spectators(code),
            keys.hints(code),
        ]
        for pid in race.players:
            out += _player_keys(code, pid)
        if any(e.ghost for e in race.players.values()):
            out.append(keys.ghosts(code))
        return out

    async def commit(self, change: RaceChange, *, new: bool = False) -> int:
        """Apply a race change if the race's version is still ``change.base`` (with ``new``:
        if no race has its code). Returns the new version; Conflict when it lost."""
        race = change.race
        key_list = self._race_keys(race)
        for pid in change.removed:
            key_list += _player_keys(race.code, pid)
        index = {k: i + 1 for i, k in enumerate(key_list)}
        stored = [(str(audience), event_data(ev)) for audience, ev in change.events]
        payload = {
            "m": meta_fields(race) if change.meta or new else {},
            "ps": {e.player: entry_bytes(e) for e in change.players},
            "pd": list(change.removed),
            "h": [[index[keys.game(race.code, g.player)], game_fields(g)] for g in change.games]
            + ([[index[keys.ghosts(race.code)], change.ghost_runs]] if change.ghost_runs else []),
            "e": stored,
            "del": 1 if change.delete else 0,
        }
        ttl = self.settings.results_ttl if change.finished else self.settings.race_ttl
        args: list[str | bytes] = [
            "new" if new else str(change.base),
            keys.channel(race.code),
            str(ttl),
            str(self.settings.stream_max),
            pack_payload(payload),
            self.settings.node,
            repr(self.clock()),
        ]
        with as_unavailable:
            if self.durability.waits:
                ok, version = await self._durable_script(self._commit_race, key_list, args)
            else:
                ok, version = await self._commit_race(keys=key_list, args=args)
        if not ok:
            raise Conflict(f"race {race.code} is at version {version}, not {change.base}")
        if stored and not change.delete and self.on_commit is not None:
            self.on_commit(race.code, int(version), stored)
        if race.options.public:
            await self.committed_public(change, int(version))
        return int(version)

    async def committed_public(self, change: RaceChange, version: int) -> None:
        """A public race's change was committed at ``version``: its listing follows
        (:class:`~.lobby.LobbyCommands`)."""

    async def commit_action(
        self, race: Race, outcome: ActionOutcome, acked: Acked | None = None
    ) -> int:
        """Apply a player's action if their seq is still ``outcome.game.seq - 1`` and the
        race runs. Returns the race's new version; Conflict when the seq moved on,
        WrongState when the race is no longer running. Once committed, ``acked`` sends
        the mover's ack and then the events go to :attr:`on_commit`, so that the ack and
        the mover's progress leave in that order, in one write."""
        code, pid = race.code, outcome.game.player
        key_list = self._action_keys.get((code, pid))
        if key_list is None:
            if len(self._action_keys) >= 10_000:
                self._action_keys.clear()
            key_list = self._action_keys[(code, pid)] = [
                keys.meta(code),
                keys.players(code),
                keys.events(code),
                keys.game(code, pid),
                keys.actions(code, pid),
                keys.acks(code, pid),
                keys.nodes(code),
                keys.stack(code, pid),
                keys.marks(code, pid),
                keys.times(code, pid),
            ]
        args: list[str | bytes] = [
            str(outcome.game.seq - 1),
            pid,
            keys.channel(code),
            str(self.settings.race_ttl),
            str(self.settings.stream_max),
            self.settings.node,
            repr(self.clock()),
            outcome.action,
            outcome.ack_frame,
            entry_bytes(outcome.entry),
            str(len(outcome.stored_events)),
        ]
        for audience, data in outcome.stored_events:
            args += (audience, data)
        args.append(str(outcome.time_ms))
        for name, value in game_fields(outcome.game).items():
            args += (name, value)
        with as_unavailable:
            reply = await self._run_action_script(key_list, args)
        if reply[0] == 1:
            version = int(reply[1])
            if acked is not None:
                acked(outcome.ack_frame, (code, pid), version - len(outcome.stored_events))
            if self.on_commit is not None:
                self.on_commit(code, version, outcome.stored_events)
            return version
        if text(reply[1]) == "state":
            raise WrongState(f"race {code} is not running")
        raise Conflict(f"player {pid} is at seq {reply[2]}")
