"""Cards as small ints, and the card sets that variants are made of.

A variant's cards are numbered ``1..N`` in the canonical order of its distinct cards; ``0``
is the unknown card (``??``). Hot code keeps cards as these ints and looks their properties
up in the card set's tuples.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .errors import NotationError

__all__ = ["UNKNOWN", "CardSet", "standard_cards", "tokenize", "format_cards"]

UNKNOWN = 0
"""The card a reader may not know: written ``??``, or ``*N`` for a stretch of N."""

_TOKEN = re.compile(r"\?\?|\*[0-9]+|@|(?:[A-Z]|[0-9]+)[a-z]+")

STANDARD_RANKS = "A23456789TJQK"


@dataclass(frozen=True)
class CardSet:
    """The distinct cards of a variant, with their ranks and suits.

    ``tokens[c]`` is card ``c``'s text (``tokens[0] == "??"``), ``rank[c]`` its rank value
    (0 for the unknown card) and ``suits[c]`` its suit letters.
    """

    tokens: tuple[str, ...]
    rank: tuple[int, ...]
    suits: tuple[str, ...]
    index: dict[str, int] = field(init=False, repr=False, compare=False)
    memo: dict[tuple[int, ...], tuple[str, str]] = field(init=False, repr=False, compare=False)
    """Texts of columns and stocks formatted lately (see :mod:`.notation`)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {t: c for c, t in enumerate(self.tokens) if c})
        object.__setattr__(self, "memo", {})

    @classmethod
    def build(cls, cards: Iterable[tuple[str, int, str]]) -> CardSet:
        """Build a card set from ``(token, rank, suits)`` triples in canonical order."""
        tokens, ranks, suits = ["??"], [0], [""]
        for token, rank, suit in cards:
            tokens.append(token)
            ranks.append(rank)
            suits.append(suit)
        return cls(tuple(tokens), tuple(ranks), tuple(suits))

    def __len__(self) -> int:
        return len(self.tokens) - 1

    def card(self, token: str) -> int:
        """The card written ``token``; :class:`NotationError` if this set has no such card."""
        try:
            return self.index[token]
        except KeyError:
            raise NotationError(f"no card {token!r} in this variant's deck") from None

    def parse(self, text: str, *, what: str = "cards") -> list[int]:
        """Parse a run of card tokens (``??`` and ``*N`` give unknown cards)."""
        cards: list[int] = []
        pos = 0
        for m in _TOKEN.finditer(text):
            if m.start() != pos:
                break
            token = m.group()
            pos = m.end()
            if token == "??":
                cards.append(UNKNOWN)
            elif token[0] == "*":
                count = int(token[1:])
                if count < 1:
                    raise NotationError(f"empty stretch of unknown cards {token!r} in {what}")
                cards.extend([UNKNOWN] * count)
            else:
                cards.append(self.card(token))
        if pos != len(text):
            raise NotationError(f"malformed {what} {text!r} at character {pos + 1}")
        return cards

    def format(self, cards: Sequence[int]) -> str:
        """Format cards, each maximal stretch of unknown ones as ``*N``."""
        return format_cards(self.tokens, cards)


def format_cards(tokens: Sequence[str], cards: Sequence[int]) -> str:
    if UNKNOWN not in cards:
        return "".join([tokens[c] for c in cards])
    out: list[str] = []
    unknown = 0
    for c in cards:
        if c == UNKNOWN:
            unknown += 1
            continue
        if unknown:
            out.append(f"*{unknown}")
            unknown = 0
        out.append(tokens[c])
    if unknown:
        out.append(f"*{unknown}")
    return "".join(out)


def tokenize(text: str) -> list[str]:
    """Split text into card tokens without looking them up (for messages and tools)."""
    return _TOKEN.findall(text)


def standard_cards(suits: str, ranks: str = STANDARD_RANKS) -> CardSet:
    """The standard cards of ``suits`` (one letter each), ranks Ace low to King."""
    return CardSet.build(
        (f"{r}{s}", value, s) for s in suits for value, r in enumerate(ranks, start=1)
    )
