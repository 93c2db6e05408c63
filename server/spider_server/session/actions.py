"""The handlers of a player's actions (move, undo, resign): the move path's session step.

A move is decided on the race, game and board the connection's last committed action left
(no read from Redis), checked by the engine (:func:`~..race.apply_action`) and committed by
the store (:func:`~..store.check_and_set`: the commit's check-and-set on the player's seq
catches any change made elsewhere, and then the race and game are read afresh). What was
committed comes back here: the session sends the mover's ack (the transport's
``send_ack``), then hands the events to the hub (:meth:`~..fanout.changes.Changes.publish`).
"""

from __future__ import annotations

from typing import NamedTuple

from spider_client.protocol import Ack, MoveAction, Resign, Undo
from spider_engine import Board

from .. import race as rules
from ..errors import (
    GameOver,
    InvalidMessage,
    NotAPlayer,
    OutOfOrder,
    RaceNotFound,
    WrongState,
)
from ..race import TERMINAL, Game, Race, RaceState, UndoBase
from ..store import Committed, check_and_set
from .core import Session, race_code

__all__ = ["act", "apply", "deal_out"]


async def act(session: Session, msg: MoveAction | Undo | Resign) -> None:
    """A player's move, undo or resign, number ``seq``: applied once, acked."""
    code = race_code(msg.code)
    sub = session.subs.get(code)
    if sub is None or sub.role != "player":
        raise NotAPlayer(f"join race {code} as a player first")
    if msg.seq < 1:
        raise InvalidMessage("seq: 1 or more")
    if isinstance(msg, MoveAction):
        await apply(session, code, "move", seq=msg.seq, move=msg.move)
    elif isinstance(msg, Undo):
        await apply(session, code, "undo", seq=msg.seq)
    else:
        await apply(session, code, "resign", seq=msg.seq)


async def apply(
    session: Session, code: str, kind: rules.ActionKind, *, seq: int | None, move: str = ""
) -> None:
    """Apply the player's action number ``seq`` (None: ``leave``, the next one, unless
    their game is over) in race ``code``: decided, committed, acked, then its events to
    the hub."""
    ctx = session.ctx
    action = _Action(session, code, kind, seq, move)
    try:
        attempt = await check_and_set(
            action.load,
            action.decide,
            action.commit,
            busy="too much contention on this game; try again",
        )
    except GameOver:
        race = action.race  # over by its clock, not finished yet: the finish is due
        due = race is not None and race.ends_at is not None and ctx.clock() >= race.ends_at
        if due and not action.advanced:
            ctx.spawner.spawn(ctx.transitions.advance(code))
        raise
    read, outcome, committed = attempt.loaded, attempt.decision, attempt.committed
    if outcome is None or committed is None:
        if read.ack is not None:  # a resent action, applied already: its ack again
            ctx.metrics.actions_total["duplicate"] += 1
            session.send_msg(read.ack)
        return
    if seq is not None:  # the mover's ack first, then the events (their progress)
        session.out.send_ack(committed.ack, (code, committed.player), committed.upto)
    ctx.changes.publish(committed)
    race = read.race
    ctx.metrics.actions_total["resign" if kind == "leave" else kind] += 1
    over = outcome.game.status in TERMINAL
    if outcome.board is not None and not over:
        session.known[code] = (race, outcome.game, outcome.board)
    if race.options.hints and ctx.hints is not None:  # scheduled, not done here
        if over:
            ctx.hints.forget(code, session.player)
        else:
            ctx.hints.schedule(code, session.player, outcome.game.position)
    if over:
        watch = ctx.hub.watches.get(code)
        if watch is not None:
            watch.set_status(session.player, outcome.game.status)
        ctx.spawner.spawn(ctx.transitions.advance(code))


class _Read(NamedTuple):
    """What one try of an action is decided on."""

    race: Race
    game: Game
    board: Board | None
    """The board as the connection's last action left it (None: built from the game)."""
    undo_base: UndoBase | None
    actions: list[str]
    """An undo whose mark was not found: every action so far (replayed)."""
    ack: Ack | None
    """A resent action: the ack it had (nothing is decided then)."""


