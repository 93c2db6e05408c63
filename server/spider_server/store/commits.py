"""Committing :mod:`..race`'s decisions with the scripts of :mod:`.scripts`.

A race change is a check-and-set on the race's version, a player's action a check-and-set
on the player's seq; a lost check-and-set raises :class:`~..errors.Conflict` and the caller
decides again (:func:`.guard.check_and_set`). A commit returns what it committed
(:class:`Committed`: the version, the events, an action's ack); sending the ack and handing
the events to the hub is the caller's (the session, :mod:`..fanout.changes`): nothing here calls
up.

The players' actions committed together (one turn of the event loop; under load, what comes
within the commit spacing) go to Redis in one write, on a connection of their own
(:class:`~.redisconn.CommandLink`), as one script call that applies them in order, each
with its own check-and-set and its own answer: batching changes the round trips and the
calls, not the guarantees (README, "Under load"). On a cluster, where a batch spans hash
slots, each action is a call of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, NamedTuple

from redis.asyncio import Redis, RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError

from ..errors import Conflict, WrongState
from ..race import ActionOutcome, Game, Race, RaceChange, event_data
from ..settings import Settings
from . import keys
from .codec import changed_game_fields, entry_bytes, game_fields, meta_fields, pack_payload, text
from .durability import Durability, run_durable
from .guard import as_unavailable
from .redisconn import CommandLink
from .scripts import COMMIT_ACTIONS, COMMIT_RACE, RESAVE_ACK, sharded

__all__ = ["ACTIONS_A_CALL", "CommitLink", "Committed", "action_keys", "race_keys"]

ACTIONS_A_CALL = 128
"""Players' actions committed by one script call at most: a batch of more is written as
several calls in one pipeline (a call runs whole before Valkey serves anyone else)."""


class Committed(NamedTuple):
    """What one commit wrote: the race's new version and its events, in order (the last
    event has that version); for a player's action, its ack too."""

    code: str
    version: int
    events: Sequence[tuple[str, bytes]]
    """(audience, data) of each event, to go to the hub (none for a deleted race)."""
    ack: bytes = b""
    """A player's action: the mover's ack frame (empty for a race change)."""
    player: str = ""
    """A player's action: the mover."""
    upto: int = 0
    """A player's action: the last version before its events (the mover's progress held
    up to it is dropped: the ack carries their status and counts)."""


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


def action_keys(code: str, pid: str, layout: int = 1) -> list[str]:
    """The keys an action of ``pid`` in race ``code`` touches, in the action script's order
    (:data:`~.scripts.COMMIT_ACTIONS`: layout 2 has no ``times``)."""
    out = [
        keys.meta(code),
        keys.players(code),
        keys.events(code),
        keys.game(code, pid),
        keys.actions(code, pid),
        keys.acks(code, pid),
        keys.nodes(code),
        keys.stack(code, pid),
        keys.marks(code, pid),
    ]
    if layout == 1:
        out.append(keys.times(code, pid))
    return out


def race_keys(race: Race) -> list[str]:
    """Every key of ``race`` (its TTLs set together; deleted together)."""
    code = race.code
    out = [
        keys.meta(code),
        keys.players(code),
        keys.events(code),
        keys.nodes(code),
        keys.online(code),
        keys.spectators(code),
        keys.hints(code),
        keys.hint_lines(code),
    ]
    for pid in race.players:
        out += _player_keys(code, pid)
    if any(e.ghost for e in race.players.values()):
        out.append(keys.ghosts(code))
    return out


