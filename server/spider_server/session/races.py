"""The handlers of races as a whole: create, the daily race, leave, ready and hints (join
is :mod:`.joining`'s, the lists a player asks for :mod:`.lists`'s). Each decides with
:mod:`..race` and commits through :class:`~..fanout.changes.Changes` (again on the race
read afresh when its check-and-set lost)."""

from __future__ import annotations

import contextlib
from functools import partial

from spider_client.protocol import (
    CreateRace,
    DailyRace,
    Done,
    Hint,
    HintReply,
    Join,
    Leave,
    Ready,
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
    Unavailable,
    WrongState,
)
from ..race import TERMINAL, Race, RaceState
from ..runners.seeds import Seeds, utc_day
from ..workers import HintPending, WorkerError
from ..workers.child import SUGGESTIONS
from .actions import apply
from .core import Session, log, race_code
from .creation import check_creation
from .joining import join, note_address, send_joined, wait_for_deal
from .matching import dodge

__all__ = ["HintBudgetSpent", "create_race", "daily_race", "hint", "join", "leave", "ready"]


class HintBudgetSpent(RateLimited):
    """The player asked for ``hints_per_race`` hints in this race already
    (``rate_limited``)."""


async def create_race(session: Session, msg: CreateRace) -> None:
    """Create a race and join it as its first player (reply: ``joined``). A public race
    first claims its places in the lobby's list (the player's, the address's:
    :meth:`~..store.OpenList.claim`, ``too_many_races`` when none is left), held while
    it is listed. A guest asking for a rated race is told first that rated races are for
    accounts (whatever else it asked for)."""
    if msg.rated and session.guest:
        rules.check_account(guest=True)
    options = rules.RaceOptions.from_request(msg, session.ctx.limits)
    await check_creation(session)
    open_list = session.ctx.store.open_list
    claim = await open_list.claim(session.player, session.address) if options.public else None
    code: str | None = None
    try:
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
        preparing = options.winnable and seed is None
        code = await _new_race(session, options, seed, preparing=preparing, ghosts=runs)
    finally:
        if claim is not None:
            await open_list.settle(claim, session.player, session.address, code)
    if options.rated:  # for the operators' report
        await note_address(session, code)
    if options.winnable and seed is None:
        wait_for_deal(session, Seeds.race_key(code), options.variant)
    await send_joined(session, msg.req, code, "player", None)


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
        source = await session.finished_race(race_code(spec["race"]))
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
            guest=session.guest,
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
    if code is not None and await session.finished_race(code) is not None:
        await join(session, Join(req=msg.req, code=code))
        return
    await check_creation(session)
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
        idle_limit=ctx.limits.max_idle_limit,
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
        wait_for_deal(session, key, variant.id)
    await send_joined(session, msg.req, code, "player", None)


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
    ``address_hints`` for the client's address (shared by every node, taken together in
    one round trip before the race is read: a refused hint costs the node no more)."""
    code = race_code(msg.code)
    ctx, store = session.ctx, session.ctx.store
    if code in session.hinting:
        if session.hinting[code] == msg.req:
            return  # the same request sent again: its reply is on its way
        raise HintPending("your previous hint is still being worked out")
    s = ctx.settings
    await session.limit(
        ("player_hint", session.player, f"at most {s.player_hints} hints a minute"),
        ("hint", session.address, f"at most {s.address_hints} hints a minute from here"),
    )
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
        line: tuple[str, ...] = ()
        try:
            if ctx.hints is not None:
                found = await ctx.hints.answer(code, session.player, full.view_text(), position)
            else:
                found = await ctx.workers.suggest(
                    full.view_text(), position, ctx.settings.hint_budget, player=session.player
                )
            moves, verdict, line = list(found.moves), found.verdict, found.line
        except WorkerError:  # no answer in time, a dead worker, or none running
            ctx.metrics.hints_total["ranking"] += 1
            moves = [m.text() for m in rank_moves(full)[:SUGGESTIONS]]
        move = moves[0] if moves else None
        count = await store.races.add_hint(code, session.player)
        session.known.pop(code, None)
        await ctx.changes.race(code, partial(_count_hint, session.player, count))  # seen by all
        session.send_msg(HintReply(req=msg.req, move=move, moves=moves, verdict=verdict))
        if line:  # the deal's winning line it makes: a provisional par at the finish
            ctx.spawner.spawn(_keep_line(session, code, position, line))
    except RequestError as e:
        session.error(e.code, str(e), msg, req=e.req)
    except Exception:
        log.exception("working out a hint failed")
        session.error("internal", "the server failed; nothing was changed", msg)
    finally:
        session.hinting.pop(code, None)  # at once after the reply: no await between


async def _keep_line(session: Session, code: str, position: str, line: tuple[str, ...]) -> None:
    """Keep the winning line of the deal a hint gave (after its reply, in a task of its
    own: the player may ask again meanwhile)."""
    with contextlib.suppress(Unavailable):
        await session.ctx.store.races.keep_hint_line(code, session.player, position, line)


async def leave(session: Session, msg: Leave) -> None:
    """Leave a race: out of an open race or a countdown (a quick match's: a dodge,
    :func:`~.matching.dodge`); a running game is resigned (status ``left``); a spectator
    stops watching. Reply: ``done``."""
    code = race_code(msg.code)
    ctx = session.ctx
    race = await ctx.transitions.advance(code)
    if race is None:
        raise RaceNotFound(f"no race {code}")
    sub = session.subs.get(code)
    if session.player not in race.players and sub is None:
        raise NotAPlayer(f"you are not in race {code}")
    if session.player in race.players and (sub is None or sub.role == "player"):
        if race.state in (RaceState.OPEN, RaceState.COUNTDOWN) and race.options.quick:
            race = await dodge(session, race)  # a matched race left before its start
        elif race.state in (RaceState.OPEN, RaceState.COUNTDOWN):
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
