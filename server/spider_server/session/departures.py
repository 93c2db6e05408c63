"""A player whose last connection to a public race that waits for players ended: out of
it (the protocol's ``public`` races: one leaves the lobby's list when its creator leaves
it, and closes when nobody is in). Called by the session once its claim on the race is
dropped."""

from __future__ import annotations

from .. import race as rules
from ..race import Race, RaceState
from .parts import Context

__all__ = ["left_public_race"]


def _waits(race: Race | None, player: str) -> bool:
    """Whether ``race`` is a public race that waits for players, with ``player`` in it."""
    return (
        race is not None
        and race.options.public
        and race.state is RaceState.OPEN
        and player in race.players
    )


async def left_public_race(ctx: Context, code: str, player: str) -> None:
    """Take ``player`` out of race ``code`` when it is a public race still open and no
    connection of theirs (on any node) follows it any more: as a ``leave`` does (the
    others hear ``player_left``; the race is deleted when nobody is left). Its creator
    gone, the race leaves the lobby's list (:func:`~..race.listing`); its players may go
    on by its code. Nothing happens to a private race, or to one that counts down or
    runs."""
    race = await ctx.store.races.load_race(code)
    if not _waits(race, player):
        return
    online, _ = await ctx.store.presence.presence(code, ctx.clock())
    if player in online:
        return
    now = ctx.clock()

    def decide(found: Race | None) -> rules.RaceChange | None:
        return (
            rules.leave(found, player, now) if found is not None and _waits(found, player) else None
        )

    attempt = await ctx.changes.race(code, decide, known=race)
    if attempt.decision is not None:
        await ctx.store.players.drop_player_races(player, [code])