class CommitLink:
    """One node's commits of races and players' actions. Every method raises
    :class:`~..errors.Unavailable` when Redis does not answer."""

    def __init__(
        self,
        redis: Redis,
        settings: Settings,
        *,
        batch: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.redis = redis
        self.settings = settings
        self.clock = clock
        """The deployment's time (stamped on the events)."""
        # on a cluster, a race's events go out on its own shard (SPUBLISH, :mod:`..fanout.shards`)
        shard = sharded if isinstance(redis, RedisCluster) else str
        self._commit_race = redis.register_script(shard(COMMIT_RACE))
        self.layout = settings.store_layout
        """The layout a player's actions are written in (both are read)."""
        self._commit_action = redis.register_script(shard(COMMIT_ACTIONS[self.layout]))
        self.resave_ack = redis.register_script(RESAVE_ACK)
        self.batch = batch
        """Whether players' actions committed at the same moment share one round trip."""
        self._pending: list[tuple[list[str], list[str | bytes], asyncio.Future[Any]]] = []
        self._link = (
            CommandLink(redis, name=f"commits:{settings.node}")
            if batch and isinstance(redis, Redis)
            else None
        )
        """The commits' own pipelined connection (one Redis; a cluster uses pipelines)."""
        self._action_keys: dict[tuple[str, str], list[str]] = {}
        """The keys an action of (race, player) touches (kept for the next action)."""
        self._flushes: set[asyncio.Task[None]] = set()
        self._flushed_at = -math.inf
        """When the last batch was written (the event loop's clock)."""
        self.writes = 0
        """Batches of players' actions written so far."""
        self._alone: str | bytes | None = None
        """The player whose actions alone the last batch wrote (None: several players')."""
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

    async def durable_script(self, script: Any, key_list: list[str], args: list[Any]) -> Any:
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
        """Run the action script for one action; with batching, the actions committed
        together go to Redis in one script call (each still with its own check-and-set
        and its own answer: batching changes the round trips, not the guarantees)."""
        if not self.batch:
            return self._commit_one(key_list, args)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        self._pending.append((key_list, args, future))
        if len(self._pending) == 1:
            wait = self._flushed_at + self.settings.commit_spacing - loop.time()
            # the last write was just now, and not of this player's last action alone (a
            # player acting alone is never held back by their own): the next write gathers
            # what comes meanwhile
            if wait > 0 and args[1] != self._alone:
                loop.call_later(wait, self._flush_soon)
            else:
                loop.call_soon(self._flush_soon)
        return future

    def _shared_args(self) -> list[Any]:
        """The action script's arguments that every action of a call shares."""
        settings = self.settings
        return [settings.race_ttl, settings.stream_max, settings.node, repr(self.clock())]

    async def _commit_one(self, key_list: list[str], args: list[str | bytes]) -> Any:
        call_args = [*self._shared_args(), len(args), *args]
        (reply,) = await self._commit_action(keys=key_list, args=call_args)
        return reply

    def _flush_soon(self) -> None:
        batch, self._pending = self._pending, []
        loop = asyncio.get_running_loop()
        self._flushed_at = loop.time()
        self.writes += 1
        players = {args[1] for _, args, _ in batch}
        self._alone = players.pop() if len(players) == 1 else None
        task = loop.create_task(self._flush(batch))
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(
        self, batch: list[tuple[list[str], list[str | bytes], asyncio.Future[Any]]]
    ) -> None:
        """Send one batch and answer its commits."""
        try:
            replies = await self._send(batch)
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

    def _calls(
        self, batch: list[tuple[list[str], list[str | bytes], asyncio.Future[Any]]]
    ) -> list[tuple[Any, ...]]:
        """The script calls that commit a batch's actions in order, up to
        :data:`ACTIONS_A_CALL` a call (each action's keys, then its arguments' count and its
        arguments: :data:`~.scripts.COMMIT_ACTIONS`)."""
        sha = self._commit_action.sha
        calls = []
        for start in range(0, len(batch), ACTIONS_A_CALL):
            key_list: list[str] = []
            args: list[Any] = self._shared_args()
            for k, a, _ in batch[start : start + ACTIONS_A_CALL]:
                key_list += k
                args.append(len(a))
                args += a
            calls.append(("EVALSHA", sha, len(key_list), *key_list, *args))
        return calls

    async def _send(
        self, batch: list[tuple[list[str], list[str | bytes], asyncio.Future[Any]]]
    ) -> list[Any]:
        """One batch's replies (an error for each commit that failed). What has to be sent
        again (a lost connection; a script Redis lost, sent whole) goes on the commits' own
        connection, after what was sent meanwhile: the replies come back in the order the
        commits ran, so a race's events reach the hub in version order."""
        script = self._commit_action
        wait = self.durability.command
        replies: list[Any]
        if self._link is None:  # a cluster: each master's commits on one connection, then its wait
            calls = [(k[0], self._calls([(k, a, f)])[0]) for k, a, f in batch]
            replies = await run_durable(self.redis, self.durability, calls)
            for i, reply in enumerate(replies):
                if isinstance(reply, NoScriptError):  # not run: Redis lost its scripts
                    key_list, args, _ = batch[i]
                    try:
                        replies[i] = await self.durable_script(
                            script, key_list, [*self._shared_args(), len(args), *args]
                        )
                    except RedisError as e:
                        replies[i] = e
            return [r if isinstance(r, Exception) else r[0] for r in replies]
        commands = self._calls(batch)
        replies = await self._run_on_link(commands, wait)
        lost = [i for i, r in enumerate(replies) if type(r) is RedisConnectionError]
        if lost:  # once more on a new connection: each commit is a check-and-set
            with contextlib.suppress(RedisError):  # no connection: they stay lost
                again = await self._run_on_link([commands[i] for i in lost], wait)
                for i, reply in zip(lost, again, strict=True):
                    replies[i] = reply
        unknown = [i for i, r in enumerate(replies) if isinstance(r, NoScriptError)]
        if unknown:  # not run: Redis lost its scripts (EVAL caches it again)
            evals = [("EVAL", script.script, *commands[i][2:]) for i in unknown]
            try:
                again = await self._run_on_link(evals, wait)
            except RedisError as e:
                again = [e] * len(unknown)
            for i, reply in zip(unknown, again, strict=True):
                replies[i] = reply
        out: list[Any] = []
        for start, reply in zip(range(0, len(batch), ACTIONS_A_CALL), replies, strict=True):
            size = min(ACTIONS_A_CALL, len(batch) - start)
            out += [reply] * size if isinstance(reply, Exception) else reply
        return out

    async def _run_on_link(self, commands: list[tuple[Any, ...]], wait: Any) -> list[Any]:
        """Commands on the commits' connection, with the durability's wait after them."""
        assert self._link is not None
        replies = await self._link.run(commands if wait is None else [*commands, wait])
        return replies if wait is None else self._waited(replies)

    async def aclose(self) -> None:
        """Close the commits' connection (the client is closed by its owner)."""
        if self._link is not None:
            await self._link.aclose()

    def _race_keys(self, race: Race) -> list[str]:
        return race_keys(race)

    async def commit(self, change: RaceChange, *, new: bool = False) -> Committed:
        """Apply a race change if the race's version is still ``change.base`` (with ``new``:
        if no race has its code). Returns what was committed; Conflict when it lost."""
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
        ttl = self.settings.race_ttl
        if change.finished:  # with an archive, kept until archived (which shortens it)
            archive = self.settings.database_url is not None
            ttl = keys.UNARCHIVED_TTL if archive else self.settings.results_ttl
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
                ok, version = await self.durable_script(self._commit_race, key_list, args)
            else:
                ok, version = await self._commit_race(keys=key_list, args=args)
        if not ok:
            raise Conflict(f"race {race.code} is at version {version}, not {change.base}")
        return Committed(race.code, int(version), () if change.delete else stored)

    async def commit_action(
        self, race: Race, outcome: ActionOutcome, before: Game | None = None
    ) -> Committed:
        """Apply a player's action if their seq is still ``outcome.game.seq - 1`` and the
        race runs. Returns what was committed (with the mover's ack); Conflict when the
        seq moved on, WrongState when the race is no longer running. With ``before``, the
        game the action was decided on (the stored game, when the check-and-set holds),
        only the game's fields that changed are written."""
        code, pid = race.code, outcome.game.player
        key_list = self._action_keys.get((code, pid))
        if key_list is None:
            if len(self._action_keys) >= 10_000:
                self._action_keys.clear()
            key_list = self._action_keys[(code, pid)] = action_keys(code, pid, self.layout)
        args: list[str | bytes] = [
            str(outcome.game.seq - 1),
            pid,
            outcome.action,
            outcome.ack_frame,
            entry_bytes(outcome.entry),
            str(len(outcome.stored_events)),
        ]
        for audience, data in outcome.stored_events:
            args += (audience, data)
        args.append(str(outcome.time_ms))
        fields = (
            game_fields(outcome.game)
            if before is None
            else changed_game_fields(before, outcome.game)
        )
        for name, value in fields.items():
            args += (name, value)
        with as_unavailable:
            reply = await self._run_action_script(key_list, args)
        if reply[0] == 1:
            version = int(reply[1])
            events = outcome.stored_events
            return Committed(code, version, events, outcome.ack_frame, pid, version - len(events))
        if text(reply[1]) == "state":
            raise WrongState(f"race {code} is not running")
        raise Conflict(f"player {pid} is at seq {reply[2]}")
