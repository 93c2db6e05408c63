"""Par: the shortest winning line found within a budget, with full knowledge.

:func:`par` starts from the solver's line (:func:`spider_engine.solver.solve`) and shortens
it, round after round, while a round gains and the budget lasts:

- **cycles**: a position that comes back along the line cuts the loop;
- **needless moves**: a move is left out, or another put in its place, when the rest of
  the line, each column move taken as the same cards moved to the same column, then wins
  or comes back to the line in fewer moves;
- **detours**: from each position of the line a short search (every line of
  :data:`DETOUR_DEPTHS` moves at most) looks for a later position of the line, or a win,
  reached in fewer moves than the line takes;
- **fresh searches**: the solver searches again from positions along the line (with the
  evaluation's weights varied from round to round) and a shorter way to a win replaces the
  rest of the line.

Every change is kept only when the new line is known to win: it reaches a position of the
line (from which the line wins), or a won position. The par line is never longer than
the solver's first line.

Budget: counted in positions, like the solver's. The solver's searches count as they do
(a position counts when its moves are generated); par's own detour searches count a
position when they generate its moves, and its replays count each position they reach.
:attr:`ParResult.positions` is the total and never exceeds the budget.

Verdicts are the solver's: a deal it does not settle within the budget (``unknown``) or
proves lost (``lost``) has no par.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

# the package's public names only (its modules' layout is not part of them)
from . import Board, Move, PositionError
from .solver import Weights, solve

__all__ = ["DETOUR_DEPTHS", "ParResult", "par"]

DETOUR_DEPTHS: tuple[int, ...] = (2, 3)
"""How many moves the detour searches look ahead, in turn (one move seldom helps: the
solver's search met every position one move from its own line, and the replays with
another move in a move's place cover the rest)."""

RESOLVE_POINTS = 8
"""How many positions along the line a round of fresh searches starts from."""

WEIGHT_SCALES: tuple[dict[str, float], ...] = (
    {},
    {"empty": 1.5, "suited": 0.7},
    {"face_down": 1.4, "blocked": 1.5},
    {"suited": 1.4, "natural": 0.5},
)
"""The evaluation's weights of the fresh searches, round after round: the variant's own,
then each scaled by these factors (deterministic, so that par is the same on every run)."""

_Key = tuple[object, ...]


@dataclass(frozen=True)
class ParResult:
    """``verdict``: the solver's (``won``, ``lost``, ``unknown``); ``line``: the par line
    (for ``won`` only); ``first_length``: the length of the solver's first line (None
    without a win); ``positions``: the positions counted in all."""

    verdict: str
    positions: int
    line: tuple[Move, ...] = field(default=())
    first_length: int | None = None

    @property
    def length(self) -> int | None:
        """The par: how many moves the par line takes (None without a win)."""
        return len(self.line) if self.verdict == "won" else None

    def texts(self) -> list[str]:
        return [m.text() for m in self.line]


class _Budget:
    def __init__(self, budget: int, progress: Callable[[int], None] | None) -> None:
        self.budget = budget
        self.used = 0
        self.progress = progress
        self._next_report = 10_000

    @property
    def left(self) -> int:
        return self.budget - self.used

    def offset(self) -> Callable[[int], None] | None:
        """A progress callback for a search counting from here."""
        report, used = self.progress, self.used
        if report is None:
            return None
        return lambda n: report(used + n)

    def spend(self, n: int = 1) -> bool:
        """Count ``n`` positions; False (counting nothing) when they are not left."""
        if self.used + n > self.budget:
            return False
        self.used += n
        if self.progress is not None and self.used >= self._next_report:
            self._next_report = (self.used // 10_000 + 1) * 10_000
            self.progress(self.used)
        return True


def _key(board: Board) -> _Key:
    return (
        tuple(map(tuple, board.cols)),
        tuple(board.down),
        board.stock_pos,
        tuple(board.foundation),
        tuple(board.extra),
    )


class _Line:
    """A winning line with the position before each move (``boards[i]``, ``keys[i]``;
    the last is the won position)."""

    def __init__(self, start: Board, moves: Sequence[Move]) -> None:
        self.moves: list[Move] = []
        self.boards: list[Board] = [start.copy()]
        self.keys: list[_Key] = [_key(start)]
        self._index: dict[_Key, int] | None = None
        self._hashed: dict[int, int] | None = None
        self.version = 0
        """Counts the changes (a search need not run again on a line it searched)."""
        self.replace(0, list(moves))

    def index(self) -> dict[_Key, int]:
        """Each position's key with its last place on the line."""
        if self._index is None:
            self._index = {k: j for j, k in enumerate(self.keys)}
        return self._index

    def hashed(self) -> dict[int, int]:
        """:meth:`index` by the keys' hashes (a hit is confirmed on the key itself)."""
        if self._hashed is None:
            self._hashed = {hash(k): j for k, j in self.index().items()}
        return self._hashed

    def replace(self, i: int, moves: list[Move]) -> None:
        """The line from position ``i`` on becomes ``moves`` (known to win from there)."""
        del self.moves[i:], self.boards[i + 1 :], self.keys[i + 1 :]
        self.version += 1
        self._index = self._hashed = None
        board = self.boards[i].copy()
        for m in moves:
            board.push_unchecked(m)
            self.moves.append(m)
            self.boards.append(board.copy())
            self.keys.append(_key(board))

    def __len__(self) -> int:
        return len(self.moves)


class _Shortener:
    """The shortening steps, each changing ``line`` in place and returning whether it
    gained; each stops when ``budget`` runs out."""

    def __init__(self, line: _Line, budget: _Budget, slice_cap: int) -> None:
        self.line = line
        self.budget = budget
        self.slice_cap = slice_cap

    # -- the steps ----------------------------------------------------------------------------

    def cut_cycles(self) -> bool:
        """Cut every loop: from each position, jump to its last recurrence."""
        line = self.line
        gained = False
        i = 0
        while i < len(line):
            j = line.index()[line.keys[i]]
            if j > i:
                line.replace(i, line.moves[j:])
                gained = True
            i += 1
        return gained

    def drop_moves(self) -> bool:
        """Leave out moves one at a time, the later column moves following their cards."""
        line = self.line
        gained = False
        k = 0
        while k < len(line) and self.budget.left > 0:
            new = self._replay_meant(k, k + 1)
            if new is not None and len(new) < len(line) - k:
                line.replace(k, new)
                gained = True
            else:
                k += 1
        return gained

    def replace_moves(self) -> bool:
        """Put another legal move in a move's place, the later column moves following
        their cards: kept when the line gets shorter."""
        line = self.line
        gained = False
        k = 0
        while k < len(line) and self.budget.left > 0:
            here = line.boards[k]
            if not self.budget.spend():
                break
            for m in list(here.generate_moves()):
                if m == line.moves[k]:
                    continue
                board = here.copy()
                board.push_unchecked(m)
                rest = [] if board.is_won() else self._replay_meant(k, k + 1, board)
                if rest is not None and len(rest) + 1 < len(line) - k:
                    line.replace(k, [m, *rest])
                    gained = True
                    break
            else:
                k += 1
        return gained

    def _replay_meant(self, i: int, start: int, board: Board | None = None) -> list[Move] | None:
        """Replay the line's moves from ``start`` on, from position ``i``: a column move
        whose cards now lie in another column moves them from there, and one whose cards
        already lie on its destination is left out. The moves from ``i`` on when they win,
        or reach a later position of the line (then with the line's moves from there);
        else None. Each position reached counts. ``board``, when given, is where the replay
        starts in place of position ``i`` (and is played on)."""
        line = self.line
        board = line.boards[i].copy() if board is None else board
        index = line.index()
        out: list[Move] = []
        ncols = len(board.cols)
        for j in range(start, len(line)):
            m = line.moves[j]
            if m.kind == "move" and 0 <= m.src < ncols and 0 <= m.dst < ncols:
                cards = line.boards[j].cols[m.src][-m.count :]
                moved, already = _follow(board, m, cards)
                if already:
                    continue
                if moved is None:
                    return None
                m = moved
            if not board.is_legal(m) or not self.budget.spend():
                return None
            board.push_unchecked(m)
            out.append(m)
            if board.is_won():
                return out
            back = index.get(_key(board), -1)
            if back > i:
                return out + line.moves[back:]
        return None

    def detours(self, depth: int) -> bool:
        """From each position, every line of ``depth`` moves at most: the one reaching the
        latest position of the line (or a win) with the most moves saved replaces the
        line's way there."""
        line = self.line
        gained = False
        i = 0
        while i < len(line) - 1:
            best = self._search(i, depth)
            if best is None:
                if self.budget.left <= 0:
                    break
                i += 1
                continue
            line.replace(i, best)
            gained = True
            i += 1
        return gained

    def _search(self, i: int, depth: int) -> list[Move] | None:
        line = self.line
        end = len(line)
        hashed = line.hashed()
        board = line.boards[i].copy()
        seen: dict[int, int] = {hash(line.keys[i]): 0}
        best_gain = 0
        best: list[Move] | None = None
        path: list[Move] = []
        budget = self.budget
        skip = _splits_run if board.variant.runs_by_next else None

        def visit(level: int) -> bool:
            nonlocal best_gain, best
            if not budget.spend():
                return False
            saved = end - i - level - 1  # the moves saved by reaching the end from here
            for m in list(board.generate_moves()):
                if skip is not None and level and skip(board, m):
                    continue
                board.push_unchecked(m)
                path.append(m)
                k = _key(board)
                h = hash(k)
                if seen.get(h, depth + 1) > level + 1:
                    seen[h] = level + 1
                    if board.is_won():
                        if saved > best_gain:
                            best_gain, best = saved, list(path)
                    else:
                        j = hashed.get(h, -1)
                        if j - i - level - 1 > best_gain and line.keys[j] == k:
                            best_gain, best = j - i - level - 1, path + line.moves[j:]
                        if level + 1 < depth and not visit(level + 1):
                            path.pop()
                            board.pop()
                            return False
                path.pop()
                board.pop()
            return True

        visit(0)
        return best

    def resolve(self, weights: Weights, points: int) -> bool:
        """Fresh searches from ``points`` positions along the line; a shorter win replaces
        the rest of the line."""
        line = self.line
        gained = False
        for q in range(points, 0, -1):
            i = len(line) * q // (points + 1)
            if i <= 0 or i >= len(line):
                continue
            slice_ = min(self.budget.left // q, self.slice_cap)
            if slice_ <= 0:
                break
            found = solve(
                line.boards[i], budget=slice_, weights=weights, progress=self.budget.offset()
            )
            self.budget.spend(found.positions)
            if found.verdict == "won" and len(found.line) < len(line) - i:
                line.replace(i, list(found.line))
                gained = True
        return gained


def _follow(board: Board, m: Move, cards: list[int]) -> tuple[Move | None, bool]:
    """The move of ``cards`` (a column's end) to ``m``'s destination: ``m`` itself when they
    are still at its source, otherwise from the column whose end they are; with True when
    they already lie on the destination (nothing to move); None when no column ends with
    them."""
    n = len(cards)
    col = board.cols[m.src]
    if len(col) - board.down[m.src] >= n and col[-n:] == cards:
        return m, False
    for c, (other, down) in enumerate(zip(board.cols, board.down, strict=True)):
        if len(other) - down >= n and other[-n:] == cards:
            if c == m.dst:
                return None, True
            return Move.column_move(c, n, m.dst), False
    return None, False


def _splits_run(board: Board, m: Move) -> bool:
    """A column move taking cards off the card they follow in a run, onto anything but
    another card they follow (the solver's pruning: such moves seldom shorten a line)."""
    if m.kind != "move" or max(m.src, m.dst) >= len(board.cols):
        return False
    col = board.cols[m.src]
    i = len(col) - m.count
    nxt = board.variant.next
    if i <= board.down[m.src] or nxt[col[i - 1]] != col[i]:
        return False
    dest = board.cols[m.dst]
    return not dest or nxt[dest[-1]] != col[i]


def _scaled(weights: Weights, scales: dict[str, float]) -> Weights:
    return dataclasses.replace(
        weights, **{name: round(getattr(weights, name) * f) for name, f in scales.items()}
    )


def par(
    board: Board,
    *,
    budget: int = 1_000_000,
    progress: Callable[[int], None] | None = None,
) -> ParResult:
    """The shortest winning line found from ``board`` (a full position) within ``budget``
    positions: the solver's line, shortened (see the module's text). ``progress``, when
    given, is called with the positions counted so far about every 10,000 positions."""
    if board.is_view():
        raise PositionError("par needs a full position: this view hides cards")
    first = solve(board, budget=budget, progress=progress)
    if first.verdict != "won":
        return ParResult(first.verdict, first.positions)
    counter = _Budget(budget, progress)
    counter.used = first.positions
    line = _Line(board, first.line)
    # a fresh search from a position along the line should not need much more than the
    # first one from the deal
    shortener = _Shortener(line, counter, 2 * first.positions + 10_000)
    base = Weights(**board.variant.solver_weights)
    searched: set[tuple[int, int]] = set()  # (depth, line version) of the detour searches
    rounds = 0
    while counter.left > 0 and len(line):
        gained = shortener.cut_cycles()
        while shortener.drop_moves() or shortener.replace_moves():
            gained = True
            shortener.cut_cycles()
        for depth in DETOUR_DEPTHS:
            if counter.left <= 0:
                break
            if (depth, line.version) in searched:
                continue
            searched.add((depth, line.version))
            if shortener.detours(depth):
                gained = True
                while shortener.drop_moves() or shortener.replace_moves():
                    pass
        if counter.left <= 0:
            break
        scales = WEIGHT_SCALES[rounds % len(WEIGHT_SCALES)]
        if shortener.resolve(_scaled(base, scales), RESOLVE_POINTS):
            gained = True
        rounds += 1
        if not gained and rounds >= len(WEIGHT_SCALES):
            break
    return ParResult("won", counter.used, tuple(line.moves), len(first.line))
