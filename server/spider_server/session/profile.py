"""The handlers of players' records: a profile, a finished race's rating changes, and the
rating ladders; and the rematch of a finished race. Each reads or writes through the store
(:mod:`..store.ratings`), deciding with :mod:`..ratings` and :mod:`..race`."""

from __future__ import annotations

import asyncio

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
from ..ratings import short_id
from ..store import cas_tries
from ..store.ratings import LadderRow
from .core import SessionBase, race_code

__all__ = ["ProfileHandlers"]

MAX_ID = 64


class ProfileHandlers(SessionBase):
    """Profiles, rating changes, rating ladders, rematches."""

    async def profile(self, msg: Profile) -> None:
        """A player's profile: by id, else by name, else the asker's own."""
        store = self.ctx.store
        if msg.player is not None:
            if not 1 <= len(msg.player) <= MAX_ID:
                raise InvalidMessage(f"player: 1 to {MAX_ID} characters")
            player: str | None = msg.player
        elif msg.name is not None:
            player = await store.player_named(msg.name.strip())
        else:
            player = self.player
        record = (await store.load_records([player])).get(player) if player else None
        if player is None or record is None:
            shown = player or ""
            self.send_msg(
                ProfileReply(
                    req=msg.req,
                    player=shown,
                    name=msg.name or "",
                    tag=short_id(shown),
                    found=False,
                )
            )
            return
        lines = await store.history(player)
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
            for line in lines
        ]
        self.send_msg(
            ProfileReply(
                req=msg.req,
                player=player,
                name=record.name,
                tag=short_id(player),
                bot=record.bot,
                variants=variants,
                races=races,
            )
        )

    async def rating_changes(self, msg: RatingChanges) -> None:
        """A finished race's rating changes (``applied`` false while not written yet)."""
        code = race_code(msg.code)
        race = await self.load(code)
        changes = None
        if race.final is not None:
            changes = await self.ctx.store.applied_changes(race)
        self.send_msg(
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

    async def rating_leaderboard(self, msg: RatingLeaderboard) -> None:
        """The top 100 of a variant's ladder (humans' or bots') and the asker's place."""
        try:
            variant = find_variant(msg.variant).id
        except VariantError as e:
            raise InvalidMessage(f"variant: {e}") from None
        rows, mine = await self.ctx.store.ladder(msg.pool, variant, self.player)
        self.send_msg(
            RatingLeaderboardReply(
                req=msg.req,
                variant=variant,
                pool=msg.pool,
                entries=[_entry(row) for row in rows],
                me=_entry(mine) if mine is not None else None,
            )
        )

    # -- the rematch ------------------------------------------------------------------------

    async def rematch(self, msg: Rematch) -> None:
        """Accept the rematch of a finished race (reply: ``done``); the race hears a
        ``rematch_offer``. Made at once when everyone accepted, else at the deadline (this
        node waits for it; so does every node that took an acceptance). ``wrong_state``
        once the rematch was made without this player (it has already started), and
        ``not_found`` once the finished race is gone (expired)."""
        code = race_code(msg.code)
        ctx = self.ctx
        wait = ctx.settings.rematch_wait
        for _ in cas_tries():
            found = await ctx.store.load_race(code)
            if found is None:
                raise RaceNotFound(f"race {code} is gone: its rematch can no longer be accepted")
            race = found
            offer = race.rematch
            if self.player not in race.players:
                raise NotAPlayer(f"you did not play race {code}")
            if offer is not None and offer.code is not None and self.player not in offer.accepted:
                raise WrongState(
                    f"the rematch of race {code} has already started, as race {offer.code}, "
                    "without you: watch it as a spectator"
                )
            change = rules.accept_rematch(race, self.player, ctx.clock(), wait)
            if change is None:
                break
            try:
                await ctx.store.commit(change)
                race = change.race
                break
            except Conflict:
                continue
        self.send_msg(Done(req=msg.req))
        offer = race.rematch
        if await make_rematch(self, code) is None and offer is not None and offer.code is None:
            ctx.spawn(_at_deadline(self, code, offer.deadline))


async def _at_deadline(session: SessionBase, code: str, deadline: float) -> None:
    await asyncio.sleep(max(0.0, deadline - session.ctx.clock()) + 0.05)
    await make_rematch(session, code)


async def make_rematch(session: SessionBase, code: str) -> str | None:
    """Make race ``code``'s rematch if it is due (:func:`~..race.rematch_due`); the new
    race's code (None: not due, or the race is gone). Safe on every node at once."""
    ctx = session.ctx
    store = ctx.store
    for _ in cas_tries():
        race = await store.load_race(code)
        if race is None:
            return None
        if race.rematch is not None and race.rematch.code is not None:
            return race.rematch.code
        if not rules.rematch_due(race, ctx.clock()):
            return None
        seed = None
        if race.options.winnable:
            seed = await ctx.seeds.take(race.options.variant)
        preparing = race.options.winnable and seed is None
        for _ in cas_tries("could not find a free join code"):
            new = rules.rematch_race(
                race, rules.new_code(), ctx.clock(), seed=seed, preparing=preparing
            )
            try:
                version = await store.commit(new, new=True)
                break
            except Conflict:
                continue
        try:
            await store.commit(rules.rematch_made(race, new.race.code))
        except Conflict:
            # another node made it, or someone accepted meanwhile: drop this one, look again
            await store.commit(rules.RaceChange(base=version, race=new.race, delete=True))
            continue
        ctx.metrics.races_created_total += 1
        for pid in new.race.players:
            await store.add_player_race(pid, new.race.code)
        if preparing:
            await ctx.seeds.wait(race.options.variant, new.race.code)
        if new.race.state is rules.RaceState.COUNTDOWN and race.options.countdown == 0:
            await ctx.advance(new.race.code)
        return new.race.code
    raise AssertionError("unreachable: cas_tries raises when the tries are spent")


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
