"""The handlers of races as a whole: create, the daily race, join, leave, ready and hints
(the lists a player asks for are :mod:`.lists`). Each decides with :mod:`..race` and
commits through :class:`~..fanout.changes.Changes` (again on the race read afresh when its
check-and-set lost)."""

from __future__ import annotations

from functools import partial

from spider_client.protocol import (
    CreateRace,
    DailyRace,
    Done,
    Hint,
    HintReply,
    Join,
    Joined,
    Leave,
    Ready,
    Role,
)
from spider_engine import Board
from spider_engine.solver import rank_moves

from .. import race as rules
from ..errors import (
    GameOver,
    HintsNotAllowed,
    InvalidMessage,
    NotAPlayer,
    RaceNotFound,
    RateLimited,
    RequestError,
    TooManyRaces,
    Unavailable,
    WrongState,
)
from ..fanout.watches import Subscription
from ..race import TERMINAL, Race, RaceState
from ..runners.seeds import Seeds, utc_day
from ..transport import stamp
from ..workers import HintPending, ProofCapReached, WorkerError
from ..workers.child import SUGGESTIONS
from .actions import apply, deal_out
from .core import Session, log, race_code

__all__ = ["HintBudgetSpent", "create_race", "daily_race", "hint", "join", "leave", "ready"]


class HintBudgetSpent(RateLimited):
    """The player asked for ``hints_per_race`` hints in this race already
    (``rate_limited``)."""


async def create_race(session: Session, msg: CreateRace) -> None:
    """Create a race and join it as its first player (reply: ``joined``)."""
    options = rules.RaceOptions.from_request(msg, session.ctx.limits)
    await session.check_race_limit()
    _check_creation_rate(session)
    runs: list[rules.GhostRun] = []
    seed = msg.seed
    if msg.ghosts:
        if msg.seed is not None or options.winnable:
            raise InvalidMessage("ghosts: the race deals the ghosts' deal (no seed)")
        runs, seed = await _ghost_runs(session, msg.ghosts, options)
    if options.winnable and not runs:  # a proven seed at once, or the race waits for one
        seed = await session.ctx.seeds.take(options.variant)
        if seed is None:  # its proofs count against this player's and address's caps
            session.ctx.seeds.check_room(identity=session.player, address=session.address)
    code = await _new_race(
        session, options, seed, preparing=options.winnable and seed is None, ghosts=runs
    )
    if options.winnable and seed is None:
        _wait_for_deal(session, Seeds.race_key(code), options.variant)
    await _joined(session, msg.req, code, "player", None)


def _check_creation_rate(session: Session) -> None:
    """RateLimited past ``address_creations`` races a minute from this address or
    ``player_creations`` by this player."""
    session.limit("player_create", session.player, "you created too many races; wait a minute")
    session.limit("create", session.address, "too many races created from your address")


def _wait_for_deal(session: Session, key: tuple[str, ...], variant: str) -> None:
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
    _wait_for_deal(session, key, o.variant)


async def _ghost_runs(
    session: Session, specs: list[dict[str, str]], options: rules.RaceOptions
) -> tuple[list[rules.GhostRun], str]:
    """The recorded runs ``specs`` name, checked for a race with ``options``, and the
    deal (seed) they share. InvalidMessage when one is not fit."""
    if len(specs) > rules.MAX_GHOSTS:
        raise InvalidMessage(f"ghosts: at most {rules.MAX_GHOSTS}")
    runs: list[rules.GhostRun] = []
    seeds: set[str] = set()
    for spec in specs:
        if not isinstance(spec, dict) or not isinstance(spec.get("race"), str):
            raise InvalidMessage('ghosts: each {"race": CODE, "player": PLAYER_ID}')
        source = await session.ctx.store.races.load_race(race_code(spec["race"]))
        if source is None:
            raise InvalidMessage(f"ghosts: no race {spec['race']}")
        runs.append(
            rules.run_of(
                source,
                str(spec.get("player", "")),
                variant=options.variant,
                undo=options.undo,
                time_limit=options.time_limit,
                now=session.ctx.clock(),
                daily=options.daily,
            )
        )
        seeds.add(source.seed)
    if len(seeds) != 1:
        raise InvalidMessage("ghosts: the runs must be of one deal")
    return runs, seeds.pop()


