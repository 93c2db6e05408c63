"""The handlers that list: the daily deal's leaderboard and a player's races. Each
reads the store and changes nothing."""

from __future__ import annotations

from spider_client.protocol import (
    Leaderboard,
    LeaderboardEntry,
    LeaderboardReply,
    MyRace,
    MyRaces,
    MyRacesReply,
)
from spider_engine import VariantError, find_variant

from .. import race as rules
from ..errors import InvalidMessage
from ..runners.seeds import utc_day
from .core import Session, counts
from .player_reads import daily_board

__all__ = ["leaderboard", "my_races"]


async def leaderboard(session: Session, msg: Leaderboard) -> None:
    """The leaderboard of a variant's daily deal on a day (by default today): its winners
    by time, then fewer actions (rules.md §7a); equal keys share a rank. Redis's and the
    archive's winners together (:func:`.player_reads.daily_board`)."""
    try:
        variant = find_variant(msg.variant).id
    except VariantError as e:
        raise InvalidMessage(f"variant: {e}") from None
    day = msg.day if msg.day is not None else utc_day(session.ctx.clock())
    try:
        rules.day_end(day)
    except (ValueError, OverflowError):  # not a date, or the last day there is
        raise InvalidMessage("day: a date YYYY-MM-DD before 9999-12-31") from None
    rows = await daily_board(session, variant, day)
    ranks = rules.shared_ranks([(t, moves) for _, _, t, moves, _, _ in rows])
    entries = [
        LeaderboardEntry(rank=i, player=player, name=name, time=t, moves=moves, bot=bot, race=code)
        for i, (player, name, t, moves, bot, code) in zip(ranks, rows, strict=True)
    ]
    session.send_msg(LeaderboardReply(req=msg.req, variant=variant, day=day, entries=entries))


async def my_races(session: Session, msg: MyRaces) -> None:
    """The player's races (newest first, each with its state, the player's status and
    whether it counts towards the limit), then the races this connection watches."""
    races = [
        MyRace(
            code=row.code,
            variant=row.variant,
            state=row.state or "",
            role="player",
            players=row.players,
            status=row.status,
            counts=counts(row),
            preparing=row.preparing,
        )
        for row in await session.my_races_now(archived=True)
    ]
    listed = {r.code for r in races}
    for code, sub in session.subs.items():
        if sub.role != "spectator" or code in listed:
            continue
        race = await session.finished_race(code)
        if race is not None:
            races.append(
                MyRace(
                    code=code,
                    variant=race.options.variant,
                    state=race.state.value,
                    role="spectator",
                    players=len(race.players),
                    preparing=race.preparing,
                )
            )
    limit = session.ctx.settings.max_races_per_player
    session.send_msg(MyRacesReply(req=msg.req, races=races, limit=limit))
