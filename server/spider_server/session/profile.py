"""The handlers of players' records: a profile, a finished race's rating changes, and the
rating ladders; and the rematch of a finished race. Each reads or writes through the store
(:mod:`..store.ratings`), deciding with :mod:`..race.ratings` and :mod:`..race`."""

from __future__ import annotations

import asyncio
from functools import partial

from spider_client.protocol import (
    Done,
    HistoryLine,
    LadderEntry,
    Profile,
    ProfileReply,
    RatingChange,
    RatingChanges,
    RatingChangesReply,
    RatingLeaderboard,
    RatingLeaderboardReply,
    Rematch,
    VariantStats,
)
from spider_engine import VariantError, find_variant

from .. import race as rules
from ..errors import Conflict, InvalidMessage, NotAPlayer, RaceNotFound, WrongState
from ..race import Race
from ..race.ratings import short_id
from ..store import check_and_set
from ..store.ratings import LadderRow
from . import player_reads as reads
from .core import Session, race_code
from .creation import check_creation

__all__ = ["make_rematch", "profile", "rating_changes", "rating_leaderboard", "rematch"]

MAX_ID = 64
MAX_CURSOR = 64


async def profile(session: Session, msg: Profile) -> None:
    """A player's profile: by id, else by name, else the asker's own; its races a page at
    a time (:func:`.player_reads.history_page`)."""
    if msg.before is not None and not 1 <= len(msg.before) <= MAX_CURSOR:
        raise InvalidMessage(f"before: 1 to {MAX_CURSOR} characters")
    if msg.player is not None:
        if not 1 <= len(msg.player) <= MAX_ID:
            raise InvalidMessage(f"player: 1 to {MAX_ID} characters")
        player: str | None = msg.player
    elif msg.name is not None:
        name = msg.name.strip()
        player = await reads.player_named(session, name) if 0 < len(name) <= MAX_ID else None
    else:
        player = session.player
    record = await reads.record_of(session, player) if player else None
    if player is None or record is None:
        shown = player or ""
        session.send_msg(
            ProfileReply(
                req=msg.req,
                player=shown,
                name=msg.name or "",
                tag=short_id(shown),
                found=False,
            )
        )
        return
    page = await reads.history_page(session, player, msg.before)
    variants = [
        VariantStats(
            variant=variant,
            played=vr.played,
            won=vr.won,
            win_rate=round(vr.won / vr.played, 4) if vr.played else 0.0,
            best_time=vr.best_time,
            streak=vr.streak,
            best_streak=vr.best_streak,
            rating=vr.rating,
            provisional=vr.provisional,
            rated=vr.rated,
            best_rating=vr.best_rating,
            history=[[t, float(r)] for t, r in vr.history],
        )
        for variant, vr in sorted(record.variants.items(), key=lambda kv: -kv[1].played)
    ]
    races = [
        HistoryLine(
            code=line.code,
            variant=line.variant,
            at=line.at,
            rank=line.rank,
            of=line.of,
            status=line.status,
            time=line.time,
            rated=line.rated,
            before=line.before,
            after=line.after,
            replay=f"/r/{line.code}",
        )
        for line in page.lines
    ]
    session.send_msg(
        ProfileReply(
            req=msg.req,
            player=player,
            name=record.name,
            tag=short_id(player),
            bot=record.bot,
            guest=await reads.is_guest(session, player),
            variants=variants,
            races=races,
            more=page.next is not None,
            next=page.next,
        )
    )


async def rating_changes(session: Session, msg: RatingChanges) -> None:
    """A finished race's rating changes (``applied`` false while not written yet)."""
    code = race_code(msg.code)
    race = await session.load(code)
    changes = None
    if race.final is not None:
        changes = await session.ctx.store.ratings.applied_changes(race)
    session.send_msg(
        RatingChangesReply(
            req=msg.req,
            code=code,
            rated=race.options.rated,
            applied=changes is not None,
            changes=[
                RatingChange(
                    player=c.player,
                    name=c.name,
                    tag=short_id(c.player),
                    before=c.before,
                    after=c.after,
                    provisional=c.provisional,
                    pool=c.pool,
                )
                for c in changes or []
            ],
        )
    )


async def rating_leaderboard(session: Session, msg: RatingLeaderboard) -> None:
    """The top 100 of a variant's ladder (humans' or bots') and the asker's place."""
    try:
        variant = find_variant(msg.variant).id
    except VariantError as e:
        raise InvalidMessage(f"variant: {e}") from None
    rows, mine = await session.ctx.store.ratings.ladder(msg.pool, variant, session.player)
    session.send_msg(
        RatingLeaderboardReply(
            req=msg.req,
            variant=variant,
            pool=msg.pool,
            entries=[_entry(row) for row in rows],
            me=_entry(mine) if mine is not None else None,
        )
    )


# -- the rematch ------------------------------------------------------------------------


