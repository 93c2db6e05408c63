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

The search is a beam search run with growing widths (:data:`BEAM_WIDTHS`) while the
budget lasts: each layer keeps the best positions one move deeper, never one seen before.
Moves that split a suited run, other than onto another suited parent, are pruned.

The solver names no variant. What a deck adds to Spider it learns from the variant's
hooks, whose defaults are Spider's: whether runs are chains of pairs
(``Variant.runs_by_next``; otherwise columns are judged by ``movable``), whether the
columns' order matters once the stock is empty (``columns_alike``), the evaluation's
weights (``solver_weights``) and a bonus for progress it would miss (``solver_bonus`` for
the whole position: sets that leave from column ends; ``solver_column_bonus`` for what one
column holds, kept with the column's score: Jokers to bring back, buried blockers), how long a beam may go on without
finding a better position (``solver_patience``), and which extra moves its pruned searches
leave out (``solver_skips``).

Verdicts:

- ``won`` — with the winning line, which wins when replayed from the position;
- ``lost`` — every reachable position was expanded without a win: a beam dropped nothing and
  a last complete search without any pruning (only transpositions are skipped, which never
  loses a win) found none;
- ``unknown`` — the budget ran out first.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

from .board import Board
from .errors import PositionError
from .moves import Move
from .variants import Variant

__all__ = ["Solution", "Weights", "solve", "hint", "rank_moves"]

WON, LOST, UNKNOWN_VERDICT = "won", "lost", "unknown"

BEAM_WIDTHS: tuple[int | None, ...] = (10, 40, 150, 500, 1500, 5000, 15000, 50000, None)
"""Beam searches run with these widths in turn, while the budget lasts."""

_State = tuple[tuple[tuple[int, ...], ...], tuple[int, ...], int, tuple[int, ...]]
_Candidate = tuple[int, int, object, _State, tuple[str, ...], object, Move]
"""Score, order of generation (the earlier wins a tie), key, position, foundation, the
parent's key and the move from the parent."""

CACHE_LIMIT = 2_000_000
"""How many columns (and column scores) a search keeps before it clears those caches."""


@dataclass(frozen=True)
class Weights:
    """The evaluation: higher is better."""

    run_gone: int = 400
    face_down: int = 18
    suited: int = 10
    natural: int = 3
    blocked: int = 6
    empty: int = 20
    dealt: int = 0
    fill: int = 30


@dataclass(frozen=True)
class Solution:
    verdict: str
    positions: int
    line: tuple[Move, ...] = field(default=())

    def texts(self) -> list[str]:
        return [m.text() for m in self.line]


def solve(
    board: Board,
    *,
    budget: int = 1_000_000,
    weights: Weights | None = None,
    progress: Callable[[int], None] | None = None,
) -> Solution:
    """Search ``board`` (a full position) for a win within ``budget`` positions.

    ``progress``, when given, is called with the positions counted so far every
    10,000 positions."""
    if board.is_view():
        raise PositionError("the solver needs a full position: this view hides cards")
    if board.is_won():
        return Solution(WON, 0)
    w = weights or Weights(**board.variant.solver_weights)
    used = 0
    for width in BEAM_WIDTHS:
        search = _Search(board, w, prune=True, progress=progress, counted=used)
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
    last = _Search(board, w, prune=False, progress=progress, counted=used)
    solution, _ = last.run(budget - used, None)
    return Solution(solution.verdict, used + solution.positions, solution.line)


class _Search:
    def __init__(
        self,
        board: Board,
        weights: Weights,
        *,
        prune: bool,
        progress: Callable[[int], None] | None = None,
        counted: int = 0,
    ) -> None:
        self.progress = progress
        self.counted = counted
        self.work = board.copy()
        self.work._stack = []
        self.variant = board.variant
        self.weights = weights
        self.prune = prune
        self.columns: dict[tuple[int, ...], tuple[int, ...]] = {}
        self.column_scores: dict[tuple[tuple[int, ...], int], int] = {}
        self.start_stock = board.stock_pos
        self.fill_to_deal = not self.variant.relaxed
        self.pairwise = self.variant.runs_by_next
        self.alike = self.variant.columns_alike()
        self.extra_pruned = self.variant.solver_skips
        bonus = self.variant.solver_bonus
        self.bonus = None if type(self.variant).solver_bonus is Variant.solver_bonus else bonus
        column_bonus = self.variant.solver_column_bonus
        own = type(self.variant).solver_column_bonus is not Variant.solver_column_bonus
        self.column_bonus = column_bonus if own else None
        self.deal_size = max(1, len(self.variant.stock_deals[0]) if self.variant.stock_deals else 1)

    # -- keys -------------------------------------------------------------------------------

    def _state(self) -> _State:
        intern = self.columns
        work = self.work
        cols = []
        for c in work.cols:
            t = tuple(c)
            cols.append(intern.setdefault(t, t))
        # shared, like the columns: most positions have the same face-down counts
        down = tuple(work.down)
        extra = tuple(work.extra)
        return (
            tuple(cols),
            intern.setdefault(down, down),
            work.stock_pos,
            intern.setdefault(extra, extra),
        )

    def _canonical(self, state: _State) -> object:
        cols, down, pos, extra = state
        if pos < len(self.work.stock) or not self.alike:
            return state
        if extra:
            return tuple(sorted(zip(cols, down, strict=True))), extra
        return tuple(sorted(zip(cols, down, strict=True)))

    def _load(self, state: _State, foundation: tuple[str, ...]) -> None:
        cols, down, pos, extra = state
        work = self.work
        work.cols = [list(c) for c in cols]
        work.down = list(down)
        work.stock_pos = pos
        work.extra = list(extra)
        work.foundation = list(foundation)
        work._stack = []

    # -- evaluation -------------------------------------------------------------------------

    def _column_score(self, col: tuple[int, ...], down: int) -> int:
        if self.column_bonus is not None:
            return self._plain_column_score(col, down) + self.column_bonus(col, down)
        return self._plain_column_score(col, down)

    def _plain_column_score(self, col: tuple[int, ...], down: int) -> int:
        w = self.weights
        if not col:
            return w.empty
        v = self.variant
        nxt, key, want = v.next, v.key, v.want
        score = -w.face_down * down
        if not self.pairwise:
            return score + self._group_score(col, down)
        for i in range(down + 1, len(col)):
            a, b = col[i - 1], col[i]
            if nxt[a] == b:
                score += w.suited
            elif key[a] is not None and key[a] in want[b]:
                score += w.natural
            else:
                score -= w.blocked
        return score

    def _group_score(self, col: tuple[int, ...], down: int) -> int:
        """The face-up cards' score when runs are not chains of pairs: the column cut into
        movable groups from its end, each pair inside a group counting as suited."""
        w = self.weights
        v = self.variant
        key, want, movable = v.key, v.want, v.movable
        score = 0
        end = len(col)
        while end > down:
            k = movable(col[:end], end - down)
            score += w.suited * (k - 1)
            top = end - k
            if top > down:
                a, b = col[top - 1], col[top]
                if key[a] is not None and key[a] in want[b]:
                    score += w.natural
                else:
                    score -= w.blocked
            end = top
        return score

    def _score(self, state: _State, gone: int) -> int:
        """``gone``: how many sets are in the foundation."""
        cols, down, pos, extra = state
        cache = self.column_scores
        score = 0
        empty = 0
        for col, d in zip(cols, down, strict=True):
            k = (col, d)
            s = cache.get(k)
            if s is None:
                s = cache[k] = self._column_score(col, d)
            score += s
            empty += not col
        stock_left = len(self.work.stock) - pos
        w = self.weights
        score += w.run_gone * gone + w.dealt * (pos - self.start_stock) // self.deal_size
        if empty and stock_left and self.fill_to_deal and not any(down):
            # nothing left to turn up: the next progress is a deal, which needs every
            # column filled
            score -= empty * (w.empty + w.fill)
        if self.bonus is not None:
            score += self.bonus(cols, extra)
        return score

    # -- pruning ----------------------------------------------------------------------------

    def _pruned(self, move: Move) -> bool:
        """Moves that split a suited run (the tail lies on its suited parent) other than onto
        another suited parent, or into an empty column (but one card into the leftmost empty
        column when nothing is left to turn up and the stock waits for every column to be
        filled); and the extra moves the variant's :meth:`~.Variant.solver_skips` names.
        Where runs are not chains of pairs, a run is the column's movable group: moving part
        of it splits it, and the tail joins another when it moves on as one group with the
        destination's end card."""
        work = self.work
        if move.kind != "move" or max(move.src, move.dst) >= len(work.cols):
            return move.kind != "deal" and self.extra_pruned(work, move)
        col = work.cols[move.src]
        i = len(col) - move.count
        dest = work.cols[move.dst]
        if self.pairwise:
            nxt = self.variant.next
            if i <= work.down[move.src] or nxt[col[i - 1]] != col[i]:
                return False
            joins = bool(dest) and nxt[dest[-1]] == col[i]
        else:
            movable = self.variant.movable
            if movable(col, len(col) - work.down[move.src]) <= move.count:
                return False
            joins = bool(dest) and movable([dest[-1], *col[i:]], move.count + 1) > move.count
        if not dest:
            # to fill the columns before a deal, one card at a time, leftmost empty first
            if (
                not self.fill_to_deal
                or work.stock_pos == len(work.stock)
                or move.count != 1
                or any(work.down)
            ):
                return True
            return any(not c for c in work.cols[: move.dst])
        return not joins

    # -- search -----------------------------------------------------------------------------

    def run(self, budget: int, width: int | None) -> tuple[Solution, bool]:
        """One beam search of ``width`` (None: no limit, a complete breadth-first search).
        Returns the solution and whether it was complete: no candidate dropped by the beam
        and no move pruned, so that running out of positions proves the position lost."""
        work = self.work
        root = self._state()
        root_canon = self._canonical(root)
        # the positions kept, with the move that reached each from its parent
        parents: dict[object, tuple[object, Move | None]] = {root_canon: (None, None)}
        # a beam also remembers the positions it dropped, by hash only (to save memory; a
        # clash could only make it skip a position, which a beam may do): the complete
        # search, which can prove a loss, keeps every position it meets in ``parents``
        exact = width is None
        seen: set[int] = {hash(root_canon)}
        layer: list[tuple[object, _State, tuple[str, ...]]] = [
            (root_canon, root, tuple(work.foundation))
        ]
        positions = 0
        complete = True
        stock_size = len(work.stock)
        pruning = self.prune
        pruned = self._pruned
        foundations: dict[tuple[str, ...], tuple[str, ...]] = {}
        # a beam (with a width) that finds no better position for this many layers gives up
        patience = None if exact else self.variant.solver_patience
        best, stalled = self._score(root, len(work.foundation)), 0
        while layer:
            candidates: list[_Candidate] = []
            for canon, state, foundation in layer:
                if positions >= budget:
                    return Solution(UNKNOWN_VERDICT, positions), False
                self._load(state, foundation)
                positions += 1
                if self.progress is not None and positions % 10_000 == 0:
                    self.progress(self.counted + positions)
                for move in list(work.generate_moves()):
                    if pruning and pruned(move):
                        complete = False
                        continue
                    work.push_unchecked(move)
                    child = self._state()
                    child_canon = self._canonical(child)
                    if exact:
                        new = child_canon not in parents
                        if new:
                            parents[child_canon] = (canon, move)
                    else:
                        h = hash(child_canon)
                        new = h not in seen
                        if new:
                            seen.add(h)
                    if new:
                        if work.stock_pos == stock_size and work.is_won():
                            line = (*_line(parents, canon), move)
                            return Solution(WON, positions, line), True
                        found = tuple(work.foundation)
                        found = foundations.setdefault(found, found)
                        score = self._score(child, len(found))
                        candidates.append(
                            (score, -len(candidates), child_canon, child, found, canon, move)
                        )
                    work.pop()
            if width is not None and len(candidates) > width:
                complete = False
                candidates = heapq.nlargest(width, candidates)
                if patience is not None:
                    top = candidates[0][0]
                    if top > best:
                        best, stalled = top, 0
                    else:
                        stalled += 1
                        if stalled > patience:
                            return Solution(UNKNOWN_VERDICT, positions), False
            if not exact:
                for _, _, c, _, _, parent, move in candidates:
                    parents[c] = (parent, move)
            layer = [(c, st, f) for _, _, c, st, f, _, _ in candidates]
            self._trim_caches()
        return Solution(LOST if complete else UNKNOWN_VERDICT, positions), complete

    def _trim_caches(self) -> None:
        """Forget the shared columns and the columns' scores when they grow large (they
        are caches: only memory and time depend on them)."""
        if len(self.column_scores) > CACHE_LIMIT:
            self.column_scores.clear()
        if len(self.columns) > CACHE_LIMIT:
            self.columns.clear()


def _line(parents: dict[object, tuple[object, Move | None]], end: object) -> tuple[Move, ...]:
    moves: list[Move] = []
    node: object = end
    while True:
        parent, move = parents[node]
        if move is None:
            break
        moves.append(move)
        node = parent
    moves.reverse()
    return tuple(moves)


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


def hint(board: Board, *, budget: int = 20_000, full: Board | None = None) -> Move | None:
    """The best next move: the first move of a winning line found within ``budget``
    positions in the full position (``full``, or ``board`` when it knows every card);
    otherwise the move players would rank first. None when there is no legal move."""
    position = full if full is not None else board
    if position.is_view():
        ranked = rank_moves(board)
        return ranked[0] if ranked else None
    solution = solve(position, budget=budget)
    if solution.verdict == WON and solution.line:
        return solution.line[0]
    ranked = rank_moves(position)
    return ranked[0] if ranked else None
