"""The Spiders of other decks (alt-decks.md): one module per game, each a variant made of
rules hooks and a deck. Importing this package registers them (``spider_engine`` does)."""

from __future__ import annotations

from .base import AltDeckVariant
from .myrmex import Myrmex
from .sparrow import Sparrow
from .starfish import Starfish
from .wizard import WizardsTower

__all__ = ["AltDeckVariant", "Myrmex", "Sparrow", "Starfish", "WizardsTower"]