async def rematch(session: Session, msg: Rematch) -> None:
    """Accept the rematch of a finished race (reply: ``done``); the race hears a
    ``rematch_offer``. Made at once when everyone accepted, else at the deadline (this
    node waits for it; so does every node that took an acceptance). ``wrong_state``
    once the rematch was made without this player (it has already started), and
    ``not_found`` once the finished race is gone (expired). An acceptance that would put
    the player in a new race counts as a creation (:func:`~.creation.check_creation`:
    ``too_many_races``, ``rate_limited``, as a ``create_race`` would be): refused, it
    changes nothing."""
    code = race_code(msg.code)
    ctx = session.ctx
    wait = ctx.settings.rematch_wait
    found = await ctx.store.races.load_race(code)
    if _accepts_anew(found, session.player):
        await check_creation(session)
    attempt = await ctx.changes.race(
        code, partial(_accept, session.player, code, ctx.clock(), wait), known=found
    )
    race = attempt.decision.race if attempt.decision is not None else attempt.loaded
    assert race is not None
    session.send_msg(Done(req=msg.req))
    offer = race.rematch
    if await make_rematch(session, code) is None and offer is not None and offer.code is None:
        ctx.spawner.spawn(_at_deadline(session, code, offer.deadline))


def _accepts_anew(race: Race | None, player: str) -> bool:
    """Whether the player's acceptance would count (they played the finished race, not a
    daily one, have not accepted yet, and the rematch is not made): the refusals of the
    acceptance itself are :func:`_accept`'s."""
    if race is None or race.state is not rules.RaceState.FINISHED or race.options.daily:
        return False
    if player not in race.players:
        return False
    offer = race.rematch
    return offer is None or (offer.code is None and player not in offer.accepted)


def _accept(
    player: str, code: str, now: float, wait: float, race: Race | None
) -> rules.RaceChange | None:
    """The player's acceptance of race ``code``'s rematch (None: accepted already)."""
    if race is None:
        raise RaceNotFound(f"race {code} is gone: its rematch can no longer be accepted")
    offer = race.rematch
    if player not in race.players:
        raise NotAPlayer(f"you did not play race {code}")
    if offer is not None and offer.code is not None and player not in offer.accepted:
        raise WrongState(
            f"the rematch of race {code} has already started, as race {offer.code}, "
            "without you: watch it as a spectator"
        )
    return rules.accept_rematch(race, player, now, wait)


async def _at_deadline(session: Session, code: str, deadline: float) -> None:
    await asyncio.sleep(max(0.0, deadline - session.ctx.clock()) + 0.05)
    await make_rematch(session, code)


async def make_rematch(session: Session, code: str) -> str | None:
    """Make race ``code``'s rematch if it is due (:func:`~..race.rematch_due`); the new
    race's code (None: not due, or the race is gone). Safe on every node at once."""
    ctx = session.ctx
    changes = ctx.changes

    def due(race: Race | None) -> Race | None:
        """The race whose rematch is to be made now (None: gone, made, or not due)."""
        if race is None or (race.rematch is not None and race.rematch.code is not None):
            return None
        return race if rules.rematch_due(race, ctx.clock()) else None

    async def make(race: Race) -> rules.RaceChange:
        """Commit the new race, then its link from the old one (a check-and-set: when
        another node made it, or someone accepted meanwhile, the new race is dropped and
        the old one looked at again)."""
        seed = await ctx.seeds.take(race.options.variant) if race.options.winnable else None
        preparing = race.options.winnable and seed is None
        guests = [e.player for e in race.players.values() if e.guest]
        signed = set() if ctx.accounts is None else await ctx.accounts.guests.signed_up(guests)
        now = ctx.clock()
        new, committed = await changes.create(
            lambda c: rules.rematch_race(
                race, c, now, seed=seed, preparing=preparing, accounts=signed
            )
        )
        try:
            await changes.commit(rules.rematch_made(race, new.race.code))
        except Conflict:
            drop = rules.RaceChange(base=committed.version, race=new.race, delete=True)
            await changes.commit(drop)
            raise
        return new

    attempt = await check_and_set(lambda: ctx.store.races.load_race(code), due, make)
    new, race = attempt.committed, attempt.loaded
    if new is None or race is None:
        return race.rematch.code if race is not None and race.rematch is not None else None
    ctx.metrics.races_created_total += 1
    for pid in new.race.players:
        await ctx.store.players.add_player_race(pid, new.race.code)
    if new.race.preparing:
        await ctx.seeds.wait(race.options.variant, new.race.code)
    if new.race.state is rules.RaceState.COUNTDOWN and race.options.countdown == 0:
        await ctx.transitions.advance(new.race.code)
    return new.race.code


def _entry(row: LadderRow) -> LadderEntry:
    place, player, name, rating, provisional = row
    return LadderEntry(
        rank=place,
        player=player,
        name=name,
        tag=short_id(player),
        rating=rating,
        provisional=provisional,
    )
