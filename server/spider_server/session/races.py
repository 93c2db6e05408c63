"""The handlers of races as a whole: create, the daily race, join, leave, ready and hints
(the lists a player asks for are :mod:`.lists`). Each decides with :mod:`..race` and commits through the store, trying a
check-and-set that lost again (:func:`~..store.cas_tries`)."""

from __future__ import annotations

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
from spider_engine import Board, VariantError, find_variant
from spider_engine.solver import rank_moves

from .. import race as rules
from ..errors import (
    Conflict,
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
from ..race import TERMINAL, Race, RaceState
from ..seeds import Seeds, utc_day
from ..store import cas_tries
from ..transport import stamp
from ..watches import Subscription
from ..workers import HintPending, ProofCapReached, WorkerError
from ..workers.child import SUGGESTIONS
from .core import SessionBase, log, race_code

__all__ = ["HintBudgetSpent", "RaceHandlers"]


class HintBudgetSpent(RateLimited):
    """The player asked for ``hints_per_race`` hints in this race already
    (``rate_limited``)."""


class RaceHandlers(SessionBase):
    """Creating, joining and leaving races; readiness; hints; the daily race."""

    async def create_race(self, msg: CreateRace) -> None:
        """Create a race and join it as its first player (reply: ``joined``)."""
        options = rules.RaceOptions.from_request(msg, self.ctx.limits)
        await self.check_race_limit()
        self.check_creation_rate()
        runs: list[rules.GhostRun] = []
        seed = msg.seed
        if msg.ghosts:
            if msg.seed is not None or options.winnable:
                raise InvalidMessage("ghosts: the race deals the ghosts' deal (no seed)")
            runs, seed = await self._ghost_runs(msg.ghosts, options)
        if options.winnable and not runs:  # a proven seed at once, or the race waits for one
            seed = await self.ctx.seeds.take(options.variant)
            if seed is None:  # its proofs count against this player's and address's caps
                self.ctx.seeds.check_room(identity=self.player, address=self.address)
        code = await self._new_race(
            options, seed, preparing=options.winnable and seed is None, ghosts=runs
        )
        if options.winnable and seed is None:
            self._wait_for_deal(Seeds.race_key(code), options.variant)
        await self._joined(msg.req, code, "player", None)

    def check_creation_rate(self) -> None:
        """RateLimited past ``address_creations`` races a minute from this address or
        ``player_creations`` by this player."""
        self.limit("player_create", self.player, "you created too many races; wait a minute")
        self.limit("create", self.address, "too many races created from your address")

    def _wait_for_deal(self, key: tuple[str, ...], variant: str) -> None:
        """Wait (this connection) for a preparing race's proven deal: the node proves it
        while someone waits (see :mod:`..seeds`)."""
        self.ctx.seeds.need(key, self, variant=variant, identity=self.player, address=self.address)

    def _wait_again(self, race: Race) -> None:
        """A player of a race still preparing is back: wait for its deal again, unless
        that would pass this player's or address's cap of proofs (the pool's seeds may
        still serve it)."""
        if not race.preparing or self.player not in race.players:
            return
        o = race.options
        key = Seeds.daily_key(o.variant, o.daily) if o.daily else Seeds.race_key(race.code)
        try:
            self.ctx.seeds.check_room(identity=self.player, address=self.address, key=key)
        except ProofCapReached:
            return
        self._wait_for_deal(key, o.variant)

    async def _ghost_runs(
        self, specs: list[dict[str, str]], options: rules.RaceOptions
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
            source = await self.ctx.store.load_race(race_code(spec["race"]))
            if source is None:
                raise InvalidMessage(f"ghosts: no race {spec['race']}")
            runs.append(
                rules.run_of(
                    source,
                    str(spec.get("player", "")),
                    variant=options.variant,
                    undo=options.undo,
                    time_limit=options.time_limit,
                    now=self.ctx.clock(),
                    daily=options.daily,
                )
            )
            seeds.add(source.seed)
        if len(seeds) != 1:
            raise InvalidMessage("ghosts: the runs must be of one deal")
        return runs, seeds.pop()

    async def _new_race(
        self,
        options: rules.RaceOptions,
        seed: str | None,
        *,
        preparing: bool,
        ghosts: list[rules.GhostRun] | None = None,
    ) -> str:
        """Create a race (preparing: queued for a proven seed) with this player in it, and
        the ``ghosts`` given."""
        assert self.identity is not None
        ctx = self.ctx
        for _ in cas_tries("could not find a free join code"):  # 32**5 codes
            change = rules.create_race(
                code=rules.new_code(),
                options=options,
                creator=self.player,
                name=self.identity.name,
                now=ctx.clock(),
                seed=seed,
                preparing=preparing,
                bot=self.bot,
            )
            if ghosts:
                rules.add_ghosts(change, ghosts)
            try:
                await ctx.store.commit(change, new=True)
            except Conflict:
                continue
            break
        code = change.race.code
        ctx.metrics.races_created_total += 1
        await ctx.store.add_player_race(self.player, code)
        if preparing and not options.daily:
            await ctx.seeds.wait(options.variant, code)
        return code

    async def daily_race(self, msg: DailyRace) -> None:
        """Race the day's deal alone (reply: ``joined``); asking again rejoins the race."""
        try:
            variant = find_variant(msg.variant)
        except VariantError as e:
            raise InvalidMessage(f"variant: {e}") from None
        if not variant.listed:
            raise InvalidMessage(f"variant: {msg.variant!r} is not offered")
        ctx, store = self.ctx, self.ctx.store
        day = utc_day(ctx.clock())
        code = await store.daily_race_of(variant.id, day, self.player)
        if code is not None and await store.load_race(code) is not None:
            await self.join(Join(req=msg.req, code=code))
            return
        await self.check_race_limit()
        self.check_creation_rate()
        seed = await ctx.seeds.daily(variant.id, day)
        key = ctx.seeds.daily_key(variant.id, day)
        if seed is None:  # proving the day's deal counts against the caps, unless under way
            ctx.seeds.check_room(identity=self.player, address=self.address, key=key)
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
        runs, ghost_seed = await self._ghost_runs(msg.ghosts, options) if msg.ghosts else ([], seed)
        if ghost_seed != seed:
            raise InvalidMessage("ghosts: the runs must be of the day's deal")
        code = await self._new_race(options, seed, preparing=seed is None, ghosts=runs)
        if not await store.set_daily_race(variant.id, day, self.player, code):
            # another connection of this player made one at the same moment: use that one
            await store.commit(rules.leave(await self.load(code), self.player, ctx.clock()))
            await store.drop_player_races(self.player, [code])
            code = await store.daily_race_of(variant.id, day, self.player) or code
            await self.join(Join(req=msg.req, code=code))
            return
        if seed is None:
            await ctx.seeds.wait_daily(variant.id, day, code)
            self._wait_for_deal(key, variant.id)
        await self._joined(msg.req, code, "player", None)

    async def hint(self, msg: Hint) -> None:
        """A hint from the player's full position (races with ``hints``), counted.

        The checks are made here; the hint comes from the node's :mod:`~..hints` (a
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
        ctx, store = self.ctx, self.ctx.store
        if code in self._hinting:
            if self._hinting[code] == msg.req:
                return  # the same request sent again: its reply is on its way
            raise HintPending("your previous hint is still being worked out")
        s = ctx.settings
        self.limit("player_hint", self.player, f"at most {s.player_hints} hints a minute")
        self.limit("hint", self.address, f"at most {s.address_hints} hints a minute from here")
        race, game = await store.load_for_action(code, self.player)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        if self.player not in race.players:
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
        if await store.hints_of(code, self.player) >= budget:
            raise HintBudgetSpent(f"at most {budget} hints per player in a race")
        self._hinting[code] = msg.req
        task = ctx.spawn(self._answer_hint(msg, code, game.position))
        if task is None:  # the node is closing
            del self._hinting[code]
            return
        self._hint_tasks.add(task)
        task.add_done_callback(self._hint_tasks.discard)

    async def _answer_hint(self, msg: Hint, code: str, position: str) -> None:
        """Work the hint out in a solver worker, count it, reply (errors as replies)."""
        ctx, store = self.ctx, self.ctx.store
        try:
            full = Board.from_text(position)
            moves: list[str]
            verdict = ""
            try:
                if ctx.hints is not None:
                    found = await ctx.hints.answer(code, self.player, full.view_text(), position)
                else:
                    found = await ctx.workers.suggest(
                        full.view_text(), position, ctx.settings.hint_budget, player=self.player
                    )
                moves, verdict = list(found.moves), found.verdict
            except WorkerError:  # no answer in time, a dead worker, or none running
                ctx.metrics.hints_total["ranking"] += 1
                moves = [m.text() for m in rank_moves(full)[:SUGGESTIONS]]
            move = moves[0] if moves else None
            count = await store.add_hint(code, self.player)
            self._known.pop(code, None)
            for _ in cas_tries():  # everyone sees the count go up
                current = await store.load_race(code)
                change = None if current is None else rules.count_hint(current, self.player, count)
                if change is None:
                    break
                try:
                    await store.commit(change)
                    break
                except Conflict:
                    continue
            self.send_msg(HintReply(req=msg.req, move=move, moves=moves, verdict=verdict))
        except RequestError as e:
            self.error(e.code, str(e), msg, req=e.req)
        except Exception:
            log.exception("working out a hint failed")
            self.error("internal", "the server failed; nothing was changed", msg)
        finally:
            self._hinting.pop(code, None)

    async def join(self, msg: Join) -> None:
        """Join as player (an open race, or resume one's own) or spectator (any race)."""
        code = race_code(msg.code)
        if msg.since is not None and msg.since < 0:
            raise InvalidMessage("since: a version, 0 or more")
        ctx = self.ctx
        addresses = ctx.addresses
        if addresses is not None and not addresses.allows("wrong_join", self.address):
            ctx.metrics.refused_total["wrong_joins"] += 1
            raise RateLimited("too many joins with a wrong code from your address; wait")
        if await ctx.store.race_version(code) is None:  # nothing is watched nor claimed
            self.limit("wrong_join", self.address, "too many joins with a wrong code")
            raise RaceNotFound(f"no race {code}")
        await ctx.hub.watch(code)
        try:
            race = await ctx.advance(code)
            if race is None:
                raise RaceNotFound(f"no race {code}")
            if msg.role == "player" and self.player not in race.players:
                assert self.identity is not None
                await self.check_race_limit()
                for attempt in cas_tries():
                    if attempt:
                        race = await self.load(code)
                    change = rules.join(
                        race, self.player, self.identity.name, ctx.clock(), bot=self.bot
                    )
                    if change is None:
                        break
                    try:
                        await ctx.store.commit(change)
                        break
                    except Conflict:
                        continue
                await ctx.store.add_player_race(self.player, code)
            if msg.role == "player" and race.preparing:
                self._wait_again(await self.load(code))
            await self._joined(msg.req, code, msg.role, msg.since, moved=msg.moved)
        finally:
            ctx.hub.release(code)

    async def _joined(
        self, req: int, code: str, role: Role, since: int | None, *, moved: bool = False
    ) -> None:
        """Send the snapshot of a race (with the player's view, or boards) and the events
        after ``since``, then deliver its events from there on."""
        try:
            await self._send_joined(req, code, role, since, moved=moved)
        finally:
            self.ctx.hub.release(code)  # only if it was left unwatched by a failure

    async def _send_joined(
        self, req: int, code: str, role: Role, since: int | None, *, moved: bool = False
    ) -> None:
        ctx, store = self.ctx, self.ctx.store
        if code not in self.subs and len(self.subs) >= ctx.settings.max_watched:
            raise TooManyRaces(f"this connection follows {len(self.subs)} races; leave one first")
        await ctx.hub.watch(code)
        old = self.subs.pop(code, None)
        if old is not None:
            self.unsubscribe(old, keep_presence=True)
        member = self.member(code, role)
        await store.touch_presence([(code, member, role == "spectator")], ctx.clock())
        if role == "player":  # back at once; rejoining after a lost connection: away, back
            # (not when the client moved here from a connection that is still live)
            resumed = old is None and since is not None and not moved
            back = self.player if resumed else None
            try:
                await ctx.presence(code, resumed=back)
            except Unavailable as e:  # its check-and-set lost to every move meanwhile
                # the player is back all the same: the join goes on, the decision is
                # made again in the background (and by the node's presence sweep)
                log.info("presence of race %s after a rejoin: %s; deciding it later", code, e)
                ctx.spawn(ctx.presence(code, resumed=back))
        race = await self.load(code)
        online, spectators = await store.presence(code, ctx.clock())
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
        if role == "player" and started and self.player in race.players:
            game = await store.load_game(code, self.player)
            if game is not None:
                joined.view = Board.from_text(game.position).view_text()
                joined.seq = game.seq
        if race.final is not None and rules.revealed(race, ctx.clock()):
            joined.boards = dict(race.final.boards)
        elif race.state is RaceState.RUNNING and role == "spectator" and race.options.live_boards:
            joined.boards = await store.boards(race, full=False)
        if since is not None and since < race.version:
            stored = await store.events_after(code, since, race.version)
            for version, audience, data in stored or []:
                if audience == rules.SPECTATORS and role != "spectator":
                    continue
                joined.events.append(stamp(version, data)[1])
        sub = Subscription(ctx.hub, self.out, code, role, race.version, on_started=self.deal_out)
        self.subs[code] = sub
        self.send_msg(joined)
        ctx.hub.add(
            sub,
            state=race.state.value,
            starts_at=race.starts_at,
            ends_at=race.ends_at,
            statuses={p: e.status for p, e in race.players.items() if not e.ghost},
            ghosts=any(e.ghost for e in race.players.values()),
        )

    async def leave(self, msg: Leave) -> None:
        """Leave a race: out of an open race or a countdown; a running game is resigned
        (status ``left``); a spectator stops watching. Reply: ``done``."""
        code = race_code(msg.code)
        ctx = self.ctx
        race = await ctx.advance(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        sub = self.subs.get(code)
        if self.player not in race.players and sub is None:
            raise NotAPlayer(f"you are not in race {code}")
        if self.player in race.players and (sub is None or sub.role == "player"):
            if race.state in (RaceState.OPEN, RaceState.COUNTDOWN):
                for _ in cas_tries():
                    try:
                        await ctx.store.commit(rules.leave(race, self.player, ctx.clock()))
                        break
                    except Conflict:
                        race = await ctx.advance(code)
                        if race is None or self.player not in race.players:
                            break
                        if race.state not in (RaceState.OPEN, RaceState.COUNTDOWN):
                            break
                await ctx.store.drop_player_races(self.player, [code])
            if race is not None and race.state is RaceState.RUNNING:
                await self.apply(race.code, "leave", seq=None)
        if sub is not None:
            self.unsubscribe(sub)
        o = race.options if race is not None else None
        if o is not None:
            key = Seeds.daily_key(o.variant, o.daily) if o.daily else Seeds.race_key(code)
            ctx.seeds.release(self, key)
        self.send_msg(Done(req=msg.req))

    async def ready(self, msg: Ready) -> None:
        """Mark ready (or not); when all are, the countdown starts. Reply: ``done``."""
        code = race_code(msg.code)
        ctx = self.ctx
        race = await ctx.advance(code)
        if race is None:
            raise RaceNotFound(f"no race {code}")
        for attempt in cas_tries():
            if attempt:
                race = await self.load(code)
            change = rules.set_ready(race, self.player, msg.ready, ctx.clock())
            if change is None:
                break
            try:
                await ctx.store.commit(change)
                break
            except Conflict:
                continue
        self.send_msg(Done(req=msg.req))
        if (
            change is not None
            and change.race.state is RaceState.COUNTDOWN
            and change.race.options.countdown == 0
        ):
            await ctx.advance(code)
