"""Reading races, games and their events, and the hints asked for in them.

Reads of a race (its meta hash and players hash) happen in one MULTI so they are one
moment's state; the writes are the commits (:mod:`.commits`). Every method raises
:class:`~..errors.Unavailable` when Redis does not answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgpack
from redis.asyncio import Redis

from spider_client.protocol import Ack

from ..race import Game, GhostRun, Race, UndoBase
from ..settings import Settings
from . import keys
from .codec import game_from, race_from, text
from .commits import CommitLink
from .guard import as_unavailable

__all__ = ["SWEEP_CHUNK", "RaceStore", "StoredEvent", "timed_actions"]

SWEEP_CHUNK = 128
"""Races whose version one pipeline of the sweep reads."""

StoredEvent = tuple[int, str, bytes]
"""An event as stored: (version, audience, data)."""


def timed_actions(
    entries: Sequence[bytes | str], stamps: Sequence[bytes | str]
) -> tuple[list[str], list[int] | None]:
    """A player's actions and their race times (ms) from their keys: each entry of the
    actions is the action alone (layout 1, its time in ``stamps``, in order) or the action
    and its time, ``<action> <time>`` (layout 2); a game whose node changed layouts has
    layout 1's entries first. The times are None unless every action has one (a race from
    before times were kept)."""
    actions: list[str] = []
    times: list[int] = []
    apart = iter(stamps)
    for entry in entries:
        action, _, stamp = text(entry).partition(" ")
        actions.append(action)
        kept = stamp or next(apart, None)
        if kept is not None:
            times.append(int(kept))
    whole = len(times) == len(actions) and next(apart, None) is None
    return actions, times if whole else None


class RaceStore:
    """The races, their players' games and their events, read (the writes are
    :class:`~.commits.CommitLink`'s). Every method raises
    :class:`~..errors.Unavailable` when Redis does not answer."""

    def __init__(self, redis: Redis, settings: Settings, commits: CommitLink) -> None:
        self.redis = redis
        self.settings = settings
        self.commits = commits
        """The commits (an ack resaved once durable goes through their connection)."""

    # -- races ------------------------------------------------------------------------------

    async def load_race(self, code: str) -> Race | None:
        """The race now, or None when there is no race with that code."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hgetall(keys.meta(code))
                pipe.hgetall(keys.players(code))
                meta, players = await pipe.execute()
        if not meta or b"state" not in meta:
            return None
        return race_from(meta, players)

    async def race_version(self, code: str) -> int | None:
        with as_unavailable:
            value = await self.redis.hget(keys.meta(code), "version")
        return None if value is None else int(value)

    # -- games ------------------------------------------------------------------------------

    async def load_for_action(self, code: str, player: str) -> tuple[Race | None, Game | None]:
        """The race and the player's game, read at one moment (one round trip)."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hgetall(keys.meta(code))
                pipe.hgetall(keys.players(code))
                pipe.hgetall(keys.game(code, player))
                meta, players, game = await pipe.execute()
        if not meta or b"state" not in meta:
            return None, None
        return race_from(meta, players), (game_from(game) if game else None)

    async def load_game(self, code: str, player: str) -> Game | None:
        with as_unavailable:
            h = await self.redis.hgetall(keys.game(code, player))
        return game_from(h) if h else None

    async def load_games(self, race: Race) -> tuple[dict[str, Game], dict[str, list[str]]]:
        """Every player's game and actions (players without a game are left out)."""
        games, replays, _ = await self.load_timed_games(race)
        return games, replays

    async def load_timed_games(
        self, race: Race
    ) -> tuple[dict[str, Game], dict[str, list[str]], dict[str, list[int]]]:
        """Every player's game, actions and their times in ms (players without a game are
        left out; so are the times of a player whose times are not one per action, as in
        a race from before they were kept)."""
        with as_unavailable:
            async with self.redis.pipeline(transaction=True) as pipe:
                for pid in race.players:
                    pipe.hgetall(keys.game(race.code, pid))
                    pipe.lrange(keys.actions(race.code, pid), 0, -1)
                    pipe.lrange(keys.times(race.code, pid), 0, -1)
                replies = await pipe.execute()
        games: dict[str, Game] = {}
        replays: dict[str, list[str]] = {}
        times: dict[str, list[int]] = {}
        for i, pid in enumerate(race.players):
            h, acts, stamps = replies[3 * i : 3 * i + 3]
            if h:
                games[pid] = game_from(h)
                replays[pid], timed = timed_actions(acts, stamps)
                if timed is not None:
                    times[pid] = timed
        return games, replays, times

    async def load_ghost_runs(self, code: str) -> dict[str, GhostRun]:
        """The recorded runs of a race's ghosts, by ghost id (none: an empty map)."""
        with as_unavailable:
            h = await self.redis.hgetall(keys.ghosts(code))
        return {
            text(k): GhostRun.unpack(v if isinstance(v, bytes) else v.encode())
            for k, v in sorted(h.items())
        }

    async def load_actions(self, code: str, player: str) -> list[str]:
        with as_unavailable:
            acts = await self.redis.lrange(keys.actions(code, player), 0, -1)
        return timed_actions(acts, ())[0]

    async def load_undo(self, code: str, player: str) -> UndoBase | None:
        """What an undo of the player rebuilds from (:class:`~..race.UndoBase`: the mark
        below their last standing move and the fewer than ``UNDO_MARK`` moves after it),
        read in two round trips whatever the game's length (the depth is the standing
        moves' count); None when the mark is missing (replay the game's actions)."""
        with as_unavailable:
            depth = int(await self.redis.llen(keys.stack(code, player)))
            if depth <= 0:
                return UndoBase(0, None, ())
            below = (depth - 1) // keys.UNDO_MARK * keys.UNDO_MARK
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hget(keys.marks(code, player), str(below))
                if depth - 1 > below:  # (an end of -1 would mean the list's end)
                    pipe.lrange(keys.stack(code, player), below, depth - 2)
                mark, *rest = await pipe.execute()
            moves = rest[0] if rest else []
        if below and mark is None:
            return None  # pragma: no cover - a mark is kept at every multiple reached
        return UndoBase(depth, None if mark is None else text(mark), [text(m) for m in moves])

    async def load_ack(self, code: str, player: str, seq: int) -> Ack | None:
        """The ack sent for action ``seq`` of the player, if applied."""
        with as_unavailable:
            commits = self.commits
            if commits.durability.waits:  # acked only once the action is saved
                data = await commits.durable_script(
                    commits.resave_ack, [keys.acks(code, player)], [str(seq)]
                )
            else:
                data = await self.redis.hget(keys.acks(code, player), str(seq))
        if data is None:
            return None
        fields = msgpack.unpackb(data, raw=False)
        fields.pop("type", None)
        return Ack(**fields)

    # -- events -----------------------------------------------------------------------------

    async def events_after(
        self, code: str, since: int, upto: int | None = None
    ) -> list[StoredEvent] | None:
        """The events with versions in (since, upto], in order; None when the stream no
        longer holds the one right after ``since`` (trimmed or expired)."""
        if upto is not None and upto <= since:
            return []
        with as_unavailable:
            entries = await self.redis.xrange(
                keys.events(code), min=f"{since + 1}-0", max="+" if upto is None else f"{upto}-0"
            )
        out: list[StoredEvent] = []
        for _id, f in entries or []:
            assert f is not None
            data = f[b"d"]
            out.append(
                (int(f[b"v"]), text(f[b"a"]), data if isinstance(data, bytes) else data.encode())
            )
        if out and out[0][0] != since + 1:
            return None
        if not out and upto is not None:
            return None
        return out

    async def boards(self, race: Race, *, full: bool) -> dict[str, str]:
        """Every player's position now (``full``) or view."""
        from spider_engine import Board

        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                for pid in race.players:
                    pipe.hget(keys.game(race.code, pid), "position")
                positions = await pipe.execute()
        out: dict[str, str] = {}
        for pid, pos in zip(race.players, positions, strict=True):
            if pos is None:
                continue
            position = text(pos)
            out[pid] = position if full else Board.from_text(position).view_text()
        return out

    # -- hints ------------------------------------------------------------------------------

    async def add_hint(self, code: str, player: str) -> int:
        """Count a hint the player asked for; the player's count now."""
        key = keys.hints(code)
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hincrby(key, player, 1)
                pipe.expire(key, self.settings.race_ttl)
                count, _ = await pipe.execute()
        return int(count)

    async def hints_of(self, code: str, player: str) -> int:
        """Hints the player asked for in the race so far."""
        with as_unavailable:
            count = await self.redis.hget(keys.hints(code), player)
        return int(count or 0)

    async def load_hints(self, code: str) -> dict[str, int]:
        """Hints asked for, by player."""
        with as_unavailable:
            h = await self.redis.hgetall(keys.hints(code))
        return {text(k): int(v) for k, v in h.items()}

    async def keep_hint_line(
        self, code: str, player: str, position: str, line: Sequence[str]
    ) -> bool:
        """Keep the winning line from the deal a hint gave ``player``: their standing moves
        to ``position`` (the hinted one), then the solver's ``line`` from it; not when they
        have moved on since or a line no longer is kept. Whether it was kept."""
        lines = keys.hint_lines(code)
        with as_unavailable:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.hget(keys.game(code, player), "position")
                pipe.lrange(keys.stack(code, player), 0, -1)
                pipe.hget(lines, player)
                now, stack, kept = await pipe.execute()
        if now is None or text(now) != position:
            return False  # moved on (or no such game)
        whole = [text(m) for m in stack] + list(line)
        if kept is not None and len(msgpack.unpackb(kept, raw=False)) <= len(whole):
            return False
        with as_unavailable:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.hset(lines, player, msgpack.packb(whole))
                pipe.expire(lines, self.settings.race_ttl)
                await pipe.execute()
        return True

    async def hint_lines(self, code: str) -> list[list[str]]:
        """The winning lines from the deal hints gave, one a player at most."""
        with as_unavailable:
            kept = await self.redis.hvals(keys.hint_lines(code))
        return [[str(m) for m in msgpack.unpackb(v, raw=False)] for v in kept]

    async def race_versions(self, codes: Sequence[str]) -> list[int | None]:
        """Each race's version now (None: no such race), read in pipelines of
        :data:`SWEEP_CHUNK` (short turns of the event loop)."""
        versions: list[int | None] = []
        with as_unavailable:
            for start in range(0, len(codes), SWEEP_CHUNK):
                async with self.redis.pipeline(transaction=False) as pipe:
                    for code in codes[start : start + SWEEP_CHUNK]:
                        pipe.hget(keys.meta(code), "version")
                    versions += [None if v is None else int(v) for v in await pipe.execute()]
        return versions