async def _new_race(
    session: Session,
    options: rules.RaceOptions,
    seed: str | None,
    *,
    preparing: bool,
    ghosts: list[rules.GhostRun] | None = None,
) -> str:
    """Create a race (preparing: queued for a proven seed) with this player in it, and
    the ``ghosts`` given."""
    assert session.identity is not None
    ctx = session.ctx
    name, now = session.identity.name, ctx.clock()

    def make(code: str) -> rules.RaceChange:
        change = rules.create_race(
            code=code,
            options=options,
            creator=session.player,
            name=name,
            now=now,
            seed=seed,
            preparing=preparing,
            bot=session.bot,
        )
        if ghosts:
            rules.add_ghosts(change, ghosts)
        return change

    code = (await ctx.changes.create(make))[0].race.code
    ctx.metrics.races_created_total += 1
    await ctx.store.players.add_player_race(session.player, code)
    if preparing and not options.daily:
        await ctx.seeds.wait(options.variant, code)
    return code


async def daily_race(session: Session, msg: DailyRace) -> None:
    """Race the day's deal alone (reply: ``joined``); asking again rejoins the race."""
    variant = rules.offered_variant(msg.variant)
    ctx, store = session.ctx, session.ctx.store
    day = utc_day(ctx.clock())
    code = await store.seeds.daily_race_of(variant.id, day, session.player)
    if code is not None and await store.races.load_race(code) is not None:
        await join(session, Join(req=msg.req, code=code))
        return
    await session.check_race_limit()
    _check_creation_rate(session)
    seed = await ctx.seeds.daily(variant.id, day)
    key = ctx.seeds.daily_key(variant.id, day)
    if seed is None:  # proving the day's deal counts against the caps, unless under way
        ctx.seeds.check_room(identity=session.player, address=session.address, key=key)
    options = rules.RaceOptions(
        variant=variant.id,
        max_players=1,
        time_limit=min(3600, ctx.limits.max_time_limit),
        undo=True,
        live_boards=False,
        countdown=min(3, ctx.limits.max_countdown),
        winnable=True,
        daily=day,
        away_grace=ctx.limits.max_away_grace,  # alone: nobody to hold, come back later
    )
    runs, ghost_seed = await _ghost_runs(session, msg.ghosts, options) if msg.ghosts else ([], seed)
    if ghost_seed != seed:
        raise InvalidMessage("ghosts: the runs must be of the day's deal")
    code = await _new_race(session, options, seed, preparing=seed is None, ghosts=runs)
    if not await store.seeds.set_daily_race(variant.id, day, session.player, code):
        # another connection of this player made one at the same moment: use that one
        await ctx.changes.race(code, partial(_leave, session.player, ctx.clock()))
        await store.players.drop_player_races(session.player, [code])
        code = await store.seeds.daily_race_of(variant.id, day, session.player) or code
        await join(session, Join(req=msg.req, code=code))
        return
    if seed is None:
        await ctx.seeds.wait_daily(variant.id, day, code)
        _wait_for_deal(session, key, variant.id)
    await _joined(session, msg.req, code, "player", None)


async def hint(session: Session, msg: Hint) -> None:
    """A hint from the player's full position (races with ``hints``), counted.

    The checks are made here; the hint comes from the node's :mod:`~..runners.hints` (a
    prefetch kept or under way, else a quick search in a solver worker) while this
    connection's other messages go on, and the reply comes when it is done: the first
    move of a winning line (then the ranking's other moves, and the verdict), or, when
    the worker gives no answer in time (or dies), the players' ranking of moves. One hint at a time per player
    (:class:`~..workers.HintPending`; the same request sent again is answered once)
    and ``hints_per_race`` per player and race (:class:`HintBudgetSpent`), both
    ``rate_limited``; so are hints past ``player_hints`` a minute for the player or
    ``address_hints`` for the client's address (taken before any Redis read: a
    refused hint costs the node nothing)."""
    code = race_code(msg.code)
    ctx, store = session.ctx, session.ctx.store
    if code in session.hinting:
        if session.hinting[code] == msg.req:
            return  # the same request sent again: its reply is on its way
        raise HintPending("your previous hint is still being worked out")
    s = ctx.settings
    session.limit("player_hint", session.player, f"at most {s.player_hints} hints a minute")
    session.limit("hint", session.address, f"at most {s.address_hints} hints a minute from here")
    race, game = await store.races.load_for_action(code, session.player)
    if race is None:
        raise RaceNotFound(f"no race {code}")
    if session.player not in race.players:
        raise NotAPlayer(f"you are not a player of race {code}")
    if not race.options.hints:
        raise HintsNotAllowed(f"race {code} does not allow hints")
    if race.state is RaceState.FINISHED:
        raise GameOver(f"race {code} is over")
    if race.state is not RaceState.RUNNING or game is None:
        raise WrongState(f"race {code} is {race.state.value}")
    if game.status in TERMINAL:
        raise GameOver(f"your game is over ({game.status})")
    budget = ctx.settings.hints_per_race
    if await store.races.hints_of(code, session.player) >= budget:
        raise HintBudgetSpent(f"at most {budget} hints per player in a race")
    session.hinting[code] = msg.req
    task = ctx.spawner.spawn(_answer_hint(session, msg, code, game.position))
    if task is None:  # the node is closing
        del session.hinting[code]
        return
    session.hint_tasks.add(task)
    task.add_done_callback(session.hint_tasks.discard)


