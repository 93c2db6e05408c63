"""A deliberately simple reference for the Spiders of other decks (alt-decks.md) and the
Spider option ``keep``, written from the spec's text alone, for differential tests.

Cards are their text tokens (``"7ml"``, ``"21t"``, ``"Ew"``, ``"@"``); a position is a plain
dataclass that every move copies. Legal moves are found by brute force: every column move
``<from><count><to>`` for every count, the deal, and each game's own moves (Wizard's reserve
``a1z``/``z1c``, Sparrow's ``x`` over every four columns, Starfish's ``*`` over every column,
depth and target), each checked against the rules as the spec words them. Settling applies,
until none acts: turn up a face-down end card, let a complete set at a column's end leave
(columns left to right), and then the game's own rules that act at once (the Tower; Jokers
back to the Troupe). Nothing here is fast, and nothing is shared with the engine.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import re
from dataclasses import dataclass, field

__all__ = [
    "Position",
    "apply_move",
    "deal",
    "format_position",
    "game_of",
    "legal_moves",
    "view_text",
    "is_won",
]

LETTERS = "abcdefghijklmnopqrstuvwxyz"
SPIDER_RANKS = "A23456789TJQK"
TAROT_RANKS = "A23456789TPNQK"
MYRMEX_PAIRS = {
    2: ["mk", "sy", "wl"],
    3: ["mw", "sk", "ly"],
    4: ["ms", "wl", "yk"],
    5: ["ml", "sw", "yk"],
    6: ["mw", "sy", "lk"],
    7: ["ml", "sk", "wy"],
    8: ["ms", "wl", "yk"],
    9: ["ms", "wy", "lk"],
}
WINDS = ["Ew", "Sw", "Ww", "Nw"]


# ----------------------------------------------------------------------------- the games


@dataclass(frozen=True)
class Game:
    base: str
    deck: list[str]
    first_deal: list[int]
    deals: list[list[int]]
    dealt_face_up: bool
    deals_while_empty: bool


def game_of(base: str) -> Game:
    """The deck, layout and stock of a base, as the spec's tables give them."""
    if base in ("spider1", "spider2", "spider4", "spiderette"):
        suits = {"spider1": "s", "spider2": "sh", "spider4": "shdc", "spiderette": "shdc"}[base]
        copies = {"spider1": 8, "spider2": 4, "spider4": 2, "spiderette": 1}[base]
        deck = [r + s for _ in range(copies) for s in suits for r in SPIDER_RANKS]
        if base == "spiderette":
            return Game(base, deck, [1, 2, 3, 4, 5, 6, 7], [list(range(7))] * 3 + [[0, 1, 2]],
                        False, False)
        return Game(base, deck, [6, 6, 6, 6, 5, 5, 5, 5, 5, 5], [list(range(10))] * 5,
                    False, False)
    if base == "myrmex":
        aces = ["A" + s for s in "mswlyk"]
        numerals = [f"{r}{p}" for r in range(2, 10) for p in MYRMEX_PAIRS[r]]
        crowns = ["C" + s for s in "mswlyk"]
        return Game(base, aces + numerals + crowns + numerals, [4] * 8,
                    [list(range(8))] * 3 + [[0, 1, 2, 3]], True, True)
    if base == "wizard":
        deck = [r + s for s in "wcds" for r in TAROT_RANKS] + [f"{n}t" for n in range(22)]
        return Game(base, deck, [6] * 13, [], True, True)
    if base == "sparrow":
        block = [f"{n}{s}" for s in "bcm" for n in [*range(1, 10), "D"]] + WINDS
        return Game(base, block * 4 + [f"{n}f" for n in range(1, 9)], [6] * 12,
                    [list(range(12))] * 6, True, True)
    if base == "starfish":
        deck = [r + s for _ in range(2) for s in "shdcrq" for r in SPIDER_RANKS]
        return Game(base, deck, [6] * 12, [list(range(12))] * 7, True, True)
    raise ValueError(base)


@functools.cache
def split(token: str) -> tuple[str, str]:
    """A token's rank text and suit letters (``"@"``: both empty)."""
    if token == "@":
        return "", ""
    m = re.fullmatch(r"([0-9]+|[A-Z])([a-z]+)", token)
    assert m, token
    return m[1], m[2]


