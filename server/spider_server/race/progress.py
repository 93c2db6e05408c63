"""A player's counts and status read from their engine position."""

from __future__ import annotations

from spider_engine import Board

from .model import Status
from .options import RaceOptions

__all__ = ["progress_of", "runs_completed", "status_after", "undo_only"]


def runs_completed(board: Board) -> int:
    """Sets completed (rules.md §7a): runs in the foundation for the Spider family (with
    ``keep``, the complete runs at column ends too, as the classic score counts them); each
    deck's sets for the others."""
    return board.variant.sets_completed(board)


def progress_of(board: Board, down0: int) -> tuple[int, int, int]:
    """The position's progress (rules.md §7a), compared larger first: sets completed, cards
    turned up of the ``down0`` dealt face down, suited score."""
    return board.variant.progress(board, down0)


def undo_only(board: Board, options: RaceOptions) -> bool:
    """Whether the position offers no move and no deal, only undo, in a race with undo
    (rules.md §7a: once it has stayed so for the race's ``away_grace``, the game is
    stuck)."""
    return options.undo and board.is_stuck()


def status_after(board: Board, options: RaceOptions, status: str) -> str:
    """``won`` when the board is won, ``stuck`` when it offers no move in a race without
    undo (with undo, see :func:`undo_only`), else ``status``."""
    if board.is_won():
        return Status.WON
    if not options.undo and board.is_stuck():
        return Status.STUCK
    return status