async def _answer_hint(session: Session, msg: Hint, code: str, position: str) -> None:
    """Work the hint out in a solver worker, count it, reply (errors as replies)."""
    ctx, store = session.ctx, session.ctx.store
    try:
        full = Board.from_text(position)
        moves: list[str]
        verdict = ""
        try:
            if ctx.hints is not None:
                found = await ctx.hints.answer(code, session.player, full.view_text(), position)
            else:
                found = await ctx.workers.suggest(
                    full.view_text(), position, ctx.settings.hint_budget, player=session.player
                )
            moves, verdict = list(found.moves), found.verdict
        except WorkerError:  # no answer in time, a dead worker, or none running
            ctx.metrics.hints_total["ranking"] += 1
            moves = [m.text() for m in rank_moves(full)[:SUGGESTIONS]]
        move = moves[0] if moves else None
        count = await store.races.add_hint(code, session.player)
        session.known.pop(code, None)
        await ctx.changes.race(code, partial(_count_hint, session.player, count))  # seen by all
        session.send_msg(HintReply(req=msg.req, move=move, moves=moves, verdict=verdict))
    except RequestError as e:
        session.error(e.code, str(e), msg, req=e.req)
    except Exception:
        log.exception("working out a hint failed")
        session.error("internal", "the server failed; nothing was changed", msg)
    finally:
        session.hinting.pop(code, None)


