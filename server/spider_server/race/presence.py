"""Who of a running race is away, who is back, and who is out (rules.md §7a).

Presence is decided from what every node sees in Redis: the players with a live claim on
the race (a connection of theirs watches it, on any node: ``online``) and the race's
entries (who is marked away, since when; whose position offers only undo, since when).
:func:`presence_plan` says what is due for each player whose game is on; then
:func:`presence_change` makes the change, for a check-and-set on the race's version, so
that of all the nodes that see it due exactly one commits it:

- a player without a live claim, not marked away: ``away`` (since now);
- a player marked away whose claim is live again: ``back`` (with the seconds away);
- a player who rejoins after losing a connection (``resumed``) before anyone saw them
  away, as when their node died and they came back through another one before its claims
  lapsed: ``away`` (since their last claim was renewed) and ``back`` together;
- a player away for the race's ``away_grace``: out as ``abandoned`` at their progress
  (a forfeit);
- a player whose position has offered only undo for ``away_grace``: ``stuck``.

A game that is over (won, stuck, resigned, left, abandoned, out of time) is left alone.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Literal

from spider_client.protocol import Away, Back, Progress

from .model import ALL, TERMINAL, Audience, Entry, Game, Race, RaceChange, RaceState, Status
from .model import entry_of as _entry_of

__all__ = ["Due", "presence_change", "presence_plan"]

Due = Literal["away", "back", "resumed", "abandoned", "stuck"]
"""What is due for a player (see the module's docstring)."""


def presence_plan(
    race: Race,
    online: Collection[str],
    now: float,
    *,
    resumed: str | None = None,
) -> dict[str, Due]:
    """What is due now for each player of a running race whose game is on (empty when
    nothing is, or when the race does not run or its time is up). ``online``: the players
    with a live claim; ``resumed``: a player who rejoins after losing a connection. A ghost
    (a recorded run) is never connected and never away."""
    if race.state is not RaceState.RUNNING or (race.ends_at is not None and now >= race.ends_at):
        return {}
    grace = race.options.away_grace
    plan: dict[str, Due] = {}
    for pid, entry in race.players.items():
        if entry.status in TERMINAL or entry.ghost:
            continue
        present = pid in online
        away = entry.away_since
        stuck_at = None if entry.undo_only_since is None else entry.undo_only_since + grace
        out_at = None if away is None or present else away + grace
        if stuck_at is not None and now >= stuck_at and (out_at is None or stuck_at <= out_at):
            plan[pid] = "stuck"
        elif out_at is not None and now >= out_at:
            plan[pid] = "abandoned"
        elif away is None and not present:
            plan[pid] = "away"
        elif away is not None and present:
            plan[pid] = "back"
        elif away is None and pid == resumed:
            plan[pid] = "resumed"
    return plan


def presence_change(
    race: Race,
    plan: Mapping[str, Due],
    games: Mapping[str, Game],
    now: float,
    *,
    resumed_since: float | None = None,
) -> RaceChange | None:
    """The change that does ``plan`` (from :func:`presence_plan` on this ``race``); None
    when it is empty. ``games`` holds the game of every player who is out (``abandoned``
    or ``stuck``); ``resumed_since`` is when a ``resumed`` player was last seen (default
    ``now``). An ``abandoned`` or ``stuck`` game ends at the race time now, and its
    ``progress`` tells everyone."""
    if not plan:
        return None
    when = round(now, 3)
    elapsed = round(min(now - (race.started_at or now), float(race.options.time_limit)), 3)
    players = dict(race.players)
    entries: list[Entry] = []
    changed: list[Game] = []
    events: list[tuple[Audience, object]] = []
    for pid, due in plan.items():
        entry = players[pid]
        if due == "away":
            entry = replace(entry, away_since=when)
            events.append((ALL, Away(race=race.code, version=0, player=pid, since=when)))
        elif due == "back":
            assert entry.away_since is not None
            gone = round(max(0.0, now - entry.away_since), 3)
            entry = replace(entry, away_since=None)
            events.append((ALL, Back(race=race.code, version=0, player=pid, away=gone)))
        elif due == "resumed":
            since = when if resumed_since is None else round(min(resumed_since, now), 3)
            events.append((ALL, Away(race=race.code, version=0, player=pid, since=since)))
            gone = round(now - since, 3)
            events.append((ALL, Back(race=race.code, version=0, player=pid, away=gone)))
        else:
            status = Status.ABANDONED if due == "abandoned" else Status.STUCK
            game = replace(games[pid], status=status, time=elapsed, undo_only_since=None)
            changed.append(game)
            entry = _entry_of(entry, game)
            events.append((ALL, Progress(race=race.code, version=0, player=entry.info())))
        players[pid] = entry
        entries.append(entry)
    return RaceChange(
        base=race.version,
        race=replace(race, players=players),
        meta=False,
        players=entries,
        games=changed,
        events=events,
    )
