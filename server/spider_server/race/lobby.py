"""The lobby's rules: which races are listed as open, and the race a quick match makes."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from spider_client.protocol import OpenRace

from .model import Race, RaceChange, RaceState
from .options import RaceOptions
from .transitions import create_race, join

__all__ = ["listing", "matched_race", "window"]


def listing(race: Race, *, deleted: bool = False) -> OpenRace | None:
    """The race as the open-races list shows it; None when it is not listed: private,
    deleted, no longer open (counting down, running, finished), or left by its creator
    (who left it, or whose last connection to it ended: its players may go on by code)."""
    if deleted or not race.options.public or race.state is not RaceState.OPEN:
        return None
    creator = race.players.get(race.creator)
    if creator is None:
        return None
    o = race.options
    return OpenRace(
        code=race.code,
        variant=o.variant,
        state=race.state.value,
        players=len(race.players),
        max_players=o.max_players,
        time_limit=o.time_limit,
        undo=o.undo,
        countdown=o.countdown,
        winnable=o.winnable,
        hints=o.hints,
        creator=race.creator,
        creator_name=creator.name,
        created_at=race.created_at,
        version=race.version,
        rated=o.rated,
        live_boards=o.live_boards,
        humans_only=o.humans_only,
        creator_guest=creator.guest,
    )


def matched_race(
    *,
    code: str,
    options: RaceOptions,
    players: list[tuple[str, str]],
    now: float,
    bots: Collection[str] = (),
    guests: Collection[str] = (),
) -> RaceChange:
    """A new open race with every matched ``(player, name)`` in it, in that order (those
    in ``bots`` as bots, those in ``guests`` as guests), none ready yet: a player confirms their seat by joining it
    (:func:`~.matches.confirm_seat`), and it counts down (``options.countdown`` seconds)
    once all did. Commit it as new."""
    assert len(players) >= 1
    first, *others = players
    change = create_race(
        code=code,
        options=options,
        creator=first[0],
        name=first[1],
        now=now,
        bot=first[0] in bots,
        guest=first[0] in guests,
    )
    race, events = change.race, list(change.events)
    for player, name in others:
        joined = join(race, player, name, now, bot=player in bots, guest=player in guests)
        assert joined is not None
        race = joined.race
        events += joined.events
    race = replace(race, version=0)
    return RaceChange(
        base=0, race=race, meta=True, players=list(race.players.values()), events=events
    )


def window(waited: float, *, base: float, growth: float, wait: float) -> float:
    """How far apart two ratings may be for a player who has waited ``waited`` seconds:
    ``base``, widened by ``growth`` a second; unbounded from ``wait`` seconds on (so that
    nobody waits longer than ``wait`` while anyone else is queued). The queue's script
    (:data:`~..store.scripts.POP_MATCHES`) computes the same."""
    if waited >= wait:
        return float("inf")
    return base + growth * max(0.0, waited)
