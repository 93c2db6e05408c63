"""Finished races made as the server makes them, without a server: the race's own
transitions (create, join, ready, start, each action, finish) with the engine's random
legal moves, and the results settled as the node settles them (ratings when rated)."""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from spider_engine import Board
from spider_server.race import Race, RaceOptions
from spider_server.race.actions import apply_action
from spider_server.race.model import Game, Status
from spider_server.race.ratings import Change, Placing, Record, settle
from spider_server.race.transitions import create_race, finish, join, set_ready, start

__all__ = ["VARIANTS", "Finished", "Synthesizer"]

VARIANTS = ("spider1", "spider2", "spider4")


@dataclass(frozen=True)
class Finished:
    """A finished race with what the archive writes beside it."""

    race: Race
    changes: list[Change]
    records: dict[str, Record]
    actions: int


class Synthesizer:
    """Races between ``population`` players, ``players`` (low, high) to a race, each playing
    ``actions`` (low, high) random legal moves (deals from the stock included) about a
    second apart before resigning (or winning, or being stuck); every other race rated.
    The players' records carry over from race to race, as in Redis."""

    def __init__(
        self,
        *,
        seed: int = 2026,
        population: int = 500,
        players: tuple[int, int] = (2, 4),
        actions: tuple[int, int] = (100, 300),
    ) -> None:
        self.rng = random.Random(seed)
        self.population = population
        self.players = players
        self.actions = actions
        self.records: dict[str, Record] = {}
        self.made = 0
        self.clock = 1_780_000_000.0

    def race(self) -> Finished:
        rng = self.rng
        self.made += 1
        now = self.clock = self.clock + 700.0
        count = rng.randint(*self.players)
        who = rng.sample(range(self.population), count)
        ids = [f"p{n:06d}bench" for n in who]
        options = RaceOptions(
            variant=rng.choice(VARIANTS),
            max_players=count,
            time_limit=1800,
            undo=False,
            live_boards=False,
            countdown=0,
            rated=self.made % 2 == 0,
        )
        code = f"B{self.made:07d}"
        change = create_race(
            code=code,
            options=options,
            creator=ids[0],
            name=f"racer{who[0]}",
            now=now,
            seed=f"bench-archive-{self.made}",
        )
        race = change.race
        for pid, n in zip(ids[1:], who[1:], strict=True):
            joined = join(race, pid, f"racer{n}", now)
            assert joined is not None
            race = joined.race
        for pid in ids:
            ready = set_ready(race, pid, True, now)
            assert ready is not None
            race = ready.race
        started = start(race, now)
        race = started.race
        games = {g.player: g for g in started.games}
        replays: dict[str, list[str]] = {pid: [] for pid in ids}
        times: dict[str, list[int]] = {pid: [] for pid in ids}
        for pid in ids:
            race = self._play(
                race, games, replays[pid], times[pid], pid, rng.randint(*self.actions)
            )
        end = now + max(len(t) for t in replays.values()) * 1.1 + 1
        finished = finish(race, games, replays, end, times=times).race
        assert finished.final is not None
        changes, records = self._settle(finished, end)
        actions = sum(len(r) for r in finished.final.replays.values())
        return Finished(finished, changes, records, actions)

    def _play(
        self,
        race: Race,
        games: dict[str, Game],
        replay: list[str],
        times: list[int],
        pid: str,
        count: int,
    ) -> Race:
        """``pid`` plays up to ``count`` random legal moves, then resigns if still playing."""
        assert race.started_at is not None
        game = games[pid]
        board = Board.from_text(game.position)
        at = race.started_at
        for _ in range(count):
            if game.status != Status.PLAYING:
                break
            moves = board.legal_moves.texts()
            if not moves:
                break
            at += self.rng.uniform(0.3, 1.7)
            out = apply_action(race, game, "move", move=self.rng.choice(moves), now=at, board=board)
            game, board = out.game, out.board or Board.from_text(out.game.position)
            race = replace(race, players={**race.players, pid: out.entry})
            replay.append(out.action)
            times.append(out.time_ms)
        if game.status == Status.PLAYING:
            out = apply_action(race, game, "resign", now=at + 1)
            game = out.game
            race = replace(race, players={**race.players, pid: out.entry})
            replay.append(out.action)
            times.append(out.time_ms)
        games[pid] = game
        return race

    def _settle(self, race: Race, now: float) -> tuple[list[Change], dict[str, Record]]:
        assert race.final is not None
        placings = [
            Placing(player=r.player, name=r.name, rank=r.rank, status=r.status, time=r.time)
            for r in race.final.results
        ]
        settled = settle(
            code=race.code,
            variant=race.options.variant,
            rated=race.options.rated,
            placings=placings,
            records=self.records,
            now=now,
        )
        records = {}
        for rec in settled.records:
            stored = replace(rec, version=rec.version + 1)
            self.records[rec.player] = stored
            records[rec.player] = stored
        return settled.changes, records
