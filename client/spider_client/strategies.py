"""The bots' strategies: each a callable from the player's view to a move's text.

- :class:`RandomBot` plays a uniformly random legal move.
- :class:`GreedyBot` ranks the legal moves the way players do, on every variant: each move
  is played on a copy of the view with its face-down cards taken out (:class:`_Probe`) and
  the board compared before and after through the variant's own rules; its docstring gives
  the ranking.
- :class:`CarelessBot` plays as :class:`GreedyBot` does but slips now and then into a
  random move: a strength between the two (the ladder's middle group).

:mod:`spider_client.bots` runs them (``make_bot``, ``play_race``, ``play_game``).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from spider_engine import Board, Move, Variant

__all__ = [
    "RandomBot",
    "GreedyBot",
    "CarelessBot",
    "PATIENCE",
    "LOOK_AHEAD",
    "RANDOM_MAX_MOVES",
    "SLIP",
]

RANDOM_MAX_MOVES = 400
"""A :class:`RandomBot`'s default ``max_moves``: random moves rarely get anywhere after
that many, and a bot that never gives up holds its race until the time limit."""


class RandomBot:
    """Plays a uniformly random legal move (``seed`` makes it repeatable); after
    ``max_moves`` moves it gives up (returns None: its game is resigned)."""

    def __init__(self, seed: int | str | None = None, *, max_moves: int = RANDOM_MAX_MOVES) -> None:
        self.rng = random.Random(seed)
        self.max_moves = max_moves
        self.moves = 0
        """Moves chosen so far."""

    def __call__(self, view: Board) -> str | None:
        if self.moves >= self.max_moves:
            return None
        moves = view.legal_moves.texts()
        if not moves:
            return None
        self.moves += 1
        return self.rng.choice(moves)


# rank classes, best first
_FINISHES_SET = 4
_TURNS_UP_OR_EMPTIES = 3
_BUILDS = 2
_CLEARS = 1
_OTHER = 0
_BREAKS_SET = -1

PATIENCE = 40
"""A :class:`GreedyBot`'s default ``patience``: how many actions it makes without reaching a
new best before it plays only moves whose gain no later move takes back."""

LOOK_AHEAD = 30
"""How many of the moves that gain nothing sure a :class:`GreedyBot` looks one move beyond
(the likeliest by their own rank)."""


class _Stats(NamedTuple):
    """A column's cards, all face up, cut into movable groups from its end."""

    done: int
    """1 when a complete set lies at its end (with ``keep``), else 0."""
    suited: int
    """Cards lying on a card of their movable group."""
    natural: int
    """Groups lying on a card that would take them (one rank higher, say) though they do
    not form one group."""
    groups: int
    """Movable groups: the moves it takes at least to empty the column."""


_EMPTY = _Stats(0, 0, 0, 0)


def _column_stats(variant: Variant, column: list[int]) -> _Stats:
    n = len(column)
    if not n:
        return _EMPTY
    done = 0 if variant.completed(column, n) is None else 1
    key, want, movable = variant.key, variant.want, variant.movable
    suited = natural = groups = 0
    end = n
    cards = column
    while end > 0:
        k = movable(cards, end)
        groups += 1
        suited += k - 1
        end -= k
        cards = column[:end]
        if end:
            upper = key[column[end - 1]]
            if upper is not None and upper in want[column[end]]:
                natural += 1
    return _Stats(done, suited, natural, groups)


class _Gain(NamedTuple):
    """What a move (or two) changes on the board, compared with the view it was chosen on."""

    sets: int
    """Sets gone to the foundation, plus complete sets lying at a column's end (``keep``)."""
    turned: int
    """Columns that turn up a face-down card."""
    emptied: int
    """Columns emptied, minus empty columns filled."""
    suited: int
    """Cards lying on a card of their movable group, gained (negative: a group was split)."""
    natural: int
    """Groups lying on a card that would take them, gained."""
    cleared: int
    """How much nearer to empty the column nearest to it has come (face-down cards and
    movable groups counted)."""
    fewest_down: int
    """Fewest face-down cards left among the columns that turn up a card or empty."""


