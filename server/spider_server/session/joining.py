"""Joining a race: :func:`join` (as player or spectator) and :func:`send_joined`, the
snapshot of the race and its events since the client's last version, then its events from
there on.

A big ``joined`` costs its requester, not others: a finished race's is built from its
:class:`~.snapshots.Snapshot` (its big parts encoded once, shared by every requester;
no race read nor transition looked for once it is kept), and a connection that has not
read a big ``joined`` of a race yet is refused another (``rate_limited``, before anything
is read from Redis) instead of being queued a second copy.
"""

from __future__ import annotations

import asyncio
from functools import partial
from typing import Any

from spider_client.protocol import Join, Joined, Role, encode
from spider_engine import Board

from .. import race as rules
from ..errors import (
    InvalidMessage,
    RaceNotFound,
    RateLimited,
    TooManyRaces,
    Unavailable,
    WrongState,
)
from ..fanout.watches import Subscription
from ..race import Race, RaceState
from ..runners.seeds import Seeds
from ..store import rated_addresses
from ..transport import stamp
from ..workers import ProofCapReached
from .actions import deal_out
from .core import Session, log, race_code
from .matching import check_seat, confirm_seat, match_cancelled
from .snapshots import FINISHED_CATCH_UP, Snapshot, snapshot_of

__all__ = ["join", "note_address", "send_joined", "wait_for_deal"]


async def note_address(session: Session, code: str) -> None:
    """Note the address the player joined rated race ``code`` from (kept with the race
    when it is archived: :mod:`..store.rated_addresses`)."""
    ctx = session.ctx
    ttl = 2 * ctx.settings.race_ttl
    await rated_addresses.note(ctx.store.redis, code, session.player, session.address, ttl)


async def join(session: Session, msg: Join) -> None:
    """Join as player (an open race, or resume one's own) or spectator (any race)."""
    code = race_code(msg.code)
    if msg.since is not None and msg.since < 0:
        raise InvalidMessage("since: a version, 0 or more")
    ctx = session.ctx
    if session.out.unread(code):  # its copy waits for the reader still: not another
        ctx.metrics.refused_total["unread"] += 1
        raise RateLimited(f"the race {code} you asked for before has not been read yet; read it")
    version = await _version_if_allowed(session, code)
    archived = None
    if version is None and ctx.finished is not None:  # a finished race Redis dropped
        archived = await ctx.finished.archived_race(code)
    if version is None and archived is None:  # nothing is watched nor claimed
        await session.limit(("wrong_join", session.address, "too many joins with a wrong code"))
        raise RaceNotFound(f"no race {code}")
    await ctx.hub.watch(code)
    try:
        if archived is not None:
            archived = await _join_archived(session, msg, archived)
            await send_joined(
                session, msg.req, code, msg.role, msg.since, moved=msg.moved, archived=archived
            )
            return
        assert version is not None
        kept = ctx.snapshots.get(code, version)
        # the par on its way: shown through the transitions, which see to it (a search
        # that failed is started again)
        unsettled = kept is not None and ctx.settings.par_budget > 0 and not kept.par_settled
        if (
            kept is None
            or unsettled
            or (msg.role == "player" and session.player not in kept.statuses)
        ):
            race = await ctx.transitions.advance(code)
            if race is None:
                raise RaceNotFound(f"no race {code}")
            await _join_as_player(session, msg, code, race)
        await send_joined(session, msg.req, code, msg.role, msg.since, moved=msg.moved)
    finally:
        ctx.hub.release(code)


async def _version_if_allowed(session: Session, code: str) -> int | None:
    """The version of race ``code`` in Redis (None: none there), unless the client's
    address has no join with a wrong code left (``address_wrong_joins``, shared by every
    node): then ``rate_limited``, whatever the code (a right one too: a guess tells
    nothing). The bucket and the race are asked at once: one round trip."""
    ctx = session.ctx
    if ctx.addresses is None:
        return await ctx.store.races.race_version(code)
    allowed, version = await asyncio.gather(
        ctx.addresses.allows("wrong_join", session.address), ctx.store.races.race_version(code)
    )
    if not allowed:
        ctx.metrics.refused_total["wrong_joins"] += 1
        raise RateLimited("too many joins with a wrong code from your address; wait")
    return version


