"""One beam search of the solver (:mod:`.solver`): the positions' keys, the evaluation,
the pruning, and the search itself, a layer at a time.

A column move of a plain variant (no extra moves, no move filter, no settle step) changes
its two columns only: a child's key and its columns' score are its parent's with those two
replaced, and a move that neither turns a card up nor completes a set is not even played
on the board.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from .board import Board
from .moves import Move
from .variants import Variant

__all__ = ["BeamSearch", "Solution", "Weights", "WON", "LOST", "UNKNOWN_VERDICT"]

WON, LOST, UNKNOWN_VERDICT = "won", "lost", "unknown"

_State = tuple[tuple[tuple[int, ...], ...], tuple[int, ...], int, tuple[int, ...]]
_Candidate = tuple[int, int, object, _State, tuple[str, ...], object, Move, int]
"""Score, order of generation (the earlier wins a tie), key, position, foundation, the
parent's key, the move from the parent and the columns' scores summed."""

CACHE_LIMIT = 2_000_000
"""How many columns (and column scores, and whether a column ends in a set) a search keeps
before it clears those caches."""


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


class BeamSearch:
    """One beam search of a full position (:meth:`run`), with the caches it shares between
    its layers."""

    def __init__(
        self,
        board: Board,
        weights: Weights,
        *,
        prune: bool,
        progress: Callable[[int], None] | None = None,
        counted: int = 0,
        progress_every: int = 10_000,
    ) -> None:
        self.progress = progress
        self.counted = counted
        self.progress_every = max(1, progress_every)
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
        self.completed = self.variant.completed
        """The variant's hook, looked up once (it is asked about nearly every child, through
        :meth:`_completes`), as are the tables and the hook the pruning reads for every
        move."""
        self.sets_at_end: dict[tuple[tuple[int, ...], int], bool] = {}
        self.next = self.variant.next
        self.movable = self.variant.movable
        self.keep = self.variant.keep
        self.two_columns = self.variant.plain
        """Whether column moves take the short way (:meth:`_play`): a plain variant's do.
        Without it every move is pushed and the whole key built again, with the same
        results."""
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

    def _columns_score(self, state: _State) -> int:
        """The sum of the columns' scores (each kept in a cache)."""
        cache = self.column_scores
        total = 0
        for k in zip(state[0], state[1], strict=True):
            s = cache.get(k)
            if s is None:
                s = cache[k] = self._column_score(*k)
            total += s
        return total

    def _score(self, state: _State, gone: int, columns: int | None = None) -> int:
        """``gone``: how many sets are in the foundation; ``columns``: the columns' scores
        summed, when known (:meth:`_columns_score`)."""
        cols, down, pos, extra = state
        if columns is None:
            columns = self._columns_score(state)
        w = self.weights
        score = columns + w.run_gone * gone + w.dealt * (pos - self.start_stock) // self.deal_size
        if pos < len(self.work.stock) and self.fill_to_deal and not any(down):
            # nothing left to turn up: the next progress is a deal, which needs every
            # column filled
            score -= cols.count(()) * (w.empty + w.fill)
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
            nxt = self.next
            if i <= work.down[move.src] or nxt[col[i - 1]] != col[i]:
                return False
            joins = bool(dest) and nxt[dest[-1]] == col[i]
        else:
            movable = self.movable
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

    def _play(self, state: _State, move: Move) -> tuple[_State, bool]:
        """The child of ``state`` (the position loaded) by ``move``, a column move of a
        plain variant, and whether the move was pushed on the board (pop it then): it is
        not when it turns no card up and completes no set (nor, with ``keep``, may lay a
        complete set at a column's end), since it then only moves cards between its two
        columns."""
        cols, down, pos, extra = state
        src, dst = move.src, move.dst
        col = cols[src]
        left = len(col) - move.count
        intern = self.columns
        kept = col[:left]
        kept = intern.setdefault(kept, kept)
        joined = cols[dst] + col[left:]
        joined = intern.setdefault(joined, joined)
        up = left - down[src]
        played = (
            self.keep
            or (left and (not up or self._completes(kept, up)))
            or self._completes(joined, len(joined) - down[dst])
        )
        new_down = down
        if played:
            work = self.work
            work.push_unchecked(move)
            kept, joined = tuple(work.cols[src]), tuple(work.cols[dst])
            kept = intern.setdefault(kept, kept)
            joined = intern.setdefault(joined, joined)
            now = work.down
            if now[src] != down[src] or now[dst] != down[dst]:
                new_down = tuple(now)
                new_down = intern.setdefault(new_down, new_down)
        changed = list(cols)
        changed[src] = kept
        changed[dst] = joined
        return (tuple(changed), new_down, pos, extra), bool(played)

    def _completes(self, col: tuple[int, ...], up: int) -> bool:
        """Whether the variant's ``completed`` hook finds a set at the end of ``col`` (an
        interned column, with ``up`` face-up cards), remembered per column: the hook
        depends on its arguments alone, and a dictionary look-up costs less than a call
        into a variant's code."""
        key = (col, up)
        known = self.sets_at_end.get(key)
        if known is None:
            known = self.sets_at_end[key] = self.completed(col, up) is not None
        return known

    def _columns_after(self, total: int, state: _State, child: _State, move: Move) -> int:
        """The columns' scores of ``child`` summed, from ``total``, those of ``state``, its
        parent by ``move``, which changed only the move's two columns."""
        cache = self.column_scores
        for i in (move.src, move.dst):
            k = state[0][i], state[1][i]
            v = cache.get(k)
            total -= self._column_score(*k) if v is None else v
            k = child[0][i], child[1][i]
            v = cache.get(k)
            if v is None:
                v = cache[k] = self._column_score(*k)
            total += v
        return total

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
        layer: list[tuple[object, _State, tuple[str, ...], int]] = [
            (root_canon, root, tuple(work.foundation), self._columns_score(root))
        ]
        positions = 0
        complete = True
        stock_size = len(work.stock)
        pruning = self.prune
        foundations: dict[tuple[str, ...], tuple[str, ...]] = {}
        two_columns = self.two_columns
        # the search's own methods are called as methods (compiled, a direct call; a bound
        # method in a local would be a generic call with its arguments boxed), but the
        # move generator is looked up by name, as plain Python does, also when this module is compiled (where
        # a method call would bypass whatever the board's class holds under that name now)
        generate_moves: Callable[[], Iterator[Move]] = getattr(work, "generate_moves")  # noqa: B009
        # a beam (with a width) that finds no better position for this many layers gives up
        patience = None if exact else self.variant.solver_patience
        # a beam that stalls this long with the stock not empty deals (the variant's word)
        deal_after = None if exact else self.variant.solver_deal_after
        every = self.progress_every
        best, stalled = self._score(root, len(work.foundation)), 0
        while layer:
            candidates: list[_Candidate] = []
            for canon, state, foundation, total in layer:
                if positions >= budget:
                    return Solution(UNKNOWN_VERDICT, positions), False
                self._load(state, foundation)
                positions += 1
                if self.progress is not None and positions % every == 0:
                    self.progress(self.counted + positions)
                for move in list(generate_moves()):
                    if pruning and self._pruned(move):
                        complete = False
                        continue
                    two = two_columns and move.kind == "move"
                    if two:
                        child, played = self._play(state, move)
                    else:
                        work.push_unchecked(move)
                        child, played = self._state(), True
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
                        if played and work.stock_pos == stock_size and work.is_won():
                            line = (*_line(parents, canon), move)
                            return Solution(WON, positions, line), True
                        found = foundation
                        if played:
                            found = tuple(work.foundation)
                            found = foundations.setdefault(found, found)
                        if two:
                            columns = self._columns_after(total, state, child, move)
                        else:
                            columns = self._columns_score(child)
                        score = self._score(child, len(found), columns)
                        candidates.append(
                            (
                                score,
                                -len(candidates),
                                child_canon,
                                child,
                                found,
                                canon,
                                move,
                                columns,
                            )
                        )
                    if played:
                        work.pop()
            if deal_after is not None and stalled >= deal_after:
                deals = [c for c in candidates if c[6].kind == "deal"]
                if deals:  # the positions after a deal rank below the stalled ones: take them
                    complete = False
                    candidates = heapq.nlargest(width or len(deals), deals)
                    best, stalled = candidates[0][0], 0
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
                for _, _, c, _, _, parent, move, _ in candidates:
                    parents[c] = (parent, move)
            layer = [(c, st, f, cs) for _, _, c, st, f, _, _, cs in candidates]
            self._trim_caches()
        return Solution(LOST if complete else UNKNOWN_VERDICT, positions), complete

    def _trim_caches(self) -> None:
        """Forget the shared columns and the columns' scores when they grow large (they
        are caches: only memory and time depend on them)."""
        if len(self.column_scores) > CACHE_LIMIT:
            self.column_scores.clear()
        if len(self.columns) > CACHE_LIMIT:
            self.columns.clear()
        if len(self.sets_at_end) > CACHE_LIMIT:
            self.sets_at_end.clear()


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