async def join(session: Session, msg: Join) -> None:
    """Join as player (an open race, or resume one's own) or spectator (any race)."""
    code = race_code(msg.code)
    if msg.since is not None and msg.since < 0:
        raise InvalidMessage("since: a version, 0 or more")
    ctx = session.ctx
    addresses = ctx.addresses
    if addresses is not None and not addresses.allows("wrong_join", session.address):
        ctx.metrics.refused_total["wrong_joins"] += 1
        raise RateLimited("too many joins with a wrong code from your address; wait")
    if await ctx.store.races.race_version(code) is None:  # nothing is watched nor claimed
        session.limit("wrong_join", session.address, "too many joins with a wrong code")
        raise RaceNotFound(f"no race {code}")
    await ctx.hub.watch(code)
    try:
        race = await ctx.transitions.advance(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        if msg.role == "player" and session.player not in race.players:
            assert session.identity is not None
            await session.check_race_limit()
            name, bot = session.identity.name, session.bot
            attempt = await ctx.changes.race(
                code,
                lambda r: rules.join(_found(r, code), session.player, name, ctx.clock(), bot=bot),
                known=race,
            )
            race = _found(attempt.loaded, code)
            await ctx.store.players.add_player_race(session.player, code)
        if msg.role == "player" and race.preparing:
            _wait_again(session, await session.load(code))
        await _joined(session, msg.req, code, msg.role, msg.since, moved=msg.moved)
    finally:
        ctx.hub.release(code)


async def _joined(
    session: Session, req: int, code: str, role: Role, since: int | None, *, moved: bool = False
) -> None:
    """Send the snapshot of a race (with the player's view, or boards) and the events
    after ``since``, then deliver its events from there on."""
    try:
        await _send_joined(session, req, code, role, since, moved=moved)
    finally:
        session.ctx.hub.release(code)  # only if it was left unwatched by a failure


async def _send_joined(
    session: Session, req: int, code: str, role: Role, since: int | None, *, moved: bool = False
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
    race = await session.load(code)
    online, spectators = await store.presence.presence(code, ctx.clock())
    if moved and role == "spectator" and spectators > 1:
        # the connection it moved from still watches (it closes once this is answered):
        # one spectator, not two
        spectators -= 1
    joined = Joined(
        req=req,
        role=role,
        race=rules.race_info(race, online=online, spectators=spectators, now=ctx.clock()),
    )
    started = race.state in (RaceState.RUNNING, RaceState.FINISHED)
    if role == "player" and started and session.player in race.players:
        game = await store.races.load_game(code, session.player)
        if game is not None:
            joined.view = Board.from_text(game.position).view_text()
            joined.seq = game.seq
    if race.final is not None and rules.revealed(race, ctx.clock()):
        joined.boards = dict(race.final.boards)
    elif race.state is RaceState.RUNNING and role == "spectator" and race.options.live_boards:
        joined.boards = await store.races.boards(race, full=False)
    if since is not None and since < race.version:
        stored = await store.races.events_after(code, since, race.version)
        for version, audience, data in stored or []:
            if audience == rules.SPECTATORS and role != "spectator":
                continue
            joined.events.append(stamp(version, data)[1])
    sub = Subscription(
        ctx.hub, session.out, code, role, race.version, on_started=partial(deal_out, session)
    )
    session.subs[code] = sub
    session.send_msg(joined)
    ctx.hub.add(
        sub,
        state=race.state.value,
        starts_at=race.starts_at,
        ends_at=race.ends_at,
        statuses={p: e.status for p, e in race.players.items() if not e.ghost},
        ghosts=any(e.ghost for e in race.players.values()),
    )


async def leave(session: Session, msg: Leave) -> None:
    """Leave a race: out of an open race or a countdown; a running game is resigned
    (status ``left``); a spectator stops watching. Reply: ``done``."""
    code = race_code(msg.code)
    ctx = session.ctx
    race = await ctx.transitions.advance(code)
    if race is None:
        raise RaceNotFound(f"no race {code}")
    sub = session.subs.get(code)
    if session.player not in race.players and sub is None:
        raise NotAPlayer(f"you are not in race {code}")
    if session.player in race.players and (sub is None or sub.role == "player"):
        if race.state in (RaceState.OPEN, RaceState.COUNTDOWN):
            known: list[Race | None] = [race]

            async def load() -> Race | None:  # after a lost try: any transition due, made
                return known.pop() if known else await ctx.transitions.advance(code)

            attempt = await ctx.changes.decide(load, partial(_leave, session.player, ctx.clock()))
            race = attempt.loaded
            await ctx.store.players.drop_player_races(session.player, [code])
        if race is not None and race.state is RaceState.RUNNING:
            await apply(session, race.code, "leave", seq=None)
    if sub is not None:
        session.unsubscribe(sub)
    o = race.options if race is not None else None
    if o is not None:
        key = Seeds.daily_key(o.variant, o.daily) if o.daily else Seeds.race_key(code)
        ctx.seeds.release(session, key)
    session.send_msg(Done(req=msg.req))


async def ready(session: Session, msg: Ready) -> None:
    """Mark ready (or not); when all are, the countdown starts. Reply: ``done``."""
    code = race_code(msg.code)
    ctx = session.ctx
    race = await ctx.transitions.advance(code)
    if race is None:
        raise RaceNotFound(f"no race {code}")
    attempt = await ctx.changes.race(
        code,
        lambda r: rules.set_ready(_found(r, code), session.player, msg.ready, ctx.clock()),
        known=race,
    )
    change = attempt.decision
    session.send_msg(Done(req=msg.req))
    if (
        change is not None
        and change.race.state is RaceState.COUNTDOWN
        and change.race.options.countdown == 0
    ):
        await ctx.transitions.advance(code)


def _found(race: Race | None, code: str) -> Race:
    """The race read; RaceNotFound when it is gone."""
    if race is None:
        raise RaceNotFound(f"no race {code}")
    return race


def _leave(player: str, now: float, race: Race | None) -> rules.RaceChange | None:
    """The player's leaving of an open race or a countdown (None: nothing to leave)."""
    if race is None or player not in race.players:
        return None
    if race.state not in (RaceState.OPEN, RaceState.COUNTDOWN):
        return None
    return rules.leave(race, player, now)


def _count_hint(player: str, count: int, race: Race | None) -> rules.RaceChange | None:
    return None if race is None else rules.count_hint(race, player, count)