async def _join_as_player(session: Session, msg: Join, code: str, race: Race) -> None:
    """A new player of an open race joins it (not of a quick match's: its seats are its
    players'); a matched player confirms their seat; one of a race still preparing waits
    for its deal again."""
    ctx = session.ctx
    if msg.role == "player":
        check_seat(race, session.player)
    if msg.role == "player" and session.player not in race.players:
        assert session.identity is not None
        await session.check_race_limit()
        name, bot, guest = session.identity.name, session.bot, session.guest
        attempt = await ctx.changes.race(
            code,
            lambda r: rules.join(
                _found(r, code), session.player, name, ctx.clock(), bot=bot, guest=guest
            ),
            known=race,
        )
        race = _found(attempt.loaded, code)
        await ctx.store.players.add_player_race(session.player, code)
    elif msg.role == "player" and race.options.quick:  # a matched player: seat confirmed
        race = await confirm_seat(session, race)
    if msg.role == "player" and race.options.rated:  # for the operators' report
        await note_address(session, code)
    if msg.role == "player" and race.preparing:
        _wait_again(session, await session.load(code))


async def _join_archived(session: Session, msg: Join, race: Race) -> Race:
    """A join of a finished race read from the archive: refused as the same join of it
    in Redis would be (a new player cannot join a finished race), its par seen to (the
    node's ``advance``) while it is not settled; the race to show."""
    ctx = session.ctx
    if msg.role == "player":
        check_seat(race, session.player)
        if session.player not in race.players:
            assert session.identity is not None
            rules.join(race, session.player, session.identity.name, ctx.clock(), bot=session.bot)
            raise WrongState(f"race {race.code} is over")  # pragma: no cover - join refuses
    settled = race.par is not None and not race.par.provisional
    if ctx.settings.par_budget > 0 and not settled:
        return await ctx.transitions.advance(race.code) or race
    return race


def wait_for_deal(session: Session, key: tuple[str, ...], variant: str) -> None:
    """Wait (this connection) for a preparing race's proven deal: the node proves it
    while someone waits (see :mod:`..runners.seeds`)."""
    session.ctx.seeds.need(
        key, session, variant=variant, identity=session.player, address=session.address
    )


def _wait_again(session: Session, race: Race) -> None:
    """A player of a race still preparing is back: wait for its deal again, unless
    that would pass this player's or address's cap of proofs (the pool's seeds may
    still serve it)."""
    if not race.preparing or session.player not in race.players:
        return
    o = race.options
    key = Seeds.daily_key(o.variant, o.daily) if o.daily else Seeds.race_key(race.code)
    try:
        session.ctx.seeds.check_room(identity=session.player, address=session.address, key=key)
    except ProofCapReached:
        return
    wait_for_deal(session, key, o.variant)


def _found(race: Race | None, code: str) -> Race:
    """The race read; RaceNotFound when it is gone."""
    if race is None:
        raise RaceNotFound(f"no race {code}")
    return race


async def send_joined(
    session: Session,
    req: int,
    code: str,
    role: Role,
    since: int | None,
    *,
    moved: bool = False,
    archived: Race | None = None,
) -> None:
    """Send the snapshot of a race (with the player's view, or boards) and the events
    after ``since``, then deliver its events from there on. ``archived``: the finished
    race as read from the archive, shown unless Redis has a race of that code now."""
    try:
        await _send_joined(session, req, code, role, since, moved=moved, archived=archived)
    finally:
        session.ctx.hub.release(code)  # only if it was left unwatched by a failure