class _Probe:
    """The player's view with its face-down cards taken out, for playing moves on and
    comparing the board before and after.

    A column whose face-up cards all leave then turns up a card (when it hid some) or
    becomes empty; nothing else a move does needs a card the view does not know, so every
    move of the view (deals apart) can be pushed here and popped again. Only columns that a
    move changed are measured again.
    """

    def __init__(self, view: Board) -> None:
        board = view.copy()
        self.down = tuple(view.down)
        for i, down in enumerate(self.down):
            if down:
                del board.cols[i][:down]
                board.down[i] = 0
        self.board = board
        self.variant = board.variant
        self._stats: dict[tuple[int, ...], _Stats] = {}
        self.before = [list(c) for c in board.cols]
        self.stats = [self._column(c) for c in self.before]
        self.foundation = len(board.foundation)
        self.sets = self.foundation + sum(st.done for st in self.stats)
        self.weights = [down + st.groups for down, st in zip(self.down, self.stats, strict=True)]
        self.order = sorted((w, i) for i, w in enumerate(self.weights) if w)
        self.nearest = self.order[0][0] if self.order else 0

    def _column(self, column: list[int]) -> _Stats:
        cards = tuple(column)
        stats = self._stats.get(cards)
        if stats is None:
            stats = self._stats[cards] = _column_stats(self.variant, column)
        return stats

    def changed(self) -> set[int]:
        """The columns that the moves pushed since the view have changed."""
        return {i for i, col in enumerate(self.board.cols) if col != self.before[i]}

    def key(self) -> tuple[object, ...]:
        """The position as it stands now (with the view's face-down cards)."""
        return (self.board.key(), self.down)

    def gain(self) -> _Gain:
        """What the moves pushed since the view have changed."""
        board = self.board
        sets = len(board.foundation) - self.foundation
        turned = emptied = suited = natural = 0
        fewest = -1
        stats = self.stats
        changed: list[tuple[int, _Stats]] = []
        for i, (col, before) in enumerate(zip(board.cols, self.before, strict=True)):
            if col == before:
                continue
            if not col:
                if self.down[i]:
                    turned += 1
                else:
                    emptied += 1
                if fewest < 0 or self.down[i] < fewest:
                    fewest = self.down[i]
            elif not before:
                emptied -= 1
            now = self._column(col)
            sets += now.done - stats[i].done
            suited += now.suited - stats[i].suited
            natural += now.natural - stats[i].natural
            changed.append((i, now))
        cleared = 0
        if changed and not turned:
            moved = {i for i, _ in changed}
            nearest = next((w for w, i in self.order if i not in moved), 0)
            for i, now in changed:
                weight = self.down[i] + now.groups
                if weight and (not nearest or weight < nearest):
                    nearest = weight
            if nearest:
                cleared = self.nearest - nearest
        return _Gain(sets, turned, emptied, suited, natural, cleared, max(fewest, 0))

    def group_at(self, column: int) -> int:
        """The movable group at the end of ``column`` now (0 for no such column)."""
        cols = self.board.cols
        if not 0 <= column < len(cols):
            return 0
        col = cols[column]
        return self.variant.movable(col, len(col))


def _moved(move: Move) -> int:
    """How many cards a move carries (a column move's count; one for the others)."""
    return move.count if move.kind == "move" else 1


class _Choice(NamedTuple):
    rank: tuple[int, ...]
    gain: _Gain
    move: Move


