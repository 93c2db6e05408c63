"""A full-knowledge search for a winning line of a seeded deal (test helper).

A test that chose a race's seed knows every card, so it can look for a line of moves that
wins: a depth-first search over the full position that tries the moves a player tries first
and skips the ones that gain nothing (a run moved from one card to another of the same rank),
never enters a position twice, and gives up after ``max_nodes`` positions.
"""

from __future__ import annotations

from collections.abc import Iterator

from spider_engine import Board, Move

__all__ = ["winning_line"]


def _candidates(board: Board) -> list[Move]:
    v = board.variant
    nxt = v.next
    scored: list[tuple[tuple[int, ...], Move]] = []
    for move in board.legal_moves:
        if move.kind == "deal":
            scored.append(((0,), move))
            continue
        col = board.cols[move.src]
        n = len(col)
        up = n - board.down[move.src]
        card = col[n - move.count]
        target = board.cols[move.dst]
        onto = bool(target) and nxt[target[-1]] == card
        lay_on = move.count < up and nxt[col[n - move.count - 1]] == card
        if onto and move.count + v.movable(target, len(target) - board.down[move.dst]) >= 13:
            scored.append(((5,), move))
        elif move.count == up and board.down[move.src]:
            scored.append(((4, onto, -board.down[move.src]), move))
        elif move.count == n and target:
            scored.append(((3, onto), move))
        elif onto and not lay_on:
            scored.append(((2, move.count), move))
        elif not target and not lay_on:
            scored.append(((-1, move.count), move))
    scored.sort(key=lambda item: item[0], reverse=True)
    return [move for _, move in scored]


def winning_line(board: Board, *, max_nodes: int = 100_000) -> list[str] | None:
    """Move texts that win ``board`` (a full position; left as it was), or None when none
    was found within ``max_nodes`` positions."""
    seen: set[tuple[object, ...]] = {board.key()}
    stack: list[Iterator[Move]] = [iter(_candidates(board))]
    line: list[Move] = []
    nodes = 0
    try:
        while stack:
            if board.is_won():
                return [m.text() for m in line]
            move = next(stack[-1], None)
            if move is None:
                stack.pop()
                if line:
                    board.pop()
                    line.pop()
                continue
            board.push(move)
            key = board.key()
            if key in seen or nodes >= max_nodes:
                board.pop()
                if nodes >= max_nodes:
                    return None
                continue
            seen.add(key)
            nodes += 1
            line.append(move)
            stack.append(iter(_candidates(board)))
        return None
    finally:
        for _ in line:
            board.pop()
