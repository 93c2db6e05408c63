"""Drawing a race as rich text: boards, progress bars, clocks and results.

Pure functions of the client's data (engine boards and protocol dataclasses) to
:class:`rich.text.Text`, so that they are tested without a terminal.
"""

from __future__ import annotations

from collections.abc import Collection

from rich.cells import cell_len
from rich.text import Text

from spider_client.protocol import PlayerInfo, RaceInfo, Result
from spider_engine import Board
from spider_engine.moves import column_index, column_letter

__all__ = [
    "SUIT_SYMBOLS",
    "SUIT_STYLES",
    "DECK_SUITS",
    "BACK",
    "CELL",
    "RESERVE",
    "card_text",
    "card_name",
    "deck_of",
    "render_board",
    "board_width",
    "render_players",
    "render_results",
    "format_clock",
    "progress_bar",
]

SUIT_SYMBOLS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}
SUIT_STYLES = {"s": "bold white", "h": "bold red", "d": "bold blue", "c": "bold green"}
"""A four-colour deck: spades white (on the dark table), hearts red, diamonds blue, clubs
green."""
BACK = "▒▒▒"
BACK_STYLE = "blue on grey23"
CELL = 4
"""A card's cell: its three-cell face and a space."""
FACE = 3
"""Every face, of every deck, is three cells wide."""
MAX_WIDTH = 120
"""Boards wider than this (in terminal cells) drop the space between cards."""
RESERVE = column_index("z")
"""The column index of Wizard's Tower's reserve (``z``) with ``weave``."""

# The symbols are the web page's (static/cards.js); the colours are its colours made
# brighter for the dark table. A suit is (symbol, style, name).
_STANDARD = {
    "s": ("♠", "bold white", "spades"),
    "h": ("♥", "bold red", "hearts"),
    "d": ("♦", "bold blue", "diamonds"),
    "c": ("♣", "bold green", "clubs"),
}
"""Spider's four suits, as they always were (the terminal's own red, blue and green)."""
_SIX_SUITS = {
    "s": ("♠", "bold white", "spades"),
    "h": ("♥", "bold #ff5555", "hearts"),
    "d": ("♦", "bold #3b9dff", "diamonds"),
    "c": ("♣", "bold #4cc35a", "clubs"),
    "r": ("★", "bold #d27cff", "stars"),
    "q": ("Ψ", "bold #ff9a3c", "squids"),
}
"""Starfish's six suits: exact colours, so that diamonds stay blue and stars violet in any
terminal theme."""
_DECKTET = {
    "m": ("☾", "bold #a9a4ff", "moons"),
    "s": ("☀", "bold #ffc233", "suns"),
    "w": ("≈", "bold #3ba7ff", "waves"),
    "l": ("❦", "bold #4cc35a", "leaves"),
    "y": ("∿", "bold #ff5f4f", "wyrms"),
    "k": ("⌘", "bold #c99563", "knots"),
}
_TAROT = {
    "w": ("⚚", "bold #e8903a", "wands"),
    "c": ("∪", "bold #ff5f5f", "cups"),
    "d": ("◉", "bold #e6c229", "discs"),
    "s": ("⚔", "bold #7fb2ff", "swords"),
}
_MAHJONG = {
    "b": ("‖", "bold #3fcf5f", "bamboo"),
    "c": ("●", "bold #4aa3ff", "coins"),
    "m": ("※", "bold #ff5f5f", "characters"),
}
DECK_SUITS: dict[str, dict[str, tuple[str, str, str]]] = {
    "standard": _STANDARD,
    "myrmex": _DECKTET,
    "wizard": _TAROT,
    "sparrow": _MAHJONG,
    "starfish": _SIX_SUITS,
}
"""Each deck's suits: letter to (symbol, style, name)."""

TRUMP_STYLE = "bold #4a2800 on #f2d98c"
"""Tarot trumps: their number on a pale gold tile (the web page's trump card)."""
DRAGON_BACKGROUND = {"b": "#173d22", "c": "#14294a", "m": "#4a1a1a"}
"""Dragons: their suit's colour on a dark tint of it."""
WIND_ARROWS = {"E": "→", "S": "↓", "W": "←", "N": "↑"}
WIND_STYLE = "bold #262626 on #e2d5b5"
"""Winds: the wind's letter and its arrow on a tan tile."""
FLOWER_STYLE = "bold #ff87c8"
JOKER_FACE = "Jk☆"
JOKER_STYLE = "bold #5a2ca0 on #e6dcff"
"""Jokers: lilac tiles, as on the web page."""

