"""The handlers of a player's actions (move, undo, resign): the move path's session step.

A move is decided on the race, game and board the connection's last committed action left
(no read from Redis), checked by the engine (:func:`~..race.apply_action`) and committed
by the store, which sends the ack (the transport's ``send_ack``) and then hands its events
to the hub; the commit's check-and-set on the player's seq catches any change made elsewhere, and
then the race and game are read afresh.
"""

from __future__ import annotations

from spider_client.protocol import Ack, MoveAction, Resign, Undo
from spider_engine import Board

from .. import race as rules
from ..errors import (
    Conflict,
    GameOver,
    InvalidMessage,
    NotAPlayer,
    OutOfOrder,
    RaceNotFound,
    WrongState,
)
from ..race import TERMINAL, Game, Race, RaceState
from ..store import cas_tries
from .core import SessionBase, race_code

__all__ = ["ActionHandlers"]


class ActionHandlers(SessionBase):
    """A player's moves, undos and resignations."""

    async def act(self, msg: MoveAction | Undo | Resign) -> None:
        """A player's move, undo or resign, number ``seq``: applied once, acked."""
        code = race_code(msg.code)
        sub = self.subs.get(code)
        if sub is None or sub.role != "player":
            raise NotAPlayer(f"join race {code} as a player first")
        if msg.seq < 1:
            raise InvalidMessage("seq: 1 or more")
        if isinstance(msg, MoveAction):
            await self.apply(code, "move", seq=msg.seq, move=msg.move)
        elif isinstance(msg, Undo):
            await self.apply(code, "undo", seq=msg.seq)
        else:
            await self.apply(code, "resign", seq=msg.seq)

    async def apply(
        self, code: str, kind: rules.ActionKind, *, seq: int | None, move: str = ""
    ) -> None:
        ctx, out = self.ctx, self.out
        store = ctx.store
        for _ in cas_tries("too much contention on this game; try again"):
            # This connection's last committed action left the race and game as it knows
            # them: the next move is decided on those without reading them again. The
            # commit's check-and-set on seq (and on the race running) catches any change
            # made elsewhere; then they are read afresh.
            known = self._known.pop(code, None)
            race: Race | None
            game: Game | None
            board: Board | None = None
            if known is not None and kind == "move" and seq == known[1].seq + 1:
                race, game, board = known
            else:
                race, game = await store.load_for_action(code, self.player)
            if race is None:
                raise RaceNotFound(f"no race {code}")
            if self.player not in race.players:
                raise NotAPlayer(f"you are not a player of race {code}")
            if game is None:
                raise WrongState(f"race {code} is {race.state.value}")
            if seq is None:  # leave: the next action, whatever it is
                if game.status in TERMINAL:
                    return
                this = game.seq + 1
            else:
                this = seq
                if this <= game.seq:
                    ack = await store.load_ack(code, self.player, this)
                    if ack is None:
                        raise OutOfOrder(f"action {this} is not known")
                    ack.duplicate = True
                    ctx.metrics.actions_total["duplicate"] += 1
                    self.send_msg(ack)
                    return
                if this != game.seq + 1:
                    raise OutOfOrder(f"seq {this}: the next action is {game.seq + 1}")
            undo_base = None
            actions: list[str] = []
            if kind == "undo" and race.options.undo:
                undo_base = await store.load_undo(code, self.player)
                if undo_base is None:  # a game begun before its stack was kept
                    actions = await store.load_actions(code, self.player)
            try:
                outcome = rules.apply_action(
                    race,
                    game,
                    kind,
                    move=move,
                    actions=actions,
                    now=ctx.clock(),
                    board=board,
                    undo_base=undo_base,
                    max_actions=ctx.settings.max_actions,
                )
            except GameOver:
                if race.ends_at is not None and ctx.clock() >= race.ends_at:
                    ctx.spawn(ctx.advance(code))
                raise
            try:
                # once committed: the ack, then the events to the hub (progress)
                await store.commit_action(race, outcome, out.send_ack if seq is not None else None)
            except Conflict:
                continue
            except WrongState:
                race = await ctx.advance(code)
                if race is not None and race.state is RaceState.FINISHED:
                    raise GameOver("the race is over") from None
                raise
            ctx.metrics.actions_total["resign" if kind == "leave" else kind] += 1
            if outcome.board is not None and outcome.game.status not in TERMINAL:
                self._known[code] = (race, outcome.game, outcome.board)
            if race.options.hints and ctx.hints is not None:  # scheduled, not done here
                if outcome.game.status in TERMINAL:
                    ctx.hints.forget(code, self.player)
                else:
                    ctx.hints.schedule(code, self.player, outcome.game.position)
            if outcome.game.status in TERMINAL:
                watch = ctx.hub.watches.get(code)
                if watch is not None:
                    watch.set_status(self.player, outcome.game.status)
                ctx.spawn(ctx.advance(code))
            return

    def deal_out(self, code: str) -> None:
        """Send this player their view of the deal (an ``ack`` with seq 0) once it is out;
        in a race with hints, then start the prefetch of the deal's hint."""

        async def send_deal() -> None:
            game = await self.ctx.store.load_game(code, self.player)
            if game is None or game.seq != 0 or code not in self.subs:
                return
            self.send_msg(
                Ack(
                    code=code,
                    seq=0,
                    move="",
                    view=Board.from_text(game.position).view_text(),
                    status=game.status,
                    moves=game.moves,
                    score=game.score,
                    turned_up=game.turned_up,
                    runs=game.runs,
                    deals_left=game.deals_left,
                    time=game.time,
                )
            )
            hints = self.ctx.hints
            if hints is not None:  # the deal's hint, searched while the player looks at it
                race = await self.ctx.store.load_race(code)
                if race is not None and race.options.hints:
                    hints.schedule(code, self.player, game.position)

        self.ctx.spawn(send_deal())
