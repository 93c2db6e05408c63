"""A player's actions in a running race: moves, undos, resigns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from spider_client.protocol import Ack, Progress, encode
from spider_client.protocol import BoardShown as BoardEvent
from spider_engine import Board, IllegalMoveError, InvalidMoveError, Move

from ..errors import GameOver, IllegalMove, MalformedMove, UndoNotAllowed, WrongState
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
from .progress import progress_of, status_after

__all__ = ["apply_action", "count_hint", "effective_moves", "replay"]


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
) -> ActionOutcome:
    """Apply a player's next action (number ``game.seq + 1``) with the engine.

    ``kind`` is ``move`` (a move or ``+`` in ``move``), ``undo`` (``actions`` must be the
    player's actions so far), ``resign``, or ``leave`` (a resign that marks the player
    ``left``). Raises GameOver when the race or the player's game is over or the time is
    up, WrongState before the start, MalformedMove, IllegalMove, UndoNotAllowed; nothing
    changes then. The new game's progress (rules.md §7a: sets completed, cards turned up,
    suited score) is the position's; ``raised_at`` becomes the action's race time when the
    action raised it (compared as a tuple), and stays otherwise. ``board``, when given, is ``game.position`` already parsed (a ``move``
    is pushed onto it, so it must not be used again unless the action is committed); the
    outcome's ``board`` is the position after the action.
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
    entry = entry_of(race.players[game.player], new)
    ack = Ack(
        code=race.code,
        seq=seq,
        move=action,
        view=view,
        status=status,
        moves=moves,
        score=new.score,
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
