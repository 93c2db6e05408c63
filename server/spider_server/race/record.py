"""A finished race's record: everything needed to check it, as one JSON document.

:func:`race_record` builds it from the race as storage holds it (Redis, or the archive's
copy of it), for ``GET /races/<code>.json`` and ``spider-race export``. Format 1::

    {"format": 1, "code", "variant", "options": {...the race's options...},
     "created_at", "started_at", "finished_at",          # seconds since the epoch (UTC)
     "seed", "salt", "commitment",
     "players": [{"player", "name", "bot", "ghost", "rank", "status", "time", "moves",
                  "runs", "score", "hints", "actions": [...], "times": [...] or null,
                  "board"}, ...],                           # in ranking order
     "par": {"moves", "line", "first", "none", "provisional"} or null}

``commitment`` is SHA-256 of the salt's bytes (hex-decoded) followed by the seed's UTF-8
bytes (:func:`~.fairness.commitment`); each player's ``actions`` (moves in the spec's
notation, ``undo``, ``resign``) replay from ``Board.deal(variant, seed)`` to their
``board`` (the final full position), ``moves``, ``runs``, ``score`` and ``status``;
``times`` are the actions' race times in ms from the start (null when the race kept
none). The ghosts of a race with ghosts (recorded runs raced again) are players marked
``"ghost": true``: they were ranked with the others and their actions replay on the same
deal. ``finished_at`` is when the last live player's game ended (the time limit's end for
a race that ran out of time).

A race that is not finished has no record (:class:`~..errors.WrongState`), nor has a
daily race before its UTC day is over (:class:`NotYet`: its deal stays secret until then,
like its ``finished`` event's seed and replays).
"""

from __future__ import annotations

import datetime
from dataclasses import asdict
from typing import Any

from spider_client.protocol import fields_of

from ..errors import WrongState
from .fairness import day_end, revealed
from .model import Race, RaceState

__all__ = ["FORMAT", "NotYet", "finished_at", "race_record"]

FORMAT = 1
"""The record's ``format``: raised when a field changes meaning or goes away."""


class NotYet(WrongState):
    """A daily race's record asked for before its UTC day is over; ``at`` is when it is
    out (seconds since the epoch)."""

    def __init__(self, message: str, *, at: float) -> None:
        super().__init__(message)
        self.at = at


def finished_at(race: Race) -> float | None:
    """When the finished race ended: its start plus the last live player's game time
    (every live player's game is over at the finish), at most its time limit's end."""
    if race.started_at is None:
        return race.ends_at
    times = [e.time for e in race.players.values() if not e.ghost and e.time is not None]
    if not times:
        return race.ends_at
    end = race.started_at + max(times)
    return end if race.ends_at is None else min(end, race.ends_at)


def _utc(seconds: float) -> str:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")


def race_record(race: Race, *, now: float) -> dict[str, Any]:
    """The record of finished ``race`` (format 1, above) at ``now``: WrongState when it is
    not finished, :class:`NotYet` for a daily race before its day is over."""
    final = race.final
    if race.state is not RaceState.FINISHED or final is None:
        raise WrongState(
            f"race {race.code} is {race.state.value}: its record is out once it is finished"
        )
    if not revealed(race, now):
        at = day_end(race.options.daily)
        raise NotYet(
            f"race {race.code} is a daily race of {race.options.daily}: its deal and moves "
            f"are out once that day is over, at {_utc(at)}",
            at=at,
        )
    players = []
    for result in final.results:
        pid = result.player
        times = final.times.get(pid)
        players.append(
            {
                "player": pid,
                "name": result.name,
                "bot": result.bot,
                "ghost": result.ghost,
                "rank": result.rank,
                "status": result.status,
                "time": result.time,
                "moves": result.moves,
                "runs": result.runs,
                "score": result.score,
                "hints": result.hints,
                "actions": list(final.replays.get(pid, [])),
                "times": None if times is None else list(times),
                "board": final.boards.get(pid),
            }
        )
    return {
        "format": FORMAT,
        "code": race.code,
        "variant": race.options.variant,
        "options": asdict(race.options),
        "created_at": race.created_at,
        "started_at": race.started_at,
        "finished_at": finished_at(race),
        "seed": race.seed,
        "salt": race.salt,
        "commitment": race.commitment,
        "players": players,
        "par": None if race.par is None else fields_of(race.par),
    }
