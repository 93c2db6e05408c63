"""Legality: which moves a variant's rules allow in a position, and why one is not allowed.

Separate from applying moves (``board.py``): :func:`generate_moves` yields every legal move,
:func:`is_legal` checks one, :func:`explain_illegal` says in one line why one is not legal.
Column moves follow the variant's building and run tables (``key``, ``want``, ``movable``)
and the deal its stock rule; variants with hooks beyond those (``Variant.plain`` false) add
their extra moves and their move filter here.
"""

from __future__ import annotations

from collections.abc import Iterator

from .moves import Move, column_letter
from .position import Position
from .variants import Variant

__all__ = ["column_moves", "explain_illegal", "generate_moves", "is_legal"]

_DEAL = Move.deal()


def generate_moves(variant: Variant, position: Position) -> Iterator[Move]:
    """An iterator over every legal move (unordered; sort texts to print them)."""
    if variant.plain:
        return column_moves(variant, position)
    return _hooked_moves(variant, position)


def _hooked_moves(v: Variant, position: Position) -> Iterator[Move]:
    if v.filters_moves:
        refused = v.move_refused
        for move in column_moves(v, position):
            if move.kind == "deal" or refused(position, move.src, move.count, move.dst) is None:
                yield move
    else:
        yield from column_moves(v, position)
    if v.has_extra_moves:
        yield from v.extra_moves(position)


def column_moves(v: Variant, position: Position) -> Iterator[Move]:
    """Column moves by building and run rules, and the deal (no move filter)."""
    cols = position.cols
    down = position.down
    key = v.key
    want = v.want
    movable = v.movable
    by_key: dict[object, list[int]] = {}
    empties: list[int] = []
    for i, col in enumerate(cols):
        if col:
            k = key[col[-1]]
            if k is not None:
                lst = by_key.get(k)
                if lst is None:
                    by_key[k] = [i]
                else:
                    lst.append(i)
        else:
            empties.append(i)
    # Spider's runs (the hook not overridden) measured here, without a call per column
    nxt = v.next if type(v).movable is Variant.movable else None
    for i, col in enumerate(cols):
        n = len(col)
        if not n:
            continue
        if nxt is None:
            run = movable(col, n - down[i])
        else:
            up = n - down[i]
            run = 1 if up else 0
            while run < up and nxt[col[n - run - 1]] == col[n - run]:
                run += 1
        for k in range(1, run + 1):
            card = col[n - k]
            for w in want[card]:
                dests = by_key.get(w)
                if dests:
                    for j in dests:
                        if j != i:
                            yield Move.column_move(i, k, j)
            if empties and k < n:
                for j in empties:
                    yield Move.column_move(i, k, j)
    if position.stock_pos < len(position.stock) and v.may_deal(position):
        yield _DEAL


def is_legal(v: Variant, position: Position, move: Move) -> bool:
    """Whether ``move`` is legal here (a move onto a view's unknown card included)."""
    if move.kind == "deal":
        return position.stock_pos < len(position.stock) and v.may_deal(position)
    if move.kind != "move":
        return v.has_extra_moves and v.check_extra(position, move) is None
    cols = position.cols
    src, count, dst = move.src, move.count, move.dst
    ncols = len(cols)
    if not (0 <= src < ncols and 0 <= dst < ncols):
        return v.has_extra_moves and v.check_extra(position, move) is None
    if src == dst:
        return False
    col = cols[src]
    n = len(col)
    if count < 1 or count > v.movable(col, n - position.down[src]):
        return False
    target = cols[dst]
    if not target:
        legal = count < n
    else:
        legal = v.key[target[-1]] in v.want[col[n - count]]
    if legal and v.filters_moves:
        return v.move_refused(position, src, count, dst) is None
    return legal


def explain_illegal(v: Variant, position: Position, move: Move) -> str:
    """Why ``move`` is not legal here, in one line."""
    if move.kind == "deal":
        if not position.stock_left():
            return "the stock is empty"
        return "the stock may not deal while a column is empty"
    cols = position.cols
    src, count, dst = move.src, move.count, move.dst
    if v.has_extra_moves and (
        move.kind != "move" or not (0 <= src < len(cols) and 0 <= dst < len(cols))
    ):
        return v.check_extra(position, move) or f"{move.text()} is legal"
    if move.kind != "move":
        return f"{move.text()}: this variant has no such move"
    for c in (src, dst):
        if not 0 <= c < len(cols):
            return (
                f"there is no column {column_letter(c)} (columns a-{column_letter(len(cols) - 1)})"
            )
    if src == dst:
        return "a move goes to another column"
    col = cols[src]
    run = v.movable(col, len(col) - position.down[src])
    if not col:
        return f"column {column_letter(src)} is empty"
    if count > run:
        return f"column {column_letter(src)} has a movable run of {run}, not {count}"
    if count < 1:
        return "a move takes at least one card"
    target = cols[dst]
    if not target:
        if count >= len(col):
            return (
                f"{move.text()} would move all of column {column_letter(src)} into an empty column"
            )
    elif v.key[target[-1]] not in v.want[col[-count]]:
        return (
            f"{v.cards.tokens[col[-count]]} does not go onto {v.cards.tokens[target[-1]]}"
            f" in column {column_letter(dst)}"
        )
    if v.filters_moves:
        reason = v.move_refused(position, src, count, dst)
        if reason is not None:
            return reason
    return f"{move.text()} is legal"
