"""A deliberately simple reference implementation of shared/spec/rules.md (Spider family).

Written from the spec alone, for differential tests against the fast engine. It favours
obviousness over speed: a position is plain lists of card strings such as ``"Ks"``, and an
unknown card (in a player's view) is the string ``"??"``. Nothing is cached, nothing is
mutated in place: every function that changes a position returns a new one.

Covered: the bases ``spider1``, ``spider2``, ``spider4`` and ``spiderette`` with the options
``open`` and ``relaxed`` (not ``keep``); the seeded deal of §4; the position notation of §6
(full positions and views); legal moves (§3 rules 1, 2 and 5); applying a move or a deal and
settling (rules 3 and 4); the player's view; the ``suited`` score of §7.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

__all__ = [
    "RANKS",
    "UNKNOWN",
    "Position",
    "Variant",
    "all_cards",
    "apply_move",
    "deal",
    "format_position",
    "greedy_choice",
    "is_stuck",
    "is_won",
    "legal_moves",
    "parse_position",
    "parse_variant",
    "suited_score",
    "view",
]

RANKS = "A23456789TJQK"
UNKNOWN = "??"
DEAL = "+"


# --------------------------------------------------------------------------- variants (§2)

# base: (copies of the suit set, suits in canonical order, first deal per column)
BASES: dict[str, tuple[int, str, tuple[int, ...]]] = {
    "spider1": (8, "s", (6, 6, 6, 6, 5, 5, 5, 5, 5, 5)),
    "spider2": (4, "sh", (6, 6, 6, 6, 5, 5, 5, 5, 5, 5)),
    "spider4": (2, "shdc", (6, 6, 6, 6, 5, 5, 5, 5, 5, 5)),
    "spiderette": (1, "shdc", (1, 2, 3, 4, 5, 6, 7)),
}

# ``keep`` is a legal option in the spec (alt-decks.md §5) but this reference does not
# implement it, so it refuses it rather than silently ignoring it.
SUPPORTED_OPTIONS = ["open", "relaxed"]


@dataclass(frozen=True)
class Variant:
    id: str
    base: str
    copies: int
    suits: str
    first_deal: tuple[int, ...]
    open: bool
    relaxed: bool

    @property
    def columns(self) -> int:
        return len(self.first_deal)

    def deck(self) -> list[str]:
        """The canonical deck of §4 step 1: per copy, per suit in canonical order, A..K."""
        cards: list[str] = []
        for _copy in range(self.copies):
            for suit in self.suits:
                for rank in RANKS:
                    cards.append(rank + suit)
        return cards


def parse_variant(variant_id: str) -> Variant:
    parts = variant_id.split("+")
    base = parts[0]
    options = parts[1:]
    if base not in BASES:
        raise ValueError(f"unknown variant base {base!r}")
    for option in options:
        if option not in SUPPORTED_OPTIONS:
            raise ValueError(f"unknown or unsupported option {option!r}")
    if options != sorted(options) or len(set(options)) != len(options):
        raise ValueError(f"options out of order or repeated in {variant_id!r}")
    copies, suits, first_deal = BASES[base]
    return Variant(
        id=variant_id,
        base=base,
        copies=copies,
        suits=suits,
        first_deal=first_deal,
        open="open" in options,
        relaxed="relaxed" in options,
    )


# --------------------------------------------------------------------------- positions


@dataclass(frozen=True)
class Position:
    """A position: per column its face-down cards (deepest first) and face-up cards
    (deepest first, the last one is the column's end), the stock in dealing order, and
    the suit letter of every run that has left, in order."""

    variant: Variant
    down: tuple[tuple[str, ...], ...]
    up: tuple[tuple[str, ...], ...]
    stock: tuple[str, ...]
    foundation: str


def rank_value(card: str) -> int:
    return RANKS.index(card[0]) + 1


def suit_of(card: str) -> str:
    return card[1]


# --------------------------------------------------------------------------- seeded deal (§4)


def random_word(seed: str, k: int) -> int:
    data = b"spider-race/deal/v1\x00" + seed.encode("utf-8") + b"\x00" + k.to_bytes(8, "big")
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


class WordStream:
    """The words w_0, w_1, ... of a seed, each used once, in order."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.k = 0

    def next_word(self) -> int:
        word = random_word(self.seed, self.k)
        self.k += 1
        return word

    def uniform(self, n: int) -> int:
        limit = 2**64 - (2**64 % n)
        while True:
            word = self.next_word()
            if word < limit:
                return word % n


def shuffled_deck(variant: Variant, seed: str) -> list[str]:
    deck = variant.deck()
    words = WordStream(seed)
    for i in range(len(deck) - 1, 0, -1):
        j = words.uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


def deal(variant_id: str, seed: str) -> Position:
    """The dealt position of §4 (already settled: nothing can act on a fresh deal)."""
    variant = parse_variant(variant_id)
    deck = shuffled_deck(variant, seed)
    columns: list[list[str]] = [[] for _ in range(variant.columns)]
    index = 0
    for row in range(max(variant.first_deal)):
        for column_index, wanted in enumerate(variant.first_deal):
            if row < wanted:
                columns[column_index].append(deck[index])
                index += 1
    stock = deck[index:]
    down: list[tuple[str, ...]] = []
    up: list[tuple[str, ...]] = []
    for cards in columns:
        if variant.open:
            down.append(())
            up.append(tuple(cards))
        else:
            down.append(tuple(cards[:-1]))
            up.append(tuple(cards[-1:]))
    return Position(variant, tuple(down), tuple(up), tuple(stock), "")


# --------------------------------------------------------------------------- notation (§6)


def parse_cards(text: str, variant: Variant) -> list[str]:
    """Cards written one after another: ``Ks``, ``??`` or ``*N`` (N unknown cards)."""
    cards: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "*":
            j = i + 1
            while j < len(text) and text[j].isdigit():
                j += 1
            digits = text[i + 1 : j]
            if not digits or not digits.isascii() or int(digits) < 1:
                raise ValueError(f"bad unknown-card count in {text!r}")
            cards.extend([UNKNOWN] * int(digits))
            i = j
            continue
        card = text[i : i + 2]
        if card == UNKNOWN:
            cards.append(UNKNOWN)
        elif len(card) == 2 and card[0] in RANKS and card[1] in variant.suits:
            cards.append(card)
        else:
            raise ValueError(f"bad card {card!r} in {text!r}")
        i += 2
    return cards


def format_cards(cards: list[str] | tuple[str, ...]) -> str:
    """Known cards as themselves, each maximal stretch of unknown cards as ``*N``."""
    out: list[str] = []
    unknown_run = 0
    for card in cards:
        if card == UNKNOWN:
            unknown_run += 1
            continue
        if unknown_run:
            out.append(f"*{unknown_run}")
            unknown_run = 0
        out.append(card)
    if unknown_run:
        out.append(f"*{unknown_run}")
    return "".join(out)


def ends_in_complete_run(up: tuple[str, ...] | list[str]) -> bool:
    """True when the last thirteen cards are face up and K..A of one suit (rule 4)."""
    if len(up) < 13:
        return False
    last = up[-13:]
    if UNKNOWN in last:
        return False
    suit = suit_of(last[0])
    for offset, card in enumerate(last):
        if suit_of(card) != suit or rank_value(card) != 13 - offset:
            return False
    return True


def parse_position(text: str) -> Position:
    fields = text.split(" ")
    if len(fields) != 4:
        raise ValueError(f"a position has 4 fields, not {len(fields)}: {text!r}")
    variant_id, tableau_text, stock_text, foundation_text = fields
    variant = parse_variant(variant_id)
    column_texts = tableau_text.split("/")
    if len(column_texts) != variant.columns:
        raise ValueError(f"{variant.id} has {variant.columns} columns, not {len(column_texts)}")
    down = []
    up = []
    for column_text in column_texts:
        if column_text.count("|") != 1:
            raise ValueError(f"a column has exactly one '|': {column_text!r}")
        down_text, up_text = column_text.split("|")
        down_cards = parse_cards(down_text, variant)
        up_cards = parse_cards(up_text, variant)
        if UNKNOWN in up_cards:
            raise ValueError(f"a face-up card must be known: {column_text!r}")
        if down_cards and not up_cards:
            raise ValueError(f"not settled, a face-down card at a column's end: {column_text!r}")
        if ends_in_complete_run(up_cards):
            raise ValueError(f"not settled, a complete run at a column's end: {column_text!r}")
        down.append(tuple(down_cards))
        up.append(tuple(up_cards))
    if stock_text == "-":
        stock: list[str] = []
    else:
        stock = parse_cards(stock_text, variant)
        if not stock:
            raise ValueError("an empty stock is written '-'")
    if foundation_text == "-":
        foundation = ""
    else:
        foundation = foundation_text
        for suit in foundation:
            if suit not in variant.suits:
                raise ValueError(f"bad foundation suit {suit!r}")
    return Position(variant, tuple(down), tuple(up), tuple(stock), foundation)


def format_position(position: Position) -> str:
    columns = []
    for down, up in zip(position.down, position.up, strict=True):
        columns.append(format_cards(down) + "|" + format_cards(up))
    stock = format_cards(position.stock) if position.stock else "-"
    foundation = position.foundation or "-"
    return f"{position.variant.id} {'/'.join(columns)} {stock} {foundation}"


# --------------------------------------------------------------------------- views (§6)


def view(position: Position) -> Position:
    """The player's view: every face-down card and every stock card unknown."""
    return Position(
        position.variant,
        tuple(tuple(UNKNOWN for _ in down) for down in position.down),
        position.up,
        tuple(UNKNOWN for _ in position.stock),
        position.foundation,
    )


# --------------------------------------------------------------------------- rules (§3)


def movable_run_length(up: tuple[str, ...]) -> int:
    """Length of the longest run at the end of the face-up cards (0 for an empty column)."""
    if not up:
        return 0
    length = 1
    while length < len(up):
        lower = up[-length]
        higher = up[-length - 1]
        if suit_of(higher) != suit_of(lower) or rank_value(higher) != rank_value(lower) + 1:
            break
        length += 1
    return length


def column_letter(index: int) -> str:
    return "abcdefghijklmnopqrstuvwxyz"[index]


def can_deal(position: Position) -> bool:
    if not position.stock:
        return False
    if position.variant.relaxed:
        return True
    return all(down or up for down, up in zip(position.down, position.up, strict=True))


def legal_moves(position: Position) -> list[str]:
    """Every legal move's text, sorted as Python strings (§5)."""
    moves: list[str] = []
    if can_deal(position):
        moves.append(DEAL)
    n = position.variant.columns
    for source in range(n):
        up = position.up[source]
        column_size = len(position.down[source]) + len(up)
        run = movable_run_length(up)
        for count in range(1, run + 1):
            highest = up[-count]
            for target in range(n):
                if target == source:
                    continue
                target_up = position.up[target]
                target_empty = not target_up and not position.down[target]
                if target_empty:
                    if count == column_size:
                        continue  # rule 2: no empty-to-empty
                    moves.append(f"{column_letter(source)}{count}{column_letter(target)}")
                elif rank_value(target_up[-1]) == rank_value(highest) + 1:
                    moves.append(f"{column_letter(source)}{count}{column_letter(target)}")
    return sorted(moves)


def settle(down: list[list[str]], up: list[list[str]], foundation: str) -> str:
    """Apply rules 3 and 4 to every column, left to right, until none acts.

    Changes ``down`` and ``up`` (fresh lists owned by the caller) and returns the new
    foundation. Raises ValueError when a card to turn up is unknown (a view)."""
    changed = True
    while changed:
        changed = False
        for index in range(len(up)):
            if ends_in_complete_run(up[index]):
                suit = suit_of(up[index][-1])
                up[index] = up[index][:-13]
                foundation += suit
                changed = True
            if not up[index] and down[index]:
                card = down[index].pop()
                if card == UNKNOWN:
                    raise ValueError(
                        "the move turns up an unknown card (only a full position can go on)"
                    )
                up[index].append(card)
                changed = True
    return foundation


def parse_move(text: str, columns: int) -> tuple[int, int, int]:
    letters = "abcdefghijklmnopqrstuvwxyz"[:columns]
    if len(text) < 3 or text[0] not in letters or text[-1] not in letters:
        raise ValueError(f"malformed move {text!r}")
    digits = text[1:-1]
    if not digits.isascii() or not digits.isdigit() or digits.startswith("0"):
        raise ValueError(f"malformed move {text!r}")
    return letters.index(text[0]), int(digits), letters.index(text[-1])


def apply_move(position: Position, move: str) -> Position:
    """The settled position after a legal move or deal; ValueError when illegal."""
    if move not in legal_moves(position):
        raise ValueError(f"illegal move {move!r}")
    down = [list(cards) for cards in position.down]
    up = [list(cards) for cards in position.up]
    stock = list(position.stock)
    if move == DEAL:
        # One card face up on each column, left to right, while the stock has cards: the
        # last Spiderette deal of 3 cards thereby goes to columns a-c only.
        for index in range(len(up)):
            if not stock:
                break
            card = stock.pop(0)
            if card == UNKNOWN:
                raise ValueError(
                    "the deal would deal an unknown card (only a full position can go on)"
                )
            up[index].append(card)
    else:
        source, count, target = parse_move(move, position.variant.columns)
        tail = up[source][-count:]
        up[source] = up[source][:-count]
        up[target] = up[target] + tail
    foundation = settle(down, up, position.foundation)
    return Position(
        position.variant,
        tuple(tuple(cards) for cards in down),
        tuple(tuple(cards) for cards in up),
        tuple(stock),
        foundation,
    )


def is_won(position: Position) -> bool:
    return not position.stock and not any(position.down) and not any(position.up)


def is_stuck(position: Position) -> bool:
    return not is_won(position) and not legal_moves(position)


# --------------------------------------------------------------------------- scores (§7)


def suited_score(position: Position) -> int:
    """1 per face-up card lying on a face-up card of its suit one rank higher, 12 per run
    in the foundation."""
    score = 12 * len(position.foundation)
    for up in position.up:
        for higher, lower in zip(up, up[1:], strict=False):
            if suit_of(higher) == suit_of(lower) and rank_value(higher) == rank_value(lower) + 1:
                score += 1
    return score


# --------------------------------------------------------------------------- helpers for tests


def all_cards(position: Position) -> list[str]:
    """Every card of the position (tableau, stock, and 13 per foundation run), sorted."""
    cards: list[str] = []
    for down, up in zip(position.down, position.up, strict=True):
        cards.extend(down)
        cards.extend(up)
    cards.extend(position.stock)
    for suit in position.foundation:
        cards.extend(rank + suit for rank in RANKS)
    return sorted(cards)


# --------------------------------------------------------------------------- a player for tests
# Not a rule of the game: a cheap greedy-ish choice that makes random games build in-suit
# runs, so that tests see runs leave (often in spider1, sometimes in spider2) and not only
# deals. Ties and dull positions are settled by ``rng``.


def move_gain(position: Position, move: str) -> int:
    """A rough value of a move, read off the position without applying it."""
    if move == DEAL:
        return 0
    source, count, target = parse_move(move, position.variant.columns)
    source_up = position.up[source]
    tail = source_up[-count:]
    target_up = position.up[target]
    gain = 0
    if target_up and suit_of(target_up[-1]) == suit_of(tail[0]):
        gain += 10  # builds in suit
    if count < movable_run_length(source_up):
        gain -= 10  # splits a run
    if count == len(source_up) and position.down[source]:
        gain += 5  # turns a card up
    if not target_up and not position.down[target]:
        gain -= 3  # uses up an empty column
    if count == len(source_up) and not position.down[source]:
        gain += 3  # empties a column
    if ends_in_complete_run(list(target_up) + list(tail)):
        gain += 100  # a run leaves
    return gain


def greedy_choice(position: Position, moves: list[str], rng: random.Random) -> str:
    """The best move by :func:`move_gain` if any gains; else sometimes a deal, else any."""
    scored = sorted(((move_gain(position, m), rng.random(), m) for m in moves), reverse=True)
    if scored[0][0] > 0:
        return scored[0][2]
    if DEAL in moves and rng.random() < 0.3:
        return DEAL
    return rng.choice(moves)
