"""Who of a running race is away, who is back, and who is out (rules.md §7a).

Presence is decided from what every node sees in Redis: the players with a live claim on
the race (a connection of theirs watches it, on any node: ``online``) and the race's
entries (who is marked away, since when, and for how long in the spells before; whose
position offers only undo, since when; by when each must act). :func:`presence_plan` says
what is due for each player whose game is on; then :func:`presence_change` makes the
change, for a check-and-set on the race's version, so that of all the nodes that see it
due exactly one commits it:

- a player without a live claim, not marked away: ``away`` (since now);
- a player marked away whose claim is live again: ``back`` (with the seconds away, added
  to their time away in all, ``away_total``);
- a player who rejoins after losing a connection (``resumed``) before anyone saw them
  away, as when their node died and they came back through another one before its claims
  lapsed: ``away`` (since their last claim was renewed) and ``back`` together;
- a player whose time away in all (the spells that ended, and the one under way) reaches
  the race's ``away_grace``: out as ``abandoned`` at their progress (a forfeit), whether
  they are still away or coming back too late;
- a player who made no action (move, deal or undo) by their ``idle_at`` (the start, or
  their last action, plus the race's ``idle_limit``), connected or not: out as ``idle``
  at their progress (a forfeit);
- a player whose position has offered only undo for ``away_grace``: ``stuck``.

When several of the last three are due, the one due first wins (on a tie: stuck, then
abandoned, then idle). A game that is over (won, stuck, resigned, left, abandoned, idle,
out of time) is left alone.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Literal

from spider_client.protocol import Away, Back, Progress

from .model import ALL, TERMINAL, Audience, Entry, Game, Race, RaceChange, RaceState, Status
from .model import entry_of as _entry_of

__all__ = ["OUT", "Due", "next_idle", "out_times", "presence_change", "presence_plan"]

Due = Literal["away", "back", "resumed", "abandoned", "idle", "stuck"]
"""What is due for a player (see the module's docstring)."""

OUT: dict[Due, str] = {"stuck": Status.STUCK, "abandoned": Status.ABANDONED, "idle": Status.IDLE}
"""The dues that end a player's game, with the status each ends it with, in the order
that wins a tie."""

_RANK = {what: i for i, what in enumerate(OUT)}


def out_times(entry: Entry, grace: float, now: float) -> list[tuple[float, Due]]:
    """When each rule that ends the game puts the player out (rules.md §7a), in the order
    of :data:`OUT`: only undo for the grace (``stuck``), away for the grace in all
    (``abandoned``: a player not away now whose spells reached it already is out at
    ``now``), no action by ``idle_at`` (``idle``)."""
    times: list[tuple[float, Due]] = []
    if entry.undo_only_since is not None:
        times.append((entry.undo_only_since + grace, "stuck"))
    if entry.away_since is not None:
        times.append((entry.away_since + max(0.0, grace - entry.away_total), "abandoned"))
    elif entry.away_total >= grace:
        times.append((now, "abandoned"))
    if entry.idle_at is not None:
        times.append((entry.idle_at, "idle"))
    return times


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
    (a recorded run) is never connected, never away and never idle."""
    if race.state is not RaceState.RUNNING or (race.ends_at is not None and now >= race.ends_at):
        return {}
    grace = race.options.away_grace
    plan: dict[str, Due] = {}
    for pid, entry in race.players.items():
        if entry.status in TERMINAL or entry.ghost:
            continue
        present = pid in online
        away = entry.away_since
        out = min(
            ((at, _RANK[what], what) for at, what in out_times(entry, grace, now) if now >= at),
            default=None,
        )
        if out is not None:
            plan[pid] = out[2]
        elif away is None and not present:
            plan[pid] = "away"
        elif away is not None and present:
            plan[pid] = "back"
        elif away is None and pid == resumed:
            plan[pid] = "resumed"
    return plan


def next_idle(race: Race) -> float | None:
    """The earliest ``idle_at`` of the race's players whose game is on (ghosts left out),
    or None: when the next ``idle`` may be due (a node's tick looks no sooner)."""
    if race.state is not RaceState.RUNNING:
        return None
    return min(
        (
            e.idle_at
            for e in race.players.values()
            if e.idle_at is not None and e.status not in TERMINAL and not e.ghost
        ),
        default=None,
    )


def presence_change(
    race: Race,
    plan: Mapping[str, Due],
    games: Mapping[str, Game],
    now: float,
    *,
    resumed_since: float | None = None,
) -> RaceChange | None:
    """The change that does ``plan`` (from :func:`presence_plan` on this ``race``); None
    when it is empty. ``games`` holds the game of every player who is out (``abandoned``,
    ``idle`` or ``stuck``); ``resumed_since`` is when a ``resumed`` player was last seen
    (default ``now``). A ``back`` (and a ``resumed``) adds the spell to the player's
    ``away_total``, which its event carries. A game that is out ends at the race time
    now, and its ``progress`` tells everyone."""
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
            total = round(entry.away_total + gone, 3)
            entry = replace(entry, away_since=None, away_total=total)
            back = Back(race=race.code, version=0, player=pid, away=gone, total=total)
            events.append((ALL, back))
        elif due == "resumed":
            since = when if resumed_since is None else round(min(resumed_since, now), 3)
            events.append((ALL, Away(race=race.code, version=0, player=pid, since=since)))
            gone = round(now - since, 3)
            total = round(entry.away_total + gone, 3)
            entry = replace(entry, away_total=total)
            back = Back(race=race.code, version=0, player=pid, away=gone, total=total)
            events.append((ALL, back))
        else:
            status = OUT[due]
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
