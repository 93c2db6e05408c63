"""Races in Redis: reading them, and committing :mod:`.race`'s decisions with the scripts.

Reads of a race (its meta hash and players hash) happen in one MULTI so they are one
moment's state. Writes go only through the two scripts of :mod:`.scripts`: a race change is
a check-and-set on the race's version, a player's action a check-and-set on the player's
seq. A lost check-and-set raises :class:`~.errors.Conflict`; the caller reloads and decides
again. Event data is msgpack of the event without its version; :func:`stamp` adds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import msgpack
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, RedisError

from spider_client.protocol import Ack, Result, pack

from . import keys
from .errors import Conflict, Unavailable, WrongState
from .race import (
    ActionOutcome,
    Entry,
    Final,
    Game,
    Race,
    RaceChange,
    RaceOptions,
    RaceState,
    event_data,
)
from .redisconn import CommandLink
from .scripts import COMMIT_ACTION, COMMIT_RACE
from .settings import Settings

__all__ = ["Store", "StoredEvent", "event_data", "stamp"]

PRESENCE_CHUNK = 32
"""Races whose presence one pipeline renews."""

StoredEvent = tuple[int, str, bytes]
"""An event as stored: (version, audience, data)."""


_VERSION_KEY = msgpack.packb("version")


def stamp(version: int, data: bytes) -> tuple[bytes, dict[str, Any]]:
    """The frame of a stored event with its version, and the event as a map."""
    fields = msgpack.unpackb(data, raw=False)
    n = len(fields)
    fields["version"] = version
    if n < 15 and data[0] == 0x80 | n and len(fields) == n + 1:
        # a small map without a version: the same bytes with the version added at the end
        frame = bytes((0x80 | (n + 1),)) + data[1:] + _VERSION_KEY + msgpack.packb(version)
        return frame, fields
    return bytes(msgpack.packb(fields, use_bin_type=True)), fields


def _s(value: bytes | str | None) -> str:
    if value is None:
        return ""
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _opt_float(value: bytes | str | None) -> float | None:
    text = _s(value)
    return float(text) if text else None


def _num(value: float | int | None) -> str:
    return "" if value is None else repr(value)


def _pack(obj: Any) -> bytes:
    return bytes(msgpack.packb(obj, use_bin_type=False))


def _entry_bytes(entry: Entry) -> bytes:
    return pack(entry)


def _entry_from(data: bytes) -> Entry:
    return Entry(**msgpack.unpackb(data, raw=False))


def _meta_fields(race: Race) -> dict[str, str | bytes]:
    o = race.options
    fields: dict[str, str | bytes] = {
        "code": race.code,
        "variant": o.variant,
        "max_players": str(o.max_players),
        "time_limit": str(o.time_limit),
        "undo": "1" if o.undo else "0",
        "live_boards": "1" if o.live_boards else "0",
        "countdown": str(o.countdown),
        "winnable": "1" if o.winnable else "0",
        "hints": "1" if o.hints else "0",
        "daily": o.daily,
        "preparing": "1" if race.preparing else "0",
        "state": race.state.value,
        "creator": race.creator,
        "created_at": _num(race.created_at),
        "seed": race.seed,
        "salt": race.salt,
        "commitment": race.commitment,
        "next_order": str(race.next_order),
        "starts_at": _num(race.starts_at),
        "started_at": _num(race.started_at),
        "ends_at": _num(race.ends_at),
    }
    if race.final is not None:
        f = race.final
        fields["final"] = pack({"results": f.results, "replays": f.replays, "boards": f.boards})
    return fields


def _race_from(meta: dict[Any, Any], players: dict[Any, Any]) -> Race:
    m = {_s(k): v for k, v in meta.items()}
    entries = sorted((_entry_from(v) for v in players.values()), key=lambda e: e.order)
    final = None
    if m.get("final"):
        f = msgpack.unpackb(m["final"], raw=False)
        final = Final(
            results=[Result(**r) for r in f["results"]], replays=f["replays"], boards=f["boards"]
        )
    return Race(
        code=_s(m["code"]),
        options=RaceOptions(
            variant=_s(m["variant"]),
            max_players=int(m["max_players"]),
            time_limit=int(m["time_limit"]),
            undo=m["undo"] == b"1",
            live_boards=m["live_boards"] == b"1",
            countdown=int(m["countdown"]),
            winnable=m.get("winnable") == b"1",
            hints=m.get("hints") == b"1",
            daily=_s(m.get("daily")),
        ),
        state=RaceState(_s(m["state"])),
        version=int(m.get("version", b"0")),
        creator=_s(m["creator"]),
        created_at=float(m["created_at"]),
        seed=_s(m["seed"]),
        salt=_s(m["salt"]),
        commitment=_s(m["commitment"]),
        players={e.player: e for e in entries},
        next_order=int(m.get("next_order", b"0")),
        starts_at=_opt_float(m.get("starts_at")),
        started_at=_opt_float(m.get("started_at")),
        ends_at=_opt_float(m.get("ends_at")),
        final=final,
        preparing=m.get("preparing") == b"1",
    )


def _game_fields(game: Game) -> dict[str, str]:
    return {
        "player": game.player,
        "seq": str(game.seq),
        "position": game.position,
        "status": game.status,
        "moves": str(game.moves),
        "turned_up": str(game.turned_up),
        "runs": str(game.runs),
        "deals_left": str(game.deals_left),
        "score": str(game.score),
        "time": _num(game.time),
        "down0": str(game.down0),
        "suited": str(game.suited),
        "raised_at": repr(game.raised_at),
    }


def _game_from(h: dict[Any, Any]) -> Game:
    m = {_s(k): v for k, v in h.items()}
    return Game(
        player=_s(m["player"]),
        seq=int(m["seq"]),
        position=_s(m["position"]),
        status=_s(m["status"]),
        moves=int(m["moves"]),
        turned_up=int(m["turned_up"]),
        runs=int(m["runs"]),
        deals_left=int(m["deals_left"]),
        score=int(m["score"]),
        time=_opt_float(m.get("time")),
        down0=int(m["down0"]),
        suited=int(m.get("suited") or 0),
        raised_at=float(m.get("raised_at") or 0.0),
    )


class Store:
    """One node's access to the races in Redis. Every method raises
    :class:`~.errors.Unavailable` when Redis does not answer."""

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
        """The deployment's time (claims to watch races expire by it)."""
        self.on_commit: Callable[[str, int, Sequence[tuple[str, bytes]]], None] | None = None
        """Called with (code, version, events) when a race change this node made is
        committed: the node dispatches its own events (the channel carries them only to
        the other nodes)."""
        self._commit_race = redis.register_script(COMMIT_RACE)
        self._commit_action = redis.register_script(COMMIT_ACTION)
        self.batch = batch
        """Whether players' actions committed at the same moment share one round trip."""
        self._pending: list[tuple[list[str], list[str | bytes], asyncio.Future[Any]]] = []
        self._link = CommandLink(redis) if batch and isinstance(redis, Redis) else None
        """The commits' own pipelined connection (one Redis; a cluster uses pipelines)."""
        self._action_keys: dict[tuple[str, str], list[str]] = {}
        """The keys an action of (race, player) touches (kept for the next action)."""
        self._flushes: set[asyncio.Task[None]] = set()

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
        replies: list[Any]
        try:
            if self._link is not None:
                commands = [("EVALSHA", script.sha, len(k), *k, *a) for k, a, _ in batch]
                replies = await self._link.run(commands)
                lost = [i for i, r in enumerate(replies) if type(r) is RedisConnectionError]
                if lost:  # once more on a new connection: each commit is a check-and-set
                    with contextlib.suppress(RedisError):  # no connection: they stay lost
                        again = await self._link.run([commands[i] for i in lost])
                        for i, reply in zip(lost, again, strict=True):
                            replies[i] = reply
            elif len(batch) == 1:
                key_list, args, _ = batch[0]
                replies = [await script(keys=key_list, args=args)]
            else:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key_list, args, _ in batch:
                        pipe.evalsha(script.sha, len(key_list), *key_list, *args)
                    replies = await pipe.execute(raise_on_error=False)
            for i, reply in enumerate(replies):
                if isinstance(reply, NoScriptError):  # not run: Redis lost its scripts
                    key_list, args, _ = batch[i]
                    try:
                        replies[i] = await script(keys=key_list, args=args)
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

    async def now(self) -> float:
        """Redis's clock, in seconds."""
        try:
            sec, usec = await self.redis.time()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return sec + usec / 1e6

    # -- races ------------------------------------------------------------------------------

    async def load_race(self, code: str) -> Race | None:
        """The race now, or None when there is no race with that code."""
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hgetall(keys.meta(code))
                pipe.hgetall(keys.players(code))
                meta, players = await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        if not meta or b"state" not in meta:
            return None
        return _race_from(meta, players)

    async def race_version(self, code: str) -> int | None:
        try:
            value = await self.redis.hget(keys.meta(code), "version")
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return None if value is None else int(value)

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
            out += [keys.game(code, pid), keys.actions(code, pid), keys.acks(code, pid)]
        return out

    async def commit(self, change: RaceChange, *, new: bool = False) -> int:
        """Apply a race change if the race's version is still ``change.base`` (with ``new``:
        if no race has its code). Returns the new version; Conflict when it lost."""
        race = change.race
        key_list = self._race_keys(race)
        for pid in change.removed:
            key_list += [
                keys.game(race.code, pid),
                keys.actions(race.code, pid),
                keys.acks(race.code, pid),
            ]
        index = {k: i + 1 for i, k in enumerate(key_list)}
        stored = [(str(audience), event_data(ev)) for audience, ev in change.events]
        payload = {
            "m": _meta_fields(race) if change.meta or new else {},
            "ps": {e.player: _entry_bytes(e) for e in change.players},
            "pd": list(change.removed),
            "h": [[index[keys.game(race.code, g.player)], _game_fields(g)] for g in change.games],
            "e": stored,
            "del": 1 if change.delete else 0,
        }
        ttl = self.settings.results_ttl if change.finished else self.settings.race_ttl
        args: list[str | bytes] = [
            "new" if new else str(change.base),
            keys.channel(race.code),
            str(ttl),
            str(self.settings.stream_max),
            _pack(payload),
            self.settings.node,
            repr(self.clock()),
        ]
        try:
            ok, version = await self._commit_race(keys=key_list, args=args)
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        if not ok:
            raise Conflict(f"race {race.code} is at version {version}, not {change.base}")
        if stored and not change.delete and self.on_commit is not None:
            self.on_commit(race.code, int(version), stored)
        return int(version)

    # -- games ------------------------------------------------------------------------------

    async def load_for_action(self, code: str, player: str) -> tuple[Race | None, Game | None]:
        """The race and the player's game, read at one moment (one round trip)."""
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hgetall(keys.meta(code))
                pipe.hgetall(keys.players(code))
                pipe.hgetall(keys.game(code, player))
                meta, players, game = await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        if not meta or b"state" not in meta:
            return None, None
        return _race_from(meta, players), (_game_from(game) if game else None)

    async def load_game(self, code: str, player: str) -> Game | None:
        try:
            h = await self.redis.hgetall(keys.game(code, player))
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return _game_from(h) if h else None

    async def load_games(self, race: Race) -> tuple[dict[str, Game], dict[str, list[str]]]:
        """Every player's game and actions (players without a game are left out)."""
        try:
            async with self.redis.pipeline(transaction=True) as pipe:
                for pid in race.players:
                    pipe.hgetall(keys.game(race.code, pid))
                    pipe.lrange(keys.actions(race.code, pid), 0, -1)
                replies = await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        games: dict[str, Game] = {}
        replays: dict[str, list[str]] = {}
        for i, pid in enumerate(race.players):
            h, acts = replies[2 * i], replies[2 * i + 1]
            if h:
                games[pid] = _game_from(h)
                replays[pid] = [_s(a) for a in acts]
        return games, replays

    async def load_actions(self, code: str, player: str) -> list[str]:
        try:
            acts = await self.redis.lrange(keys.actions(code, player), 0, -1)
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return [_s(a) for a in acts]

    async def load_ack(self, code: str, player: str, seq: int) -> Ack | None:
        """The ack sent for action ``seq`` of the player, if applied."""
        try:
            data = await self.redis.hget(keys.acks(code, player), str(seq))
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        if data is None:
            return None
        fields = msgpack.unpackb(data, raw=False)
        fields.pop("type", None)
        return Ack(**fields)

    async def commit_action(self, race: Race, outcome: ActionOutcome) -> int:
        """Apply a player's action if their seq is still ``outcome.game.seq - 1`` and the
        race runs. Returns the race's new version; Conflict when the seq moved on,
        WrongState when the race is no longer running."""
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
            _entry_bytes(outcome.entry),
            str(len(outcome.stored_events)),
        ]
        for audience, data in outcome.stored_events:
            args += (audience, data)
        for name, value in _game_fields(outcome.game).items():
            args += (name, value)
        try:
            reply = await self._run_action_script(key_list, args)
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        if reply[0] == 1:
            return int(reply[1])
        if _s(reply[1]) == "state":
            raise WrongState(f"race {code} is not running")
        raise Conflict(f"player {pid} is at seq {reply[2]}")

    # -- events -----------------------------------------------------------------------------

    async def events_after(
        self, code: str, since: int, upto: int | None = None
    ) -> list[StoredEvent] | None:
        """The events with versions in (since, upto], in order; None when the stream no
        longer holds the one right after ``since`` (trimmed or expired)."""
        if upto is not None and upto <= since:
            return []
        try:
            entries = await self.redis.xrange(
                keys.events(code), min=f"{since + 1}-0", max="+" if upto is None else f"{upto}-0"
            )
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        out: list[StoredEvent] = []
        for _id, f in entries or []:
            assert f is not None
            data = f[b"d"]
            out.append(
                (int(f[b"v"]), _s(f[b"a"]), data if isinstance(data, bytes) else data.encode())
            )
        if out and out[0][0] != since + 1:
            return None
        if not out and upto is not None:
            return None
        return out

    # -- presence ---------------------------------------------------------------------------

    async def touch_presence(self, items: list[tuple[str, str, bool]], now: float) -> None:
        """Claim, until ``now + presence_ttl``, that members watch races: (code, member,
        is_spectator) each."""
        expiry = now + self.settings.presence_ttl
        members: dict[str, dict[str, float]] = {}
        for code, member, spectator in items:
            key = keys.spectators(code) if spectator else keys.online(code)
            members.setdefault(key, {})[member] = expiry
        await self._claim(members, now)

    async def claim_watch(self, codes: Sequence[str], now: float) -> None:
        """Claim, until ``now + presence_ttl``, that this node watches these races: their
        events are then published for it."""
        expiry = now + self.settings.presence_ttl
        await self._claim({keys.nodes(code): {self.settings.node: expiry} for code in codes}, now)

    async def _claim(self, claims: dict[str, dict[str, float]], now: float) -> None:
        """Add each key's claims (member -> expiry) to its sorted set, dropping the claims
        that expired by ``now`` (of nodes that died). One ZADD a key, in pipelines of a few
        dozen keys: a node with thousands of connections never holds the event loop for
        long building or reading one."""
        todo = list(claims.items())
        try:
            for start in range(0, len(todo), PRESENCE_CHUNK):
                async with self.redis.pipeline(transaction=False) as pipe:
                    for key, members in todo[start : start + PRESENCE_CHUNK]:
                        pipe.zremrangebyscore(key, "-inf", now)
                        pipe.zadd(key, members)
                        pipe.expire(key, self.settings.race_ttl)
                    await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None

    async def drop_watch(self, code: str) -> None:
        """This node no longer watches the race."""
        try:
            await self.redis.zrem(keys.nodes(code), self.settings.node)
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None

    async def drop_presence(self, code: str, member: str, spectator: bool) -> None:
        key = keys.spectators(code) if spectator else keys.online(code)
        try:
            await self.redis.zrem(key, member)
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None

    async def presence(self, code: str, now: float) -> tuple[set[str], int]:
        """Players connected to a race now, and how many spectators watch it."""
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zrangebyscore(keys.online(code), now, "+inf")
                pipe.zcount(keys.spectators(code), now, "+inf")
                online, spectators = await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return {_s(m).split("|", 1)[0] for m in online}, int(spectators)

    async def boards(self, race: Race, *, full: bool) -> dict[str, str]:
        """Every player's position now (``full``) or view."""
        from spider_engine import Board

        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for pid in race.players:
                    pipe.hget(keys.game(race.code, pid), "position")
                positions = await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        out: dict[str, str] = {}
        for pid, pos in zip(race.players, positions, strict=True):
            if pos is None:
                continue
            text = _s(pos)
            out[pid] = text if full else Board.from_text(text).view_text()
        return out

    # -- hints ------------------------------------------------------------------------------

    async def add_hint(self, code: str, player: str) -> int:
        """Count a hint the player asked for; the player's count now."""
        key = keys.hints(code)
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hincrby(key, player, 1)
                pipe.expire(key, self.settings.race_ttl)
                count, _ = await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return int(count)

    async def load_hints(self, code: str) -> dict[str, int]:
        """Hints asked for, by player."""
        try:
            h = await self.redis.hgetall(keys.hints(code))
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return {_s(k): int(v) for k, v in h.items()}

    # -- players' races ---------------------------------------------------------------------

    async def player_races(self, player: str) -> list[str]:
        try:
            codes = await self.redis.zrange(keys.player_races(player), 0, -1)
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return [_s(c) for c in codes if isinstance(c, (bytes, str))]

    async def add_player_race(self, player: str, code: str) -> None:
        key = keys.player_races(player)
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.zadd(key, {code: time.time()})
                pipe.expire(key, keys.PLAYER_RACES_TTL)
                await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None

    async def drop_player_races(self, player: str, codes: list[str]) -> None:
        if not codes:
            return
        try:
            await self.redis.zrem(keys.player_races(player), *codes)
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None

    async def race_states(self, codes: list[str]) -> list[str | None]:
        try:
            async with self.redis.pipeline(transaction=False) as pipe:
                for code in codes:
                    pipe.hget(keys.meta(code), "state")
                states = await pipe.execute()
        except RedisError as e:
            raise Unavailable(f"storage: {e}") from None
        return [None if s is None else _s(s) for s in states]
