"""What the four games of alt-decks.md share (§0): the whole tableau dealt face up unless
the option ``blind``, the stock dealing while columns are empty, no ``suited`` score."""

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
    deck_tokens: ClassVar[tuple[str, ...]]
    """The whole deck in canonical order, copies included, as card tokens."""

    def _tableau_face_up(self) -> bool:
        return "blind" not in self.options

    def canonical_deck(self) -> list[int]:
        return [self.cards.card(token) for token in self.deck_tokens]