@functools.cache
def rank_of(base: str, token: str) -> int:
    r, s = split(token)
    if base == "myrmex":
        return {"A": 1, "C": 10}.get(r) or int(r)
    if base == "wizard":
        return int(r) if s == "t" else TAROT_RANKS.index(r) + 1
    if base == "sparrow":
        return 10 if r == "D" else int(r)
    return SPIDER_RANKS.index(r) + 1


@functools.cache
def kind_of(base: str, token: str) -> str:
    """"joker", "trump", "wind", "flower" or "suit"."""
    _, s = split(token)
    if token == "@":
        return "joker"
    if base == "wizard" and s == "t":
        return "trump"
    if base == "sparrow" and s == "w":
        return "wind"
    if base == "sparrow" and s == "f":
        return "flower"
    return "suit"


# --------------------------------------------------------------------------- positions


@dataclass
class Position:
    variant: str
    cols: list[list[str]]
    down: list[int]
    stock: list[str]
    foundation: list[str] = field(default_factory=list)
    troupe: int | None = None
    reserve: str | None = None  # "" when the reserve is empty (weave only)

    @property
    def base(self) -> str:
        return self.variant.split("+")[0]

    @property
    def options(self) -> list[str]:
        return self.variant.split("+")[1:]


def shuffled(deck: list[str], seed: str) -> list[str]:
    cards = list(deck)
    k = 0

    def word() -> int:
        nonlocal k
        data = b"spider-race/deal/v1\x00" + seed.encode() + b"\x00" + k.to_bytes(8, "big")
        k += 1
        return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")

    for i in range(len(cards) - 1, 0, -1):
        n = i + 1
        while True:
            w = word()
            if w < 2**64 - (2**64 % n):
                break
        j = w % n
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def deal(variant: str, seed: str) -> Position:
    base, *options = variant.split("+")
    game = game_of(base)
    cards = shuffled(game.deck, seed)
    cols: list[list[str]] = [[] for _ in game.first_deal]
    i = 0
    for row in range(max(game.first_deal)):
        for c, wanted in enumerate(game.first_deal):
            if row < wanted:
                cols[c].append(cards[i])
                i += 1
    face_up = ("open" in options) or (game.dealt_face_up and "blind" not in options)
    down = [0 if face_up else len(c) - 1 for c in cols]
    pos = Position(variant, cols, down, cards[i:])
    if base == "starfish":
        pos.troupe = 6
    if "weave" in options:
        pos.reserve = ""
    settle(pos)
    return pos


def format_position(pos: Position) -> str:
    return _format(pos, view=False)


def view_text(pos: Position) -> str:
    return _format(pos, view=True)


def _stretch(cards: list[str]) -> str:
    out, unknown = [], 0
    for c in cards:
        if c == "??":
            unknown += 1
            continue
        if unknown:
            out.append(f"*{unknown}")
            unknown = 0
        out.append(c)
    if unknown:
        out.append(f"*{unknown}")
    return "".join(out)


def _format(pos: Position, *, view: bool) -> str:
    columns = []
    for col, d in zip(pos.cols, pos.down, strict=True):
        hidden = ["??"] * d if view else col[:d]
        columns.append(_stretch(hidden) + "|" + "".join(col[d:]))
    stock = _stretch(["??"] * len(pos.stock) if view else pos.stock) or "-"
    fields = [pos.variant, "/".join(columns), stock, "".join(pos.foundation) or "-"]
    if pos.troupe is not None:
        fields.append(str(pos.troupe))
    if pos.reserve is not None:
        fields.append(pos.reserve or "-")
    return " ".join(fields)


# ------------------------------------------------------------------------------ the rules


