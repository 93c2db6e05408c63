"""Ghosts: recorded runs of finished games replayed in a new race on the same deal.

A ghost is a player entry marked ``ghost`` whose actions are not sent by anyone: each is
the recorded run's next action, due at the race's start plus the time it was recorded at
(:func:`next_due`). Whichever node emits it commits it like a player's action, with the
check-and-set on the ghost's game seq, so an action is applied once however many nodes
try (:func:`ghost_outcome`). A ghost is always ready, never counts for the race's end
(:func:`~.transitions.due_transition` looks at live players only) and, when the live
players are done, is ranked by its recorded result (:func:`finish_ghosts`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import msgpack

from spider_engine import Board, find_variant

from ..errors import InvalidMessage
from .actions import apply_action
from .fairness import revealed
from .model import TERMINAL, ActionKind, ActionOutcome, Entry, Game, Race, RaceChange, RaceState

__all__ = [
    "MAX_GHOSTS",
    "GhostRun",
    "add_ghosts",
    "finish_ghosts",
    "ghost_id",
    "ghost_outcome",
    "next_due",
    "run_of",
]

MAX_GHOSTS = 5
"""The most ghosts one race may include."""


def ghost_id(index: int) -> str:
    """The player id of a race's ghost number ``index`` (0 first)."""
    return f"ghost{index + 1}"


@dataclass(kw_only=True)
class GhostRun:
    """A recorded run: the source race and player, and the actions with their race times
    in ms (non-decreasing, one per action)."""

    race: str
    player: str
    name: str
    actions: list[str]
    times: list[int]

    def pack(self) -> bytes:
        data: bytes = msgpack.packb(
            {
                "race": self.race,
                "player": self.player,
                "name": self.name,
                "actions": self.actions,
                "times": self.times,
            },
            use_bin_type=True,
        )
        return data

    @classmethod
    def unpack(cls, data: bytes) -> GhostRun:
        m: dict[str, Any] = msgpack.unpackb(data, raw=False)
        return cls(
            race=m["race"],
            player=m["player"],
            name=m["name"],
            actions=list(m["actions"]),
            times=[int(t) for t in m["times"]],
        )


def run_of(
    source: Race,
    player: str,
    *,
    variant: str,
    undo: bool,
    time_limit: int,
    now: float,
    daily: str = "",
) -> GhostRun:
    """The recorded run of ``player`` in the finished race ``source``, to be raced by a new
    race with these options. InvalidMessage unless ``source`` is finished and revealed at
    ``now`` (or is a daily race of the same day and variant, for a daily race: its cards
    stay hidden there until the day is over), on the same variant, undo and time limit,
    and the player's run was kept with its times."""
    if source.state is not RaceState.FINISHED or source.final is None:
        raise InvalidMessage(f"ghosts: race {source.code} is not finished")
    same_day = bool(daily) and source.options.daily == daily
    if not revealed(source, now) and not same_day:
        raise InvalidMessage(f"ghosts: race {source.code} is revealed when its day is over")
    if daily and not same_day:
        raise InvalidMessage("ghosts: a daily race races runs of its own day's deal")
    o = source.options
    if (o.variant, o.undo, o.time_limit) != (variant, undo, time_limit):
        raise InvalidMessage(
            f"ghosts: race {source.code} was {o.variant}, undo {o.undo}, "
            f"time limit {o.time_limit}: the race must have the same"
        )
    entry = source.players.get(player)
    actions = source.final.replays.get(player)
    times = source.final.times.get(player)
    if entry is None or actions is None:
        raise InvalidMessage(f"ghosts: no player {player} in race {source.code}")
    if times is None or len(times) != len(actions):
        raise InvalidMessage(f"ghosts: race {source.code} kept no times of {player}'s run")
    return GhostRun(race=source.code, player=player, name=entry.name, actions=actions, times=times)


def add_ghosts(change: RaceChange, runs: list[GhostRun]) -> None:
    """Put the ghosts of ``runs`` into a new race's creation ``change``: each a ready
    player entry marked ``ghost``, its run written with the race."""
    if len(runs) > MAX_GHOSTS:
        raise InvalidMessage(f"ghosts: at most {MAX_GHOSTS}")
    race = change.race
    players = dict(race.players)
    order = race.next_order
    deals = len(find_variant(race.options.variant).stock_deals)
    for i, run in enumerate(runs):
        gid = ghost_id(i)
        entry = Entry(
            player=gid, name=run.name, order=order, ready=True, deals_left=deals, ghost=True
        )
        order += 1
        players[gid] = entry
        change.players.append(entry)
        change.ghost_runs[gid] = run.pack()
    change.race = replace(race, players=players, next_order=order)


def next_due(race: Race, game: Game, run: GhostRun) -> float | None:
    """When the ghost's next action is due (the deployment's time), or None when its run
    has no more or its game is over."""
    if race.started_at is None or game.status in TERMINAL or game.seq >= len(run.actions):
        return None
    return race.started_at + run.times[game.seq] / 1000


def _kind(action: str) -> tuple[ActionKind, str]:
    if action == "undo":
        return "undo", ""
    if action == "resign":
        return "resign", ""
    return "move", action


def ghost_outcome(
    race: Race, game: Game, run: GhostRun, board: Board | None = None
) -> ActionOutcome:
    """The ghost's next recorded action (number ``game.seq + 1``) applied at its recorded
    race time, for a check-and-set on the ghost's seq like a player's action."""
    assert race.started_at is not None
    action = run.actions[game.seq]
    kind, move = _kind(action)
    return apply_action(
        race,
        game,
        kind,
        move=move,
        actions=run.actions[: game.seq],
        now=race.started_at + run.times[game.seq] / 1000,
        board=board,
    )


def finish_ghosts(
    race: Race, games: dict[str, Game], runs: dict[str, GhostRun]
) -> tuple[dict[str, Game], dict[str, list[str]], dict[str, list[int]]]:
    """Every ghost's game as its recorded run ended (the actions not yet emitted applied at
    their recorded times, so a ghost still running is ranked by its recorded result),
    with its whole run's actions and times."""
    out = dict(games)
    replays: dict[str, list[str]] = {}
    times: dict[str, list[int]] = {}
    running = replace(race, state=RaceState.RUNNING, ends_at=None)
    for gid, run in runs.items():
        game = out.get(gid)
        if game is None:
            continue
        board: Board | None = None
        while next_due(running, game, run) is not None:
            outcome = ghost_outcome(running, game, run, board)
            game, board = outcome.game, outcome.board
        out[gid] = game
        replays[gid] = list(run.actions)
        times[gid] = list(run.times)
    return out, replays, times
