"""A player's counts and status read from their engine position."""

from __future__ import annotations

from spider_engine import Board

from .model import Status
from .options import RaceOptions

__all__ = ["runs_completed", "status_after"]


def runs_completed(board: Board) -> int:
    """Runs completed: those in the foundation, and with ``keep`` the complete runs at
    column ends (as the classic score counts them)."""
    runs = len(board.foundation)
    complete = getattr(board.variant, "complete_runs_at_ends", None)
    if board.variant.keep and complete is not None:
        runs += int(complete(board))
    return runs


def status_after(board: Board, options: RaceOptions, status: str) -> str:
    """``won`` when the board is won, ``stuck`` when it offers no move in a race without
    undo, else ``status``."""
    if board.is_won():
        return Status.WON
    if not options.undo and board.is_stuck():
        return Status.STUCK
    return status
