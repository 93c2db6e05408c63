"""spider_engine: the rules of Spider solitaire as the spec writes them.

Pure Python, no I/O, no third-party dependency::

    >>> from spider_engine import Board, Move
    >>> board = Board.deal("spider4", "1")
    >>> board.push(Move.from_text("d1j"))
    >>> board.legal_moves.texts()[:3]
    ['+', 'b1j', 'e1j']

Besides Spider (``spider1``, ``spider2``, ``spider4``, ``spiderette``) it plays the Spiders
of other decks, each a variant module in :mod:`spider_engine.decks` (see ``variant_ids()``).
"""

from __future__ import annotations

from . import decks  # registers the Spiders of other decks (alt-decks.md)
from .board import Board, LegalMoves, format_position, parse_position
from .cards import UNKNOWN, CardSet, standard_cards
from .deal import shuffle
from .errors import (
    AmbiguousMoveError,
    EngineError,
    FitError,
    HiddenCardError,
    IllegalMoveError,
    InvalidMoveError,
    NotationError,
    PositionError,
    UnsettledError,
    VariantError,
)
from .moves import Move
from .position import Position
from .variants import SpiderFamily, Variant, find_variant, register_variant, variant_ids

__all__ = [
    "UNKNOWN",
    "AmbiguousMoveError",
    "Board",
    "CardSet",
    "EngineError",
    "FitError",
    "HiddenCardError",
    "IllegalMoveError",
    "InvalidMoveError",
    "LegalMoves",
    "Move",
    "NotationError",
    "Position",
    "PositionError",
    "SpiderFamily",
    "UnsettledError",
    "Variant",
    "VariantError",
    "decks",
    "find_variant",
    "format_position",
    "parse_position",
    "register_variant",
    "shuffle",
    "standard_cards",
    "variant_ids",
]
