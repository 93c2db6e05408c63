"""Spectators' boards laid side by side, as many to a row as the width holds.

Each board is drawn compact (a run of face-down cards as one back with its count) under
its player's whole name, as wide as its columns (or its name) whatever it holds, so that
boards do not move as the games go on. Boards go side by side while they fit in the width,
in rows otherwise; when a narrower card cell (no space between cards) puts them in fewer rows,
that cell is used. A pure function of engine boards to :class:`rich.text.Text`.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from spider_client.protocol import RaceInfo
from spider_engine import Board, EngineError

from .progress import shown_name
from .render import CELL, FACE, board_width, render_board

__all__ = ["GAP", "board_block", "spectator_boards", "tile_boards"]

GAP = 3
"""Cells between two boards of a row."""


def board_block(name: str, board: Board, *, cell: int = CELL) -> list[Text]:
    """One spectator's board: its player's name (whole), then the compact board with cards
    of ``cell`` cells, as lines without trailing spaces."""
    title = Text(name, style="bold underline")
    max_width = 10**6 if cell == CELL else 0  # a cell of FACE drops the space between cards
    lines = render_board(board, compact=True, max_width=max_width).split("\n")
    for line in lines:
        line.rstrip()
    return [title, *lines]


def _rows(widths: Sequence[int], width: int | None) -> list[list[int]]:
    """The blocks' indices in rows: each row as many as fit in ``width`` (one a row
    without a width)."""
    rows: list[list[int]] = []
    used = 0
    for i, w in enumerate(widths):
        if rows and width is not None and used + GAP + w <= width:
            rows[-1].append(i)
            used += GAP + w
        else:
            rows.append([i])
            used = w
    return rows


def tile_boards(boards: Sequence[tuple[str, Board]], *, width: int | None) -> Text:
    """Every ``(name, board)`` drawn compact, side by side in rows of at most ``width``
    cells (a board wider than ``width`` alone in its row), rows parted by a blank line.
    Cards keep their space between them unless dropping it saves a row."""
    if not boards:
        return Text()
    best: tuple[list[list[Text]], list[int], list[list[int]]] | None = None
    for cell in (CELL, FACE):
        blocks = [board_block(name, board, cell=cell) for name, board in boards]
        widths = [
            max(board_width(board, cell=cell), *(line.cell_len for line in block))
            for block, (_, board) in zip(blocks, boards, strict=True)
        ]
        rows = _rows(widths, width)
        if best is None or len(rows) < len(best[2]):
            best = (blocks, widths, rows)
    assert best is not None
    blocks, widths, rows = best
    out = Text(no_wrap=True, overflow="ignore")
    for r, row in enumerate(rows):
        if r:
            out.append("\n\n")
        height = max(len(blocks[i]) for i in row)
        for y in range(height):
            if y:
                out.append("\n")
            for k, i in enumerate(row):
                line = blocks[i][y] if y < len(blocks[i]) else Text()
                out.append_text(line)
                if k < len(row) - 1:
                    out.append(" " * (widths[i] - line.cell_len + GAP))
    return out


def spectator_boards(race: RaceInfo, shown: dict[str, str], *, width: int | None) -> Text:
    """The players' boards a spectator is shown (``shown``: player id -> board text), side
    by side as many as ``width`` holds, each under its player's name."""
    if not shown:
        return Text()
    names = {info.player: shown_name(info.name, info.bot) for info in race.players}
    boards: list[tuple[str, Board]] = []
    for player, text in shown.items():
        try:
            boards.append((names.get(player, player), Board.from_text(text)))
        except EngineError:
            continue
    return tile_boards(boards, width=width)
