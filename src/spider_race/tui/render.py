"""Drawing a race as rich text: boards, progress bars, clocks and results.

Pure functions of the client's data (engine boards and protocol dataclasses) to
:class:`rich.text.Text`, so that they are tested without a terminal.
"""

from __future__ import annotations

from rich.text import Text

from spider_client.protocol import PlayerInfo, RaceInfo, Result
from spider_engine import Board
from spider_engine.moves import column_letter

__all__ = [
    "SUIT_SYMBOLS",
    "SUIT_STYLES",
    "BACK",
    "card_text",
    "render_board",
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


def card_text(board: Board, card: int, *, face_down: bool = False) -> Text:
    """One card, three cells wide: rank and suit symbol in the suit's colour; a back for a
    face-down card (its face dimmed when the board knows it, after a race)."""
    if face_down and card == 0:
        return Text(BACK, style=BACK_STYLE)
    cards = board.variant.cards
    token = cards.tokens[card]
    suit = cards.suits[card]
    rank = token[: -len(suit)] if suit else token
    face = f"{rank.rjust(2)}{SUIT_SYMBOLS.get(suit, suit[:1])}"
    style = SUIT_STYLES.get(suit, "bold")
    if face_down:
        return Text(face, style=f"dim {style} on grey23")
    return Text(face, style=style)


def render_board(
    board: Board,
    *,
    selected: int | None = None,
    pending: str = "",
    compact: bool = False,
) -> Text:
    """The board: a header of column letters (``selected`` highlighted), the columns side
    by side (face-down cards as backs), then the stock's deals left and the foundation.
    ``compact`` draws a run of face-down cards as one back with its count."""
    out = Text()
    ncols = len(board.cols)
    for i in range(ncols):
        letter = f" {column_letter(i)} ".ljust(CELL)
        style = "reverse bold yellow" if i == selected else "bold"
        out.append(letter, style=style)
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
    for row in range(height):
        for cells in columns:
            if row < len(cells):
                out.append_text(cells[row])
                out.append(" ")
            else:
                out.append(" " * CELL)
        out.append("\n")
    out.append(f"stock: {board.deals_left()} deal{'s' if board.deals_left() != 1 else ''} left")
    out.append("   foundation: ")
    if board.foundation:
        for token in board.foundation:
            out.append(SUIT_SYMBOLS.get(token, token), style=SUIT_STYLES.get(token, "bold"))
    else:
        out.append("-", style="dim")
    if pending:
        out.append(f"   move: {pending}▏", style="bold yellow")
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
}


def render_players(
    race: RaceInfo, *, sets: int, cards: int, me: str | None = None, now: float | None = None
) -> Text:
    """Every player's progress: runs completed (a bar out of ``sets``), cards turned up,
    moves, score and status; ``me`` is marked."""
    out = Text()
    for info in race.players:
        _player_line(out, info, race, sets=sets, cards=cards, me=me)
    if not race.players:
        out.append("no players yet\n", style="dim")
    if race.spectators:
        out.append(f"{race.spectators} watching\n", style="dim")
    return out


def _player_line(
    out: Text, info: PlayerInfo, race: RaceInfo, *, sets: int, cards: int, me: str | None
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
    out.append(f" {info.runs}/{sets} runs  ")
    out.append(f"{info.turned_up:3d} up  {info.moves:4d} moves  score {info.score:4d}  ")
    out.append(info.status, style=STATUS_STYLES.get(info.status, ""))
    if info.time is not None and info.status == "won":
        out.append(f" in {format_clock(info.time)}", style="green")
    if not info.connected:
        out.append("  (away)", style="dim")
    out.append("\n")


def render_results(results: list[Result], *, me: str | None = None) -> Text:
    """The ranking after the race."""
    out = Text("Results\n", style="bold underline")
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
