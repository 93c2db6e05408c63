"""The engine's errors.

Every error the engine raises is a :class:`ValueError`, so that code reading text from
users can catch one type. The tree::

    EngineError(ValueError)
    ├── NotationError            text that is not in the spec's notation
    │   ├── VariantError         unknown or malformed variant id
    │   ├── InvalidMoveError     malformed move text
    │   └── PositionError        a position that cannot be taken as it is
    │       ├── FitError         does not fit its variant (columns, cards, stock size)
    │       └── UnsettledError   not settled (rules.md §3 rule 7)
    ├── IllegalMoveError         well-formed, but not legal in this position
    │   └── HiddenCardError      would turn up or deal a card the view does not know
    └── AmbiguousMoveError       text that names more than one legal move
"""

from __future__ import annotations

__all__ = [
    "AmbiguousMoveError",
    "EngineError",
    "FitError",
    "HiddenCardError",
    "IllegalMoveError",
    "InvalidMoveError",
    "NotationError",
    "PositionError",
    "UnsettledError",
    "VariantError",
]


class EngineError(ValueError):
    """Root of every error the engine raises."""


class NotationError(EngineError):
    """Text that is not in the notation of the spec."""


class VariantError(NotationError):
    """An unknown base, an option not listed for its base, or options out of order."""


class InvalidMoveError(NotationError):
    """Move text that is not a move in the spec's notation."""


class PositionError(NotationError):
    """A position that cannot be taken as it is written."""


class FitError(PositionError):
    """A position that does not fit its variant (rules.md §6)."""


class UnsettledError(PositionError):
    """A position in which a rule that acts at once has not acted (rules.md §3 rule 7)."""


class IllegalMoveError(EngineError):
    """A well-formed move that is not legal in the position."""


class HiddenCardError(IllegalMoveError):
    """A move on a view that would turn up or deal a card the view does not know."""


class AmbiguousMoveError(EngineError):
    """Text that names more than one legal move."""