_RANK_NAMES = {"A": "ace", "T": "ten", "J": "jack", "Q": "queen", "K": "king"}
_TAROT_RANKS = {"T": "10", "P": "Pg", "N": "Kn"}
_TAROT_NAMES = {"A": "ace", "T": "ten", "P": "page", "N": "knight", "Q": "queen", "K": "king"}
_DECKTET_RANKS = {"C": "♛"}
_DECKTET_NAMES = {"A": "ace", "C": "crown", "P": "pawn", "K": "court"}
_WIND_NAMES = {"E": "east", "S": "south", "W": "west", "N": "north"}
_DRAGON_NAMES = {"b": "green", "c": "red", "m": "white"}

Segments = list[tuple[str, str]]
"""A face as (text, style) pieces, three cells in all."""


def deck_of(board: Board) -> str:
    """The deck a board is played with: ``myrmex``, ``wizard``, ``sparrow``, ``starfish``,
    or ``standard`` (Spider and any other variant of standard cards)."""
    base = board.variant.base
    return base if base in DECK_SUITS else "standard"


def _split(token: str, suits: str) -> str:
    """A token's rank part (the token without its suit letters)."""
    return token[: -len(suits)] if suits and token.endswith(suits) else token


def _face(deck: str, token: str, suits: str) -> Segments:
    """A known card's face, three cells wide."""
    if token == "@":
        return [(JOKER_FACE, JOKER_STYLE)]
    rank = _split(token, suits)
    if deck == "myrmex":
        shown = _DECKTET_RANKS.get(rank, rank)
        if len(suits) == 1:
            symbol, style = _DECKTET.get(suits, (suits, "bold"))[:2]
            return [(f"{shown.rjust(2)}{symbol}", style)]
        pieces: Segments = [(shown.rjust(FACE - len(suits)), "bold white")]
        for s in suits:
            symbol, style = _DECKTET.get(s, (s, "bold"))[:2]
            pieces.append((symbol, style))
        return pieces
    if deck == "wizard":
        if suits == "t":
            return [(rank.rjust(FACE), TRUMP_STYLE)]
        symbol, style = _TAROT.get(suits, (suits, "bold"))[:2]
        return [(f"{_TAROT_RANKS.get(rank, rank).rjust(2)}{symbol}", style)]
    if deck == "sparrow":
        if suits == "w":
            return [(f" {rank}{WIND_ARROWS.get(rank, '~')}", WIND_STYLE)]
        if suits == "f":
            symbol = "✿" if rank.isdigit() and int(rank) <= 4 else "❄"
            return [(f" {rank}{symbol}", FLOWER_STYLE)]
        symbol, style = _MAHJONG.get(suits, (suits, "bold"))[:2]
        if rank == "D":
            return [(f" D{symbol}", f"{style} on {DRAGON_BACKGROUND.get(suits, 'grey23')}")]
        return [(f" {rank}{symbol}", style)]
    table = DECK_SUITS.get(deck, _STANDARD)
    if suits in table:
        symbol, style = table[suits][:2]
        return [(f"{rank.rjust(2)}{symbol}", style)]
    # a card of a deck this module does not know: its token, plainly
    return [(token[:FACE].rjust(FACE), "bold")]


def card_name(board: Board, card: int) -> str:
    """A card's name in words (``seven of moons and leaves``, ``trump 21``, ``east wind``,
    ``red dragon``, ``joker``), for help texts and tests."""
    cards = board.variant.cards
    token = cards.tokens[card]
    if card == 0:
        return "unknown card"
    if token == "@":
        return "joker"
    suits = cards.suits[card]
    rank = _split(token, suits)
    deck = deck_of(board)
    if deck == "wizard" and suits == "t":
        return f"trump {rank}"
    if deck == "sparrow":
        if suits == "w":
            return f"{_WIND_NAMES.get(rank, rank)} wind"
        if suits == "f":
            kind = "flower" if rank.isdigit() and int(rank) <= 4 else "season"
            return f"{kind} {rank}"
        if rank == "D":
            return f"{_DRAGON_NAMES.get(suits, suits)} dragon"
    names = {"myrmex": _DECKTET_NAMES, "wizard": _TAROT_NAMES}.get(deck, _RANK_NAMES)
    table = DECK_SUITS.get(deck, _STANDARD)
    suit_names = " and ".join(table[s][2] if s in table else s for s in suits)
    return f"{names.get(rank, rank)} of {suit_names}"