class GreedyBot:
    """Ranks the legal moves the way players do and plays the best one, on every variant.

    Each move is played on a copy of the view and the board compared before and after
    through the variant's own rules (which card follows which in a movable group, which set
    is complete, what leaves at once), so one ranking serves every deck:

    1. a move that finishes a set: a run that leaves, a set taken off (Sparrow's ``x``), a
       trump gone to Wizard's Tower, or with ``keep`` a complete run laid at a column's end;
    2. a move that turns up a face-down card or empties a column (preferring, among them,
       one that keeps groups together, and the column with fewest face-down cards);
    3. a move that builds: lays a card on one it follows in a movable group, joining more
       cards than it parts;
    4. a move that parts no group and brings the column nearest to empty nearer, or lays a
       group on a card that takes it (one rank higher, say); or a move after which a second
       one gains any of the above (the two counted together), looking one move ahead of
       the :data:`LOOK_AHEAD` likeliest;
    5. otherwise a deal, when the stock may deal;
    6. otherwise another move: when the stock may not deal while a column is empty, one that
       fills a column; else one that splits no group, longest groups first.

    A move of another kind than a column move (a Joker from the Troupe) counts only for the
    first two gains, by itself or with a second move; otherwise it comes after every column
    move. The bot never plays a move back into a position it has seen (it keeps every
    position it was given). Once it has made ``patience`` actions without reaching a new
    best (more sets, fewer face-down cards, a deal, more cards in groups), it plays only
    moves that finish a set, turn up a card or build, deals, and fills the empty columns the
    stock needs filled; with nothing of that left it returns ``None`` (give up). Those
    moves only ever bring the game forward (by deals, sets, cards turned up, columns
    filled, cards in groups, in that order of weight), so every game ends. Ties go to the
    move text that sorts last, or with ``seed`` to a repeatable random choice (bots with
    different seeds then play different games). One instance plays one game.
    """

    def __init__(self, seed: int | str | None = None, *, patience: int = PATIENCE) -> None:
        self.seen: set[tuple[object, ...]] = set()
        self.rng = random.Random(seed) if seed is not None else None
        self.patience = patience
        self.idle = 0
        """Actions since the last new best."""
        self._record: tuple[int, ...] | None = None

    def __call__(self, view: Board) -> str | None:
        probe = _Probe(view)
        self.seen.add(probe.key())
        record = (
            probe.sets,
            -sum(view.down),
            -view.stock_left(),
            sum(st.suited for st in probe.stats),
        )
        if self._record is None or record > self._record:
            self._record, self.idle = record, 0
        else:
            self.idle += 1
        patient = self.idle < self.patience
        gaining: list[_Choice] = []
        others: list[_Choice] = []
        deal = False
        for move in view.legal_moves:
            if move.kind == "deal":
                deal = True
                continue
            choice = self._try(probe, move)
            if choice is None:
                continue
            if choice.rank[0] <= _CLEARS:
                others.append(choice)
            elif patient or self._sure(choice):
                gaining.append(choice)
        if gaining:
            return self._best(gaining).text()
        blocked = not deal and view.stock_left() > 0
        if patient and others:
            after, move = self._least_bad(view, probe, others, blocked)
            if after[0] > _OTHER or not deal:
                return move.text()
        if deal:
            return "+"
        if blocked:  # the stock waits for the empty columns to be filled
            fills = [c for c in others if c.rank[0] == _OTHER and c.gain.emptied < 0]
            if fills:
                return self._best(fills).text()
        return None

    @staticmethod
    def _sure(choice: _Choice) -> bool:
        """Whether the move gains what no later move takes back: a set, a card turned up,
        or cards in their groups (without emptying or filling a column)."""
        rank = choice.rank[0]
        if rank == _TURNS_UP_OR_EMPTIES:
            return choice.gain.turned > 0
        return rank in (_FINISHES_SET, _BUILDS)

    def rank(self, view: Board, move: Move) -> tuple[int, ...]:
        """How good ``move`` (a legal move of ``view``, not a deal) looks by itself: a
        tuple, greater is better; its first item is the move's class (4 finishes a set,
        3 turns up a card or empties a column, 2 builds, 1 brings a column nearer to empty
        or lays a group on a card that takes it, 0 gains nothing, -1 breaks a complete
        set)."""
        probe = _Probe(view)
        probe.board.push_unchecked(move)
        try:
            return self._rank(probe, move, probe.gain())
        finally:
            probe.board.pop()

    def _try(self, probe: _Probe, move: Move) -> _Choice | None:
        """The move's rank and gain, or None when it leads back to a position seen before."""
        probe.board.push_unchecked(move)
        try:
            gain = probe.gain()
            if not gain.turned and probe.key() in self.seen:
                return None
            return _Choice(self._rank(probe, move, gain), gain, move)
        finally:
            probe.board.pop()

    @staticmethod
    def _rank(probe: _Probe, move: Move, gain: _Gain) -> tuple[int, ...]:
        group = probe.group_at(move.dst) if move.kind != "set" else 0
        if gain.sets > 0:
            return (_FINISHES_SET, gain.sets, gain.turned + gain.emptied, gain.suited, group)
        if gain.sets < 0:
            return (_BREAKS_SET, gain.sets, gain.suited)
        if gain.turned > 0 or gain.emptied > 0:
            return (
                _TURNS_UP_OR_EMPTIES,
                gain.turned + gain.emptied,
                gain.suited,
                -gain.fewest_down,
                _moved(move),
            )
        # a move of another kind (a Joker from the Troupe) is spent only on the above
        column_move = move.kind == "move"
        if gain.suited > 0 and column_move:
            return (_BUILDS, gain.suited, gain.cleared, gain.natural, group)
        if (
            (gain.cleared > 0 or gain.natural > 0)
            and gain.suited == 0
            and gain.emptied == 0
            and column_move
        ):
            return (_CLEARS, gain.cleared, gain.natural, group, _moved(move))
        into_empty = 0 <= move.dst < len(probe.before) and not probe.before[move.dst]
        return (
            _OTHER,
            column_move,
            gain.suited,
            gain.natural,
            not into_empty,
            group,
            _moved(move),
        )

    def _tie(self, move: Move) -> object:
        return self.rng.random() if self.rng is not None else move.text()

    def _best(self, choices: list[_Choice]) -> Move:
        return max(choices, key=lambda c: (c.rank, self._tie(c.move))).move

    def _least_bad(
        self, view: Board, probe: _Probe, others: list[_Choice], blocked: bool
    ) -> tuple[tuple[int, ...], Move]:
        """Among moves that gain nothing sure, the best by their own rank or by their rank
        with a second move (looking beyond only the :data:`LOOK_AHEAD` best by their own
        rank; when the stock is ``blocked`` by empty columns, moves that fill one go
        first), with that rank."""

        def own(choice: _Choice) -> tuple[object, ...]:
            return (blocked and choice.gain.emptied < 0, choice.rank)

        others.sort(key=own, reverse=True)
        best: tuple[tuple[int, ...], tuple[object, ...], object, Move] | None = None
        for i, choice in enumerate(others):
            after = choice.rank if choice.rank[0] > _OTHER else (_BREAKS_SET,)
            if choice.rank[0] >= _OTHER and i < LOOK_AHEAD:
                second = self._second(view, probe, choice.move)
                if choice.move.kind == "move" or second[0] >= _TURNS_UP_OR_EMPTIES:
                    after = max(after, second)
            key = (after, own(choice), self._tie(choice.move))
            if best is None or key > best[:3]:
                best = (*key, choice.move)
        assert best is not None
        return best[0], best[3]

    def _second(self, view: Board, probe: _Probe, move: Move) -> tuple[int, ...]:
        """The best rank of ``move`` followed by a second move (the two moves' gains
        counted together), not counting moves back to positions seen before.

        Only second moves that ``move`` made possible or changed are looked at: a column
        move between two columns it left alone gains what it gains now (and nothing here
        gains much now). Deals and Jokers are not looked at either."""
        best: tuple[int, ...] = (_BREAKS_SET,)
        view.push(move)  # gains nothing: turns up no card the view does not know
        probe.board.push_unchecked(move)
        try:
            changed = probe.changed()
            ncols = len(probe.before)
            for second in view.legal_moves:
                kind = second.kind
                if kind == "move":
                    src, dst = second.src, second.dst
                    if src < ncols and dst < ncols and src not in changed and dst not in changed:
                        continue
                elif kind != "set":
                    continue
                probe.board.push_unchecked(second)
                try:
                    gain = probe.gain()
                    rank = self._rank(probe, second, gain)
                    if rank > best and (gain.turned or probe.key() not in self.seen):
                        best = rank
                finally:
                    probe.board.pop()
        finally:
            probe.board.pop()
            view.pop()
        return best


SLIP = 0.5
"""A :class:`CarelessBot`'s default ``slip``: the share of its actions that are random."""


class CarelessBot(GreedyBot):
    """A :class:`GreedyBot` that slips: each action is, with probability ``slip``, a
    uniformly random legal move (a deal included) instead of the greedy choice. It gives
    up when the greedy choice would (returns None), and after ``max_moves`` actions. It
    wins fewer games than a greedy bot and makes more moves in those it wins, and gets far
    further than a random one: a strength between them, as cheap as greedy. ``seed``
    makes its slips (and its ties) repeatable."""

    def __init__(
        self,
        seed: int | str | None = None,
        *,
        slip: float = SLIP,
        max_moves: int = 2000,
        patience: int = PATIENCE,
    ) -> None:
        super().__init__(seed, patience=patience)
        self.slip = slip
        self.max_moves = max_moves
        self.moves = 0
        self.slips = random.Random(seed)

    def __call__(self, view: Board) -> str | None:
        if self.moves >= self.max_moves:
            return None
        self.moves += 1
        if self.slips.random() < self.slip:
            moves = view.legal_moves.texts()
            if moves:
                self.seen.add(_Probe(view).key())
                return self.slips.choice(moves)
        return super().__call__(view)
