"""A player's actions in a running race: moves, undos, resigns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from spider_client.protocol import Ack, Progress, encode
from spider_client.protocol import BoardShown as BoardEvent
from spider_engine import Board, IllegalMoveError, InvalidMoveError, Move

from ..errors import (
    GameOver,
    IllegalMove,
    MalformedMove,
    TooManyActions,
    UndoNotAllowed,
    WrongState,
)
from .model import (
    ALL,
    SPECTATORS,
    TERMINAL,
    ActionKind,
    ActionOutcome,
    Audience,
    Game,
    Race,
    RaceChange,
    RaceState,
    Status,
    entry_of,
    event_data,
)
from .progress import progress_of, status_after, undo_only

__all__ = ["UndoBase", "apply_action", "count_hint", "effective_moves", "rebuild", "replay"]


@dataclass(frozen=True)
class UndoBase:
    """What an undo rebuilds the position before a player's last standing move from,
    without replaying their game: the number of moves that stand (``depth``), the full
    position at a mark at or below ``depth - 1`` (None: the deal) and the standing moves
    from that mark up to the one before the last. The store keeps a mark every few moves,
    so ``moves`` is short whatever the game's length."""

    depth: int
    mark: str | None
    moves: Sequence[str]


def rebuild(variant: str, seed: str, base: UndoBase) -> Board:
    """The position before the last standing move: the mark's position (or the deal)
    with ``base.moves`` pushed (each with the engine's checks)."""
    board = Board.deal(variant, seed) if base.mark is None else Board.from_text(base.mark)
    for text in base.moves:
        board.push(Move.from_text(text))
    return board


def effective_moves(actions: Sequence[str]) -> list[str]:
    """The moves that stand after the undos in ``actions`` (``resign`` ends nothing here)."""
    stack: list[str] = []
    for action in actions:
        if action == "undo":
            if stack:
                stack.pop()
        elif action != "resign":
            stack.append(action)
    return stack


def replay(variant: str, seed: str, actions: Sequence[str]) -> Board:
    """The board after ``actions`` from the seeded deal, with its undo stack (each move
    pushed with the engine's checks; ``undo`` is the engine's pop)."""
    board = Board.deal(variant, seed)
    for action in actions:
        if action == "undo":
            board.pop()
        elif action != "resign":
            board.push(Move.from_text(action))
    return board