def is_group(base: str, cards: list[str]) -> bool:
    """Whether ``cards`` (face up, from the deepest to the column's end) may move together."""
    if len(cards) == 1:
        return True
    kinds = {kind_of(base, c) for c in cards}
    ranks = [rank_of(base, c) if kind_of(base, c) in ("suit", "trump") else 0 for c in cards]
    if kinds - {"suit", "trump"} or len(kinds) != 1:
        return False  # Jokers, Winds and Flowers never go in a group; no mixing trumps
    if any(ranks[i + 1] != ranks[i] - 1 for i in range(len(cards) - 1)):
        return False
    if base == "myrmex":
        common = set(split(cards[0])[1])
        for c in cards[1:]:
            common &= set(split(c)[1])
        return bool(common)
    if kinds == {"trump"}:
        return True
    return len({split(c)[1] for c in cards}) == 1


def goes_onto(base: str, card: str, end: str) -> bool:
    """Whether ``card`` (the head of what moves) may go onto the end card ``end``."""
    a, b = kind_of(base, card), kind_of(base, end)
    if base == "sparrow":
        if a in ("wind", "flower"):
            return a == b
        if b != "suit" or split(card)[0] == "D":
            return False
    if base == "wizard" and (a == "trump" or b == "trump"):
        return a == b and rank_of(base, end) > rank_of(base, card)
    if a != "suit" or b != "suit":
        return False
    return rank_of(base, end) == rank_of(base, card) + 1


def complete_set(pos: Position, i: int) -> tuple[int, str] | None:
    """The complete set at the end of column ``i`` that leaves at once: size, token."""
    base = pos.base
    col, up = pos.cols[i], len(pos.cols[i]) - pos.down[i]
    size = {"myrmex": 10, "wizard": 14, "sparrow": 10}.get(base, 13)
    if up < size:
        return None
    tail = col[-size:]
    if kind_of(base, tail[0]) != "suit" or not is_group(base, tail):
        return None
    if rank_of(base, tail[-1]) != 1:
        return None
    if base == "myrmex":
        return size, split(tail[0])[1]  # the Crown's suit
    return size, split(tail[-1])[1]


def settle(pos: Position) -> None:
    """Apply the rules that act at once until none acts."""
    keep = "keep" in pos.options
    while True:
        acted = False
        for i, col in enumerate(pos.cols):
            if col and pos.down[i] == len(col):
                pos.down[i] -= 1
                acted = True
            elif col and not keep:
                done = complete_set(pos, i)
                if done:
                    del col[-done[0] :]
                    pos.foundation.append(done[1])
                    acted = True
        if acted:
            continue
        if pos.base == "wizard":
            wanted = f"{pos.foundation.count('t')}t"
            for col in pos.cols:
                if col and col[-1] == wanted:
                    col.pop()
                    pos.foundation.append("t")
                    acted = True
                    break
        if pos.base == "starfish":
            for col in pos.cols:
                if col and col[-1] == "@":
                    col.pop()
                    assert pos.troupe is not None
                    pos.troupe += 1
                    acted = True
                    break
        if not acted:
            return


def may_deal(pos: Position) -> bool:
    game = game_of(pos.base)
    relaxed = game.deals_while_empty or "relaxed" in pos.options
    return bool(pos.stock) and (relaxed or all(pos.cols))


def _winds_together(pos: Position, i: int, kind: str) -> int:
    col, n = pos.cols[i], 0
    for j in range(len(col) - 1, pos.down[i] - 1, -1):
        if kind_of(pos.base, col[j]) != kind:
            break
        n += 1
    return n


def column_move_ok(pos: Position, src: int, count: int, dst: int) -> bool:
    base = pos.base
    col = pos.cols[src]
    if src == dst or count > len(col) - pos.down[src]:
        return False
    moving = col[-count:]
    if not is_group(base, moving):
        return False
    target = pos.cols[dst]
    if not target:
        if count == len(col):
            return False  # rule 2: no empty-to-empty
    elif not goes_onto(base, moving[0], target[-1]):
        return False
    kind = kind_of(base, moving[0])
    if base == "sparrow" and kind in ("wind", "flower"):
        # a move may not leave four or more of them lying together at a column's end
        return _winds_together(pos, dst, kind) + 1 < 4
    return True