def card_text(board: Board, card: int, *, face_down: bool = False) -> Text:
    """One card, three cells wide, drawn from the engine's card data (its token, rank and
    suits) in its deck's look: rank and suit symbol in the suit's colour (a Decktet card's
    two suits each in its own colour; Tarot trumps as numbers on gold; Mah Jong Dragons,
    Winds, Flowers and Seasons; Jokers); a back for a face-down card (its face dimmed when
    the board knows it, after a race)."""
    if face_down and card == 0:
        return Text(BACK, style=BACK_STYLE)
    cards = board.variant.cards
    segments = _face(deck_of(board), cards.tokens[card], cards.suits[card])
    out = Text()
    for text, style in segments:
        if face_down:
            fg = style.split(" on ")[0]
            out.append(text, style=f"dim {fg} on grey23")
        else:
            out.append(text, style=style)
    return out


def _foundation_text(board: Board) -> Text:
    """The sets that have left, each as its suit's symbol (Sparrow's Winds and Flowers as
    their tiles' marks); Wizard's trumps are counted in the Tower line instead."""
    out = Text()
    deck = deck_of(board)
    table = DECK_SUITS.get(deck, _STANDARD)
    tokens = [t for t in board.foundation if not (deck == "wizard" and t == "t")]
    if not tokens:
        out.append("-", style="dim")
        return out
    for token in tokens:
        if deck == "sparrow" and token == "w":
            out.append("ESWN", style=WIND_STYLE)
        elif deck == "sparrow" and token == "f":
            out.append("✿❄", style=FLOWER_STYLE)
        elif token in table:
            symbol, style = table[token][:2]
            out.append(symbol, style=style)
        else:
            out.append(token, style="bold")
    return out


def _has_reserve(board: Board) -> bool:
    v = board.variant
    return v.base == "wizard" and "reserve" in v.extra_fields and bool(board.extra)


def _extra_line(board: Board) -> Text | None:
    """The line of a game's extra state: Wizard's Tower, Starfish's Troupe."""
    v = board.variant
    if v.base == "wizard":
        gone = board.foundation.count("t")
        total = len(getattr(v, "trump", ())) or 22
        out = Text("tower: ")
        if gone >= total:
            out.append(f"complete, all {total} trumps gone", style="bold green")
        else:
            out.append(f"{gone}/{total} trumps gone, next ")
            out.append(str(gone).rjust(2), style=TRUMP_STYLE)
        if _has_reserve(board):
            out.append("   reserve z: ")
            card = board.extra[0]
            out.append_text(card_text(board, card) if card > 0 else Text("empty", style="dim"))
        return out
    if v.base == "starfish" and board.extra:
        jokers = board.extra[0]
        out = Text("troupe: ")
        out.append(f"{jokers} Joker{'s' if jokers != 1 else ''} ", style="bold")
        out.append("☆" * jokers, style="bold #d27cff")
        return out
    return None


def board_width(board: Board, *, cell: int = CELL) -> int:
    """The board's width in terminal cells with cells of ``cell`` (the reserve included)."""
    width = len(board.cols) * cell
    if _has_reserve(board):
        width += 2 + cell
    return width


def render_board(
    board: Board,
    *,
    selected: int | Collection[int] | None = None,
    pending: str = "",
    compact: bool = False,
    max_width: int = MAX_WIDTH,
) -> Text:
    """The board: a header of column letters (``selected`` highlighted: one column or
    several), the columns side by side (face-down cards as backs), Wizard's reserve ``z``
    at the right with ``weave``, then the stock's deals left and the foundation, and a line
    for the game's extra state (Wizard's Tower, Starfish's Troupe). ``compact`` draws a run
    of face-down cards as one back with its count. A board wider than ``max_width`` cells
    drops the space between cards."""
    chosen: set[int] = (
        set() if selected is None else {selected} if isinstance(selected, int) else set(selected)
    )
    cell = CELL if board_width(board) <= max_width else FACE
    reserve = _has_reserve(board)
    out = Text()
    ncols = len(board.cols)
    for i in range(ncols):
        letter = f" {column_letter(i)} ".ljust(cell)[:cell]
        style = "reverse bold yellow" if i in chosen else "bold"
        out.append(letter, style=style)
    if reserve:
        out.append("│ ", style="dim")
        out.append(" z ", style="reverse bold yellow" if RESERVE in chosen else "bold")
    out.append("\n")
    columns: list[list[Text]] = []
    for i, col in enumerate(board.cols):
        down = board.down[i]
        cells: list[Text] = []
        if compact and down:
            cells.append(Text(f"▒×{down}".ljust(3), style=BACK_STYLE))
            cards = list(enumerate(col))[down:]
        else:
            cards = list(enumerate(col))
        for j, card in cards:
            cells.append(card_text(board, card, face_down=j < down))
        if not cells:
            cells.append(Text(" · ", style="dim"))
        columns.append(cells)
    height = max(len(c) for c in columns)
    gap = " " * (cell - FACE)
    for row in range(height):
        for cells in columns:
            if row < len(cells):
                out.append_text(cells[row])
                out.append(gap)
            else:
                out.append(" " * cell)
        if reserve and row == 0:
            out.append("│ ", style="dim")
            card = board.extra[0]
            out.append_text(card_text(board, card) if card > 0 else Text(" · ", style="dim"))
        elif reserve:
            out.append("│", style="dim")
        out.append("\n")
    if board.variant.stock_deals:
        deals = board.deals_left()
        out.append(f"stock: {deals} deal{'s' if deals != 1 else ''} left")
    else:
        out.append("stock: none")
    out.append("   foundation: ")
    out.append_text(_foundation_text(board))
    if pending:
        out.append(f"   move: {pending}▏", style="bold yellow")
    extra = _extra_line(board)
    if extra is not None:
        out.append("\n")
        out.append_text(extra)
    return out