def apply_action(
    race: Race,
    game: Game,
    kind: ActionKind,
    *,
    move: str = "",
    actions: Sequence[str] = (),
    now: float,
    board: Board | None = None,
    undo_base: UndoBase | None = None,
    max_actions: int | None = None,
) -> ActionOutcome:
    """Apply a player's next action (number ``game.seq + 1``) with the engine.

    ``kind`` is ``move`` (a move or ``+`` in ``move``), ``undo`` (``actions`` must be the
    player's actions so far), ``resign``, or ``leave`` (a resign that marks the player
    ``left``). Raises GameOver when the race or the player's game is over or the time is
    up, WrongState before the start, MalformedMove, IllegalMove, UndoNotAllowed; nothing
    changes then. An action proves the player present: their entry is no longer away
    (the spell's seconds are added to their ``away_total``). A move or undo puts the
    player's idle deadline (``idle_at``) at ``now`` plus the race's ``idle_limit``.
    A position that offers only undo keeps the time it first did (``undo_only_since``).
    The new game's progress (rules.md §7a: sets completed, cards turned up,
    suited score) is the position's; ``raised_at`` becomes the action's race time when the
    action raised it (compared as a tuple), and stays otherwise. ``board``, when given, is ``game.position`` already parsed (a ``move``
    is pushed onto it, so it must not be used again unless the action is committed); the
    outcome's ``board`` is the position after the action.

    An undo rebuilds the position from ``undo_base`` when given (:func:`rebuild`: a few
    moves from the nearest mark), else by replaying ``actions``. With ``max_actions``, a
    move or undo past that many actions is TooManyActions (a resign is always taken).
    """
    if race.state is RaceState.FINISHED:
        raise GameOver(f"race {race.code} is over")
    if race.state is not RaceState.RUNNING:
        raise WrongState(f"race {race.code} is {race.state.value}")
    if game.status in TERMINAL:
        raise GameOver(f"your game is over ({game.status})")
    if race.ends_at is not None and now >= race.ends_at:
        raise GameOver("the time limit is reached")
    options = race.options
    status = Status.PLAYING
    if max_actions is not None and kind in ("move", "undo") and game.seq >= max_actions:
        raise TooManyActions(f"a game has at most {max_actions} actions; resign to end it")
    if kind == "move":
        try:
            parsed = Move.from_text(move)
        except InvalidMoveError as e:
            raise MalformedMove(str(e)) from None
        if board is None:
            board = Board.from_text(game.position)
        try:
            board.push(parsed)
        except IllegalMoveError as e:
            raise IllegalMove(str(e)) from None
        action = parsed.text()
        moves = game.moves + 1
    elif kind == "undo":
        if not options.undo:
            raise UndoNotAllowed("this race does not allow undo")
        if undo_base is not None:
            if undo_base.depth <= 0:
                raise UndoNotAllowed("there is nothing to undo")
            board = rebuild(options.variant, race.seed, undo_base)
        else:
            stack = effective_moves(actions)
            if not stack:
                raise UndoNotAllowed("there is nothing to undo")
            board = replay(options.variant, race.seed, stack)
            board.pop()
        action = "undo"
        moves = game.moves + 1
    else:
        board = Board.from_text(game.position)
        action = "resign"
        moves = game.moves
        status = Status.LEFT if kind == "leave" else Status.RESIGNED
    if status == Status.PLAYING:
        status = status_after(board, options, status)
    seq = game.seq + 1
    elapsed = round(now - (race.started_at or now), 3)
    position, view = board.texts()
    progress = progress_of(board, game.down0)
    runs, turned_up, suited = progress
    new = Game(
        player=game.player,
        seq=seq,
        position=position,
        status=status,
        moves=moves,
        turned_up=turned_up,
        runs=runs,
        deals_left=board.deals_left(),
        score=board.classic_score(moves),
        time=elapsed if status in TERMINAL else None,
        down0=game.down0,
        suited=suited,
        raised_at=elapsed if progress > game.progress else game.raised_at,
    )
    if status == Status.PLAYING and undo_only(board, options):
        new.undo_only_since = game.undo_only_since if game.undo_only_since else round(now, 3)
    before = race.players[game.player]
    entry = entry_of(before, new)
    if before.away_since is not None:  # a new entry: the action proves the player present
        entry.away_total = round(before.away_total + max(0.0, now - before.away_since), 3)
        entry.away_since = None
    if status == Status.PLAYING:
        entry.idle_at = round(now + options.idle_limit, 3)
    ack = Ack(
        code=race.code,
        seq=seq,
        move=action,
        view=view,
        status=status,
        moves=moves,
        score=new.score,
        turned_up=new.turned_up,
        runs=new.runs,
        deals_left=new.deals_left,
        time=new.time,
    )
    events: list[tuple[Audience, object]] = [
        (ALL, Progress(race=race.code, version=0, player=entry.info()))
    ]
    if options.live_boards:
        events.append(
            (SPECTATORS, BoardEvent(race=race.code, version=0, player=game.player, view=ack.view))
        )
    return ActionOutcome(
        game=new,
        entry=entry,
        action=action,
        ack=ack,
        events=events,
        board=board,
        stored_events=[(audience, event_data(event)) for audience, event in events],
        ack_frame=encode(ack),
        time_ms=max(0, round((now - (race.started_at or now)) * 1000)),
    )


def count_hint(race: Race, player: str, count: int) -> RaceChange | None:
    """The change that shows everyone a player's hints asked for (``count``, as counted
    apart from the race), or None unless the race runs with that player in it."""
    entry = race.players.get(player)
    if entry is None or race.state is not RaceState.RUNNING:
        return None
    entry = replace(entry, hints=max(count, entry.hints))
    return RaceChange(
        base=race.version,
        race=race,
        meta=False,
        players=[entry],
        events=[(ALL, Progress(race=race.code, version=0, player=entry.info()))],
    )