async def _send_joined(
    session: Session,
    req: int,
    code: str,
    role: Role,
    since: int | None,
    *,
    moved: bool = False,
    archived: Race | None = None,
) -> None:
    ctx, store = session.ctx, session.ctx.store
    if code not in session.subs and len(session.subs) >= ctx.settings.max_watched:
        raise TooManyRaces(f"this connection follows {len(session.subs)} races; leave one first")
    await ctx.hub.watch(code)
    old = session.subs.pop(code, None)
    if old is not None:
        session.unsubscribe(old, keep_presence=True)
    member = session.member(code, role)
    await store.presence.touch_presence([(code, member, role == "spectator")], ctx.clock())
    if role == "player":  # back at once; rejoining after a lost connection: away, back
        # (not when the client moved here from a connection that is still live)
        resumed = old is None and since is not None and not moved
        back = session.player if resumed else None
        try:
            await ctx.presence.check(code, resumed=back)
        except Unavailable as e:  # its check-and-set lost to every move meanwhile
            # the player is back all the same: the join goes on, the decision is
            # made again in the background (and by the node's presence sweep)
            log.info("presence of race %s after a rejoin: %s; deciding it later", code, e)
            ctx.spawner.spawn(ctx.presence.check(code, resumed=back))
    version = await store.races.race_version(code)
    snapshot = None if version is None else ctx.snapshots.get(code, version)
    race: Race | None = None
    if snapshot is None and version is None and archived is not None:
        # an archived race: its snapshot made for this request, not kept (the node's
        # snapshots are of races in Redis, by code and version)
        race = archived
        snapshot = snapshot_of(race, ctx.clock())
    elif snapshot is None:
        race = await session.load(code)
        snapshot = ctx.snapshots.keep(race, ctx.clock())
    online, spectators = await store.presence.presence(code, ctx.clock())
    if moved and role == "spectator" and spectators > 1:
        # the connection it moved from still watches (it closes once this is answered):
        # one spectator, not two
        spectators -= 1
    if snapshot is not None:
        frame = await _finished_frame(
            session, snapshot, req, role, since, online, spectators, race=race
        )
        state, starts_at, ends_at, version = (
            "finished",
            snapshot.starts_at,
            snapshot.ends_at,
            snapshot.version,
        )
        statuses, ghosts, idle = snapshot.statuses, snapshot.ghosts, None
    else:
        assert race is not None
        frame = await _frame(session, race, req, role, since, online, spectators)
        state, starts_at, ends_at, version = (
            race.state.value,
            race.starts_at,
            race.ends_at,
            race.version,
        )
        statuses = {p: e.status for p, e in race.players.items() if not e.ghost}
        ghosts = any(e.ghost for e in race.players.values())
        idle = {p: e.idle_at for p, e in race.players.items() if e.idle_at and not e.ghost}
    sub = Subscription(
        ctx.hub,
        session.out,
        code,
        role,
        version,
        on_started=partial(deal_out, session),
        on_cancelled=partial(match_cancelled, session),
    )
    session.subs[code] = sub
    session.out.send_snapshot(code, frame)
    ctx.hub.add(
        sub,
        state=state,
        starts_at=starts_at,
        ends_at=ends_at,
        statuses=statuses,
        ghosts=ghosts,
        idle=idle,
    )


async def _events(
    session: Session, code: str, role: Role, since: int | None, version: int
) -> list[dict[str, Any]]:
    """The events after ``since`` up to ``version`` that ``role`` gets."""
    if since is None or since >= version:
        return []
    stored = await session.ctx.store.races.events_after(code, since, version)
    return [
        stamp(v, data)[1]
        for v, audience, data in stored or []
        if audience != rules.SPECTATORS or role == "spectator"
    ]


async def _view(session: Session, code: str, race: Race | None = None) -> tuple[str | None, int]:
    """The player's view of their game in race ``code`` and its seq (None, 0: no game).
    A finished ``race`` whose games Redis no longer keeps: its final board and actions."""
    game = await session.ctx.store.races.load_game(code, session.player)
    if game is None:
        final = race.final if race is not None else None
        board = final.boards.get(session.player) if final is not None else None
        if final is None or board is None:
            return None, 0
        return Board.from_text(board).view_text(), len(final.replays.get(session.player, ()))
    return Board.from_text(game.position).view_text(), game.seq


async def _frame(
    session: Session,
    race: Race,
    req: int,
    role: Role,
    since: int | None,
    online: set[str],
    spectators: int,
) -> bytes:
    """The ``joined`` of a race that is not finished (or whose end is not public yet)."""
    ctx, store, code = session.ctx, session.ctx.store, race.code
    joined = Joined(
        req=req,
        role=role,
        race=rules.race_info(race, online=online, spectators=spectators, now=ctx.clock()),
    )
    started = race.state in (RaceState.RUNNING, RaceState.FINISHED)
    if role == "player" and started and session.player in race.players:
        joined.view, joined.seq = await _view(session, code, race)
    if race.final is not None and rules.revealed(race, ctx.clock()):
        joined.boards = dict(race.final.boards)
    elif race.state is RaceState.RUNNING and role == "spectator" and race.options.live_boards:
        joined.boards = await store.races.boards(race, full=False)
    joined.events = await _events(session, code, role, since, race.version)
    return encode(joined)


async def _finished_frame(
    session: Session,
    snapshot: Snapshot,
    req: int,
    role: Role,
    since: int | None,
    online: set[str],
    spectators: int,
    *,
    race: Race | None = None,
) -> bytes:
    """The ``joined`` of a finished race from its shared snapshot: the events after
    ``since`` only when few (:data:`~.snapshots.FINISHED_CATCH_UP`). ``race``: the race
    the snapshot was made of, when read for this request."""
    view, seq = None, 0
    if role == "player" and session.player in snapshot.statuses:
        view, seq = await _view(session, snapshot.code, race)
    events: list[dict[str, Any]] = []
    if since is not None and snapshot.version - since <= FINISHED_CATCH_UP:
        events = await _events(session, snapshot.code, role, since, snapshot.version)
    return snapshot.frame(
        req=req,
        role=role,
        online=online,
        spectators=spectators,
        view=view,
        seq=seq,
        events=events,
    )