class _Action:
    """One action of a player: its tries' load, decision and commit."""

    __slots__ = ("advanced", "before", "code", "kind", "move", "race", "seq", "session")

    def __init__(
        self, session: Session, code: str, kind: rules.ActionKind, seq: int | None, move: str
    ) -> None:
        self.session = session
        self.code = code
        self.kind = kind
        self.seq = seq
        self.move = move
        self.race: Race | None = None
        """The race as last read."""
        self.advanced = False
        """The commit found the race no longer running and made its transition."""
        self.before: Game | None = None
        """The game the last decision was made on (the commit writes what changed)."""

    async def load(self) -> _Read:
        """The race, game and board the connection's last committed action left, when this
        is the next move (no read from Redis: the commit's check-and-set on seq, and on
        the race running, catches any change made elsewhere); else read afresh."""
        session, code = self.session, self.code
        known = session.known.pop(code, None)
        race: Race | None
        game: Game | None
        board: Board | None = None
        if known is not None and self.kind == "move" and self.seq == known[1].seq + 1:
            race, game, board = known
        else:
            race, game = await session.ctx.store.races.load_for_action(code, session.player)
        self.race = race
        if race is None:
            raise RaceNotFound(f"no race {code}")
        if session.player not in race.players:
            raise NotAPlayer(f"you are not a player of race {code}")
        if game is None:
            raise WrongState(f"race {code} is {race.state.value}")
        races = session.ctx.store.races
        if self.seq is not None and self.seq <= game.seq:
            ack = await races.load_ack(code, session.player, self.seq)
            if ack is None:
                raise OutOfOrder(f"action {self.seq} is not known")
            ack.duplicate = True
            return _Read(race, game, board, None, [], ack)
        undo_base = None
        actions: list[str] = []
        if self.kind == "undo" and race.options.undo:
            undo_base = await races.load_undo(code, session.player)
            if undo_base is None:  # its mark not found: replay every action
                actions = await races.load_actions(code, session.player)
        return _Read(race, game, board, undo_base, actions, None)

    def decide(self, read: _Read) -> rules.ActionOutcome | None:
        """The action's outcome (None: a resent action, or a leave once the game is over)."""
        if read.ack is not None:
            return None
        game = self.before = read.game
        if self.seq is None:  # leave: the next action, whatever it is
            if game.status in TERMINAL:
                return None
        elif self.seq != game.seq + 1:
            raise OutOfOrder(f"seq {self.seq}: the next action is {game.seq + 1}")
        ctx = self.session.ctx
        return rules.apply_action(
            read.race,
            game,
            self.kind,
            move=self.move,
            actions=read.actions,
            now=ctx.clock(),
            board=read.board,
            undo_base=read.undo_base,
            max_actions=ctx.settings.max_actions,
        )

    async def commit(self, outcome: rules.ActionOutcome) -> Committed:
        """Commit the outcome (Conflict: the seq moved on; WrongState: the race is no longer
        running, GameOver once it is finished)."""
        ctx = self.session.ctx
        race = self.race
        assert race is not None
        try:
            return await ctx.store.commits.commit_action(race, outcome, self.before)
        except WrongState:
            self.advanced = True
            now = await ctx.transitions.advance(self.code)
            if now is not None and now.state is RaceState.FINISHED:
                raise GameOver("the race is over") from None
            raise


def deal_out(session: Session, code: str) -> None:
    """Send this player their view of the deal (an ``ack`` with seq 0) once it is out;
    in a race with hints, then start the prefetch of the deal's hint."""

    async def send_deal() -> None:
        game = await session.ctx.store.races.load_game(code, session.player)
        if game is None or game.seq != 0 or code not in session.subs:
            return
        session.send_msg(
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
        hints = session.ctx.hints
        if hints is not None:  # the deal's hint, searched while the player looks at it
            race = await session.ctx.store.races.load_race(code)
            if race is not None and race.options.hints:
                hints.schedule(code, session.player, game.position)

    session.ctx.spawner.spawn(send_deal())
