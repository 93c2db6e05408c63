"""A full-knowledge solver: best-first search with a transposition table.

The solver may look at every card (it needs a full position, not a view). It searches
positions in the order of an evaluation that players would recognise — sets gone, cards
turned up, cards lying in suit, empty columns — and never expands a position twice:
positions are keyed on the tableau, the stock and a variant's extra fields (the foundation
follows from them, and once the stock is empty the order of the columns cannot matter,
unless the variant says otherwise). The foundation is carried along with each position,
since a variant's rules may read it (Wizard's Tower: which trump leaves next).

Budget: a position *counts* when its moves are generated; :attr:`Solution.positions` is
that count, and it never exceeds the budget.

The search is a series of beam searches run in turn while the budget lasts
(:data:`.beams.BEAMS`): each layer keeps the best positions one move deeper, never one seen
before. Narrow beams of the variant's own evaluation come first, widths growing; then beams
of moderate widths that judge positions a little differently (sets in suit worth more,
blocked cards worse, empty columns worth more, and so on), which keep other positions and
win other deals, each at a fraction of a wider beam's cost; then wider beams of the own
evaluation. Moves that split a suited run, other than onto another suited parent, are
pruned. One beam is :class:`~.search.BeamSearch` (:mod:`.search`).

The solver names no variant. What a deck adds to Spider it learns from the variant's
hooks, whose defaults are Spider's: whether runs are chains of pairs
(``Variant.runs_by_next``; otherwise columns are judged by ``movable``), whether the
columns' order matters once the stock is empty (``columns_alike``), the evaluation's
weights (``solver_weights``) and a bonus for progress it would miss (``solver_bonus`` for
the whole position: sets that leave from column ends; ``solver_column_bonus`` for what one
column holds, kept with the column's score: Jokers to bring back, buried blockers), how long a beam may go on without
finding a better position (``solver_patience``) and before it keeps only the positions
after a deal (``solver_deal_after``), and which extra moves its pruned searches leave out
(``solver_skips``).

Verdicts:

- ``won`` — with the winning line, which wins when replayed from the position;
- ``lost`` — every reachable position was expanded without a win: a beam dropped nothing and
  a last complete search without any pruning (only transpositions are skipped, which never
  loses a win) found none;
- ``unknown`` — the budget ran out first.

Hints (:func:`hint`, :func:`suggest` with the verdict) are the first move of the line
:func:`solve` finds within the hint's budget, else the move players would rank first
(:func:`rank_moves`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .beams import schedule
from .board import Board
from .errors import PositionError
from .moves import Move
from .search import LOST, UNKNOWN_VERDICT, WON, BeamSearch, Solution, Weights

__all__ = [
    "LOST",
    "UNKNOWN_VERDICT",
    "WON",
    "Solution",
    "Suggestion",
    "Weights",
    "hint",
    "rank_moves",
    "solve",
    "suggest",
]


def solve(
    board: Board,
    *,
    budget: int = 1_000_000,
    weights: Weights | None = None,
    progress: Callable[[int], None] | None = None,
    progress_every: int = 10_000,
) -> Solution:
    """Search ``board`` (a full position) for a win within ``budget`` positions.

    ``progress``, when given, is called with the positions counted so far every
    ``progress_every`` positions of each beam (it may raise to stop the search). The
    search is deterministic and a budget only cuts it short: once ``progress`` was called
    with a count above ``b`` and the search goes on, a search of budget ``b`` would have
    ended without a win."""
    if board.is_view():
        raise PositionError("the solver needs a full position: this view hides cards")
    if board.is_won():
        return Solution(WON, 0)
    w = weights or Weights(**board.variant.solver_weights)
    used = 0
    for width, evaluation in schedule(w, hidden=any(board.down)):
        search = BeamSearch(
            board,
            evaluation,
            prune=True,
            progress=progress,
            counted=used,
            progress_every=progress_every,
        )
        solution, complete = search.run(budget - used, width)
        used += solution.positions
        if solution.verdict == WON:
            return Solution(WON, used, solution.line)
        if used >= budget:
            return Solution(UNKNOWN_VERDICT, used)
        if width is None or complete:
            break
    # The beam ran out of positions to expand without dropping any: only the pruning can
    # have hidden a win. A complete search without it decides.
    last = BeamSearch(
        board, w, prune=False, progress=progress, counted=used, progress_every=progress_every
    )
    solution, _ = last.run(budget - used, None)
    return Solution(solution.verdict, used + solution.positions, solution.line)


# -- the players' ranking, and hints --------------------------------------------------------


def rank_moves(board: Board) -> list[Move]:
    """The legal moves, best first, ranked the way players rank them: a move that finishes
    a run, then one that turns up a face-down card or empties a column, then one onto its
    own suit, then any other move, and a deal last. Works on views."""
    ranked = [(_player_rank(board, m), m.text(), m) for m in board.generate_moves()]
    ranked.sort(key=lambda r: (r[0], r[1]))
    return [m for _, _, m in ranked]


def _player_rank(board: Board, move: Move) -> int:
    if move.kind == "deal":
        return 9
    if move.kind != "move" or max(move.src, move.dst) >= len(board.cols):
        return 5  # a variant's own move, or one to or from a place beyond the columns
    v = board.variant
    col = board.cols[move.src]
    dest = board.cols[move.dst]
    n = len(col)
    top = col[n - move.count]
    if dest:
        # finishes a run: the moved cards plus the destination's run make a whole set
        run = v.movable(dest, len(dest) - board.down[move.dst])
        joined = dest[len(dest) - run :] + col[n - move.count :]
        size = getattr(v, "run_length", 0)
        if size and len(joined) >= size and v.movable(joined, len(joined)) >= size:
            return 0
    leaves_src = n - move.count
    if leaves_src and leaves_src == board.down[move.src]:
        return 1  # turns up a card
    if leaves_src == 0 and dest:
        return 1  # empties a column
    if dest and v.next[dest[-1]] == top:
        return 2  # onto its own suit
    if not dest:
        return 6  # into an empty column
    return 4


@dataclass(frozen=True)
class Suggestion:
    """A hint and where it came from: ``verdict`` is the solver's on the full position
    (``won``: ``move`` is the first move of its winning line; ``lost``: no line wins, the
    move is the players' first; ``unknown``: the budget ran out, likewise), or ``""`` when
    only a view was given and nothing was searched; ``positions`` is what the search
    counted. ``move`` is None when there is no legal move."""

    move: Move | None
    verdict: str
    positions: int = 0

    @property
    def won(self) -> bool:
        """Whether the move is the first of a winning line."""
        return self.verdict == WON and self.move is not None


def suggest(board: Board, *, budget: int = 20_000, full: Board | None = None) -> Suggestion:
    """:func:`hint` with its verdict: a search of the full position (``full``, or ``board``
    when it knows every card) within ``budget`` positions; the first move of the winning
    line it finds, otherwise the move players would rank first."""
    position = full if full is not None else board
    if position.is_view():
        ranked = rank_moves(board)
        return Suggestion(ranked[0] if ranked else None, "")
    solution = solve(position, budget=budget)
    if solution.verdict == WON and solution.line:
        return Suggestion(solution.line[0], WON, solution.positions)
    ranked = rank_moves(position)
    return Suggestion(ranked[0] if ranked else None, solution.verdict, solution.positions)


def hint(board: Board, *, budget: int = 20_000, full: Board | None = None) -> Move | None:
    """The best next move: the first move of a winning line found within ``budget``
    positions in the full position (``full``, or ``board`` when it knows every card);
    otherwise the move players would rank first. None when there is no legal move."""
    return suggest(board, budget=budget, full=full).move
