"""The rematch of a finished race: the same players (those who accept), the same options,
a fresh deal.

A player of the finished race accepts (:func:`accept_rematch`): the first acceptance opens
the offer until ``now + wait``; every acceptance is a ``rematch_offer`` event to the race.
The rematch is due (:func:`rematch_due`) once every player accepted, or once the deadline
passed with at least two who did (a race of one: its one player). Making it is two
commits: the new race (:func:`rematch_race`: its players joined and ready, so its
countdown runs at once), then the old race's offer pointing to it (:func:`rematch_made`,
a check-and-set on the old race's version: of two nodes making it at once, one wins and
the other deletes its new race).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from spider_client.protocol import RematchOffer

from ..errors import NotAPlayer, WrongState
from .model import ALL, Audience, Race, RaceChange, RaceState, RematchState
from .transitions import create_race, join, set_ready

__all__ = ["accept_rematch", "rematch_due", "rematch_made", "rematch_race"]


def accept_rematch(race: Race, player: str, now: float, wait: float) -> RaceChange | None:
    """The player accepts the rematch of finished race ``race`` (opening the offer for
    ``wait`` seconds when first); None when they accepted already or it is made.
    WrongState unless finished (and not a daily race), NotAPlayer unless they played it."""
    if race.state is not RaceState.FINISHED:
        raise WrongState(f"race {race.code} is {race.state.value}: a rematch follows the finish")
    if race.options.daily:
        raise WrongState("a daily race has no rematch: its deal is the day's")
    if player not in race.players:
        raise NotAPlayer(f"you did not play race {race.code}")
    offer = race.rematch
    if offer is not None and (offer.code is not None or player in offer.accepted):
        return None
    if offer is None:
        offer = RematchState(accepted=[player], deadline=round(now + wait, 3))
    else:
        offer = replace(offer, accepted=[*offer.accepted, player])
    event = RematchOffer(
        race=race.code, version=0, accepted=list(offer.accepted), deadline=offer.deadline
    )
    return RaceChange(base=race.version, race=replace(race, rematch=offer), events=[(ALL, event)])


def rematch_due(race: Race, now: float) -> bool:
    """Whether the rematch is to be made now: every player accepted, or the deadline passed
    with two or more (or the only player of a race alone)."""
    offer = race.rematch
    if offer is None or offer.code is not None:
        return False
    if set(race.players) <= set(offer.accepted):
        return True
    return now >= offer.deadline and len(offer.accepted) >= min(2, len(race.players))


def rematch_race(
    race: Race,
    code: str,
    now: float,
    *,
    seed: str | None = None,
    preparing: bool = False,
    accounts: Collection[str] = (),
) -> RaceChange:
    """The new race of ``race``'s rematch, with join code ``code``: the same options, a
    fresh secret seed, the players who accepted (in the order they accepted), each ready:
    its countdown starts at once (a winnable race: dealt ``seed``, or ``preparing`` until a
    proven one comes). A player is a guest in it as in ``race``, unless in ``accounts``
    (guests who signed up since). For :meth:`~..store.CommitLink.commit` with ``new``."""
    assert race.rematch is not None
    accepted = [p for p in race.rematch.accepted if p in race.players]
    first = race.players[accepted[0]]
    guests = {p for p in accepted if race.players[p].guest and p not in accounts}
    change = create_race(
        code=code,
        # a fresh secret seed; rated only between accounts (a race of guests before
        # rated races were for accounts only is played again casual)
        options=replace(race.options, seed_chosen=False, rated=race.options.rated and not guests),
        creator=first.player,
        name=first.name,
        now=now,
        seed=seed,
        preparing=preparing,
        bot=first.bot,
        guest=first.player in guests,
    )
    events: list[tuple[Audience, object]] = list(change.events)
    new = change.race
    for pid in accepted[1:]:
        entry = race.players[pid]
        step = join(new, pid, entry.name, now, bot=entry.bot, guest=pid in guests)
        assert step is not None
        new, events = step.race, events + step.events
    for pid in accepted:
        step = set_ready(new, pid, True, now)
        assert step is not None
        new, events = step.race, events + step.events
    return RaceChange(base=0, race=new, players=list(new.players.values()), events=events)


def rematch_made(race: Race, code: str) -> RaceChange:
    """The finished race's offer, made: ``code`` is the new race (a ``rematch_offer`` event
    with it)."""
    assert race.rematch is not None
    offer = replace(race.rematch, code=code)
    event = RematchOffer(
        race=race.code, version=0, accepted=list(offer.accepted), deadline=offer.deadline, code=code
    )
    return RaceChange(base=race.version, race=replace(race, rematch=offer), events=[(ALL, event)])