def progress_bar(done: int, total: int, *, width: int = 16) -> Text:
    """A bar of ``width`` cells, ``done`` of ``total`` filled."""
    total = max(total, 1)
    filled = round(width * min(done, total) / total)
    bar = Text("█" * filled, style="green")
    bar.append("░" * (width - filled), style="grey39")
    return bar


STATUS_STYLES = {
    "won": "bold green",
    "playing": "cyan",
    "waiting": "dim",
    "stuck": "yellow",
    "resigned": "red",
    "timeout": "red",
    "left": "dim red",
    "abandoned": "dim red",
}


def render_players(
    race: RaceInfo,
    *,
    sets: int,
    cards: int,
    me: str | None = None,
    now: float | None = None,
    width: int | None = None,
) -> Text:
    """Every player's progress: runs completed (a bar out of ``sets``), cards turned up,
    moves, score and status; ``me`` is marked. A player's line longer than ``width`` cells
    goes on two lines."""
    out = Text()
    for info in race.players:
        _player_line(out, info, race, sets=sets, cards=cards, me=me, width=width)
    if not race.players:
        out.append("no players yet\n", style="dim")
    if race.spectators:
        out.append(f"{race.spectators} watching\n", style="dim")
    return out


def _player_line(
    out: Text,
    info: PlayerInfo,
    race: RaceInfo,
    *,
    sets: int,
    cards: int,
    me: str | None,
    width: int | None,
) -> None:
    mark = "▶ " if info.player == me else "  "
    out.append(mark, style="bold yellow")
    out.append(info.name[:14].ljust(15), style="bold" if info.player == me else "")
    if race.state in ("open", "countdown"):
        ready = "ready" if info.ready else "not ready"
        out.append(ready, style="green" if info.ready else "dim")
        if not info.connected:
            out.append("  (away)", style="dim")
        out.append("\n")
        return
    out.append_text(progress_bar(info.runs, sets))
    out.append(f" {info.runs}/{sets} runs")
    rest = Text(f"{info.turned_up:3d} up  {info.moves:4d} moves  score {info.score:4d}  ")
    rest.append(info.status, style=STATUS_STYLES.get(info.status, ""))
    if info.time is not None and info.status == "won":
        rest.append(f" in {format_clock(info.time)}", style="green")
    if not info.connected:
        rest.append("  (away)", style="dim")
    line = out.plain[out.plain.rfind("\n") + 1 :]
    if width is not None and cell_len(line) + 2 + rest.cell_len > width:
        # too narrow for one line: the rest under the bar
        out.append("\n" + " " * 17)
        rest = _lstrip(rest)
    else:
        out.append("  ")
    out.append_text(rest)
    out.append("\n")


def _lstrip(text: Text) -> Text:
    """``text`` without its leading spaces (its styles kept)."""
    spaces = len(text.plain) - len(text.plain.lstrip(" "))
    return text[spaces:]


def render_results(results: list[Result], *, me: str | None = None) -> Text:
    """The ranking after the race."""
    out = Text()
    out.append("Results\n", style="bold underline")
    for r in results:
        style = "bold yellow" if r.player == me else ""
        time = format_clock(r.time) if r.time is not None else "  -  "
        out.append(
            f"{r.rank:2d}. {r.name[:14]:<15}{r.status:<9}{time:>7}  {r.runs} runs"
            f"  {r.moves} moves  score {r.score}\n",
            style=style,
        )
    return out


def format_clock(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour), never negative."""
    total = max(int(seconds), 0)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"