def legal_moves(pos: Position) -> list[str]:
    """Every legal move's text, sorted by code point."""
    base = pos.base
    n = len(pos.cols)
    moves: list[str] = []
    for src in range(n):
        col = pos.cols[src]
        for count in range(1, len(col) - pos.down[src] + 1):
            if not is_group(base, col[-count:]):
                break  # a longer tail holds this one
            for dst in range(n):
                if column_move_ok(pos, src, count, dst):
                    moves.append(f"{LETTERS[src]}{count}{LETTERS[dst]}")
    if may_deal(pos):
        moves.append("+")
    if pos.reserve is not None:
        if pos.reserve == "":
            moves += [f"{LETTERS[i]}1z" for i in range(n) if pos.cols[i]]
        else:
            for j in range(n):
                if not pos.cols[j] or goes_onto(base, pos.reserve, pos.cols[j][-1]):
                    moves.append(f"z1{LETTERS[j]}")
    if base == "sparrow":
        for four in itertools.combinations(range(n), 4):
            if not all(pos.cols[i] for i in four):
                continue
            ends = [pos.cols[i][-1] for i in four]
            kinds = {kind_of(base, e) for e in ends}
            if sorted(ends) == sorted(WINDS) or kinds == {"flower"}:
                moves.append("x" + "".join(LETTERS[i] for i in four))
    if base == "starfish" and pos.troupe:
        for src in range(n):
            col = pos.cols[src]
            for depth in range(2, len(col) - pos.down[src] + 1):
                card = col[-depth]
                if card == "@":
                    continue
                for dst in range(n):
                    if dst != src and (not pos.cols[dst] or goes_onto(base, card, pos.cols[dst][-1])):
                        moves.append(f"*{LETTERS[src]}{depth}{LETTERS[dst]}")
    return sorted(moves)


def apply_move(pos: Position, move: str) -> Position:
    """The position after a legal ``move`` (a new object), settled."""
    new = copy.copy(pos)
    new.cols = [list(c) for c in pos.cols]
    new.down = list(pos.down)
    new.stock = list(pos.stock)
    new.foundation = list(pos.foundation)
    game = game_of(pos.base)
    if move == "+":
        targets = game.deals[len(game.deals) - _deals_left(game, len(new.stock))]
        for j in targets:
            new.cols[j].append(new.stock.pop(0))
    elif move[0] == "x":
        cols = [LETTERS.index(ch) for ch in move[1:]]
        token = "w" if kind_of(pos.base, new.cols[cols[0]][-1]) == "wind" else "f"
        for i in cols:
            new.cols[i].pop()
        new.foundation.append(token)
    elif move[0] == "*":
        m = re.fullmatch(r"\*([a-z])([0-9]+)([a-z])", move)
        assert m
        src, depth, dst = LETTERS.index(m[1]), int(m[2]), LETTERS.index(m[3])
        card = new.cols[src][-depth]
        new.cols[src][-depth] = "@"
        new.cols[dst].append(card)
        assert new.troupe is not None
        new.troupe -= 1
    else:
        m = re.fullmatch(r"([a-z])([0-9]+)([a-z])", move)
        assert m
        source, count, target = m[1], int(m[2]), m[3]
        if target == "z":
            new.reserve = new.cols[LETTERS.index(source)].pop()
        elif source == "z":
            assert new.reserve
            new.cols[LETTERS.index(target)].append(new.reserve)
            new.reserve = ""
        else:
            s, d = LETTERS.index(source), LETTERS.index(target)
            moving = new.cols[s][-count:]
            del new.cols[s][-count:]
            new.cols[d] += moving
    settle(new)
    return new


def _deals_left(game: Game, stock: int) -> int:
    """How many deals a stock of ``stock`` cards still holds (the last deals, in order)."""
    left, total = 0, 0
    for d in reversed(game.deals):
        if total == stock:
            break
        total += len(d)
        left += 1
    return left


def is_won(pos: Position) -> bool:
    if pos.stock or pos.reserve:
        return False
    if "keep" in pos.options:
        for i, col in enumerate(pos.cols):
            if col and (len(col) != 13 or pos.down[i] or not complete_set_kept(pos, i)):
                return False
        return True
    return not any(pos.cols)


def complete_set_kept(pos: Position, i: int) -> bool:
    col = pos.cols[i]
    return is_group(pos.base, col) and rank_of(pos.base, col[-1]) == 1
