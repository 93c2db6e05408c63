"""What the four games of alt-decks.md share (§0): the whole tableau dealt face up unless
the option ``blind``, the stock dealing while columns are empty, no ``suited`` score.

Their sets completed (rules.md §7a) are :meth:`Variant.sets_completed`'s default, the
foundation's tokens: one per set that has left (a Myrmex group, a Sparrow set, a run, or
each single trump of Wizard's Tower)."""

from __future__ import annotations

from typing import ClassVar

from ..variants import Variant

__all__ = ["AltDeckVariant"]


class AltDeckVariant(Variant):
    """Base of the alternative-deck Spiders. Subclasses list the deck in canonical order as
    tokens (``deck_tokens``); with the option ``blind`` the tableau is dealt like Spider's,
    only each column's last card face up."""

    options_allowed = frozenset({"blind"})
    dealt_face_up = True
    deals_while_empty = True
    suited_score = False
    solver_patience = 200
    """Dealt face up, these games have wide plateaus of positions that look alike to the
    solver's evaluation, where a narrow beam would wander without end."""
    deck_tokens: ClassVar[tuple[str, ...]]
    """The whole deck in canonical order, copies included, as card tokens."""

    def _tableau_face_up(self) -> bool:
        return "blind" not in self.options

    def columns_alike(self) -> bool:
        """True of all four games: their own rules (sets taken off, the Tower, the Jokers,
        the reserve) name no column by its place."""
        return True

    def canonical_deck(self) -> list[int]:
        return [self.cards.card(token) for token in self.deck_tokens]
