"""Variants: small classes of rules hooks and class-level metadata, found by id.

A variant id is a base name with options joined by ``+`` in alphabetical order
(``spider4+open+relaxed``); :func:`find_variant` parses one and returns the (cached)
:class:`Variant` for it.

A new variant is a subclass that sets the metadata (cards, layout, stock deals, options)
and overrides the hooks whose rules differ; the board calls only these hooks:

- :meth:`Variant.canonical_deck` — the deck in canonical order, before the shuffle;
- :meth:`Variant.build_key` / :meth:`Variant.wants` — what a column's end card offers and
  what a moving card needs (a card may go onto an end card when one of its wants is the end
  card's key);
- :meth:`Variant.follows` / :meth:`Variant.movable` — the movable group at a column's end;
- :meth:`Variant.completed` — a set at a column's end that leaves at once;
- :meth:`Variant.is_won`, :meth:`Variant.may_deal` — the end of the game and the stock's rule.

A race's results (rules.md §7a) read a position's progress from
:meth:`Variant.progress`: :meth:`Variant.sets_completed` (by default the foundation's
tokens), :meth:`Variant.cards_turned_up` and the ``suited`` score.

Variants whose rules go beyond Spider's add, through hooks the board calls only when the
variant's class flag says so (so Spider's hot path is untouched):

- extra state kept on the board (``board.extra``, a list of ints) with its own position
  fields after the foundation: :attr:`Variant.extra_fields`, :meth:`Variant.initial_extra`,
  :meth:`Variant.format_extra`, :meth:`Variant.parse_extra`;
- extra moves (``has_extra_moves``): :meth:`Variant.extra_moves` generates them,
  :meth:`Variant.check_extra` says whether one is legal (and why not),
  :meth:`Variant.apply_extra` applies one through the board's undoable edits;
- a move filter (``filters_moves``): :meth:`Variant.move_refused` turns down column moves
  that building alone would allow;
- a settle step (``has_settle_step``): :meth:`Variant.settle_step` applies one rule that acts
  "at once" across the board (beyond rules 3 and 4), :meth:`Variant.unsettled` says why a
  parsed position is not settled by those rules.

The solver (``solver.py``) names no variant; what it needs to know of a deck beyond the
tables above it reads from hooks whose defaults are Spider's (and keep its searches as
they were): :attr:`Variant.runs_by_next` (whether runs are chains of pairs),
:meth:`Variant.columns_alike` (whether the columns' order can matter once the stock is
empty), :attr:`Variant.solver_weights`, :meth:`Variant.solver_bonus` and
:meth:`Variant.solver_column_bonus` (progress the evaluation would miss),
:attr:`Variant.solver_patience` and :meth:`Variant.solver_skips` (extra moves its pruned
searches leave out).

A hook sees the board as a :class:`~.position.Position`: where the cards lie, without the
rules. Every change a hook makes goes through the position's edit methods
(:meth:`Position.take`, :meth:`Position.put`, :meth:`Position.replace`,
:meth:`Position.to_foundation`, :meth:`Position.add_foundation`, :meth:`Position.set_extra`),
which record how to undo it; ``pop`` replays those records backwards, so a variant never
writes undo code.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import ClassVar, TypeVar

from .cards import UNKNOWN, CardSet, standard_cards
from .errors import VariantError
from .moves import Move
from .position import Actions, Position

__all__ = [
    "SpiderFamily",
    "Variant",
    "find_variant",
    "register_variant",
    "variant_ids",
]

_REGISTRY: dict[str, type[Variant]] = {}
_CACHE: dict[str, Variant] = {}

V = TypeVar("V", bound="type[Variant]")


def register_variant(cls: V) -> V:
    """Class decorator: make a variant base findable by :func:`find_variant`."""
    _REGISTRY[cls.base] = cls
    return cls


def find_variant(variant_id: str) -> Variant:
    """The variant for ``variant_id``; :class:`VariantError` when it is unknown or malformed."""
    variant = _CACHE.get(variant_id) if isinstance(variant_id, str) else None
    if variant is not None:
        return variant
    if not isinstance(variant_id, str) or not variant_id:
        raise VariantError(f"a variant id is a non-empty text, not {variant_id!r}")
    base, *options = variant_id.split("+")
    cls = _REGISTRY.get(base)
    if cls is None:
        known = ", ".join(sorted(_REGISTRY))
        raise VariantError(f"unknown variant {base!r} (known: {known})")
    for option in options:
        if option not in cls.options_allowed:
            allowed = ", ".join(sorted(cls.options_allowed)) or "none"
            raise VariantError(
                f"option {option!r} is not an option of {base} (its options: {allowed})"
            )
    if options != sorted(set(options)):
        raise VariantError(
            f"malformed variant id {variant_id!r}: options go once each, in alphabetical order"
        )
    variant = cls(frozenset(options))
    _CACHE[variant_id] = variant
    return variant


def variant_ids(*, with_options: bool = False) -> list[str]:
    """Every registered base, or with ``with_options`` every id with each option set."""
    ids: list[str] = []
    for base, cls in sorted(_REGISTRY.items()):
        if not cls.listed:
            continue
        if not with_options:
            ids.append(base)
            continue
        opts = sorted(cls.options_allowed)
        for mask in range(1 << len(opts)):
            chosen = [o for i, o in enumerate(opts) if mask >> i & 1]
            ids.append("+".join([base, *chosen]))
    return ids


class Variant:
    """The rules of one variant id. Instances are immutable and shared; get them through
    :func:`find_variant`."""

    base: ClassVar[str] = ""
    options_allowed: ClassVar[frozenset[str]] = frozenset()
    cards: ClassVar[CardSet]
    columns: ClassVar[int]
    first_deal: ClassVar[tuple[int, ...]]
    stock_deals: ClassVar[tuple[tuple[int, ...], ...]]
    """Each deal of the stock, in order: the columns it puts a card on, in order."""
    dealt_face_up: ClassVar[bool] = False
    """Whether the whole tableau is dealt face up (without an option that says otherwise)."""
    deals_while_empty: ClassVar[bool] = False
    suited_score: ClassVar[bool] = True
    """Whether the ``suited`` score (rules.md §7) applies."""
    listed: ClassVar[bool] = True
    """Whether :func:`variant_ids` lists it (test-only variants are not)."""
    solver_weights: ClassVar[Mapping[str, int]] = MappingProxyType({})
    """The solver's evaluation weights that differ from its defaults for this variant (by
    the field names of ``solver.Weights``); Spider uses the defaults."""
    solver_deal_after: ClassVar[int | None] = None
    """How many layers one of the solver's beams may go on without finding a better
    position before it keeps only the positions after a deal (when it can deal): for decks
    where a deal costs more in the evaluation than the beam ever wins back by waiting (None:
    the beam deals only when a deal ranks among its best)."""
    solver_patience: ClassVar[int | None] = None
    """How many layers one of the solver's beams may go on without finding a position
    better than any before it, before it gives up for a wider one; None: no limit (a beam
    goes on until it runs out of new positions)."""
    runs_by_next: ClassVar[bool] = True
    """Whether a movable run is a chain of pairs, each card lying on the one card it
    follows (:attr:`next`), as in Spider. The solver judges columns pair by pair when it is
    true, and by :meth:`movable` (slower) when a run depends on more than neighbours."""
    has_extra_moves: bool = False
    """Whether :meth:`extra_moves`, :meth:`check_extra` and :meth:`apply_extra` are used."""
    filters_moves: bool = False
    """Whether :meth:`move_refused` is asked about every column move. These three flags are
    class-level defaults that a variant may set per instance (in ``__init__``, before
    calling ``super().__init__``), when its options decide."""
    has_settle_step: bool = False
    """Whether :meth:`settle_step` runs after rules 3 and 4 whenever the board settles."""
    extra_fields: tuple[str, ...] = ()
    """Names of the position fields after the foundation, one per item of ``board.extra``
    (may depend on the options: set it in ``__init__``)."""

    def __init__(self, options: frozenset[str] = frozenset()) -> None:
        self.options = options
        self.id = "+".join([self.base, *sorted(options)])
        self.open = self._tableau_face_up()
        self.relaxed = self.deals_while_empty or "relaxed" in options
        self.keep = "keep" in options
        n = len(self.cards) + 1
        self.key: tuple[object, ...] = tuple(
            None if c == UNKNOWN else self.build_key(c) for c in range(n)
        )
        self.want: tuple[tuple[object, ...], ...] = tuple(
            () if c == UNKNOWN else self.wants(c) for c in range(n)
        )
        self.next: tuple[int, ...] = tuple(self._next_in_run(c) for c in range(n))
        sizes = [len(d) for d in self.stock_deals]
        # remaining stock size -> index of the next deal
        self.deal_at: dict[int, int] = {sum(sizes[i:]): i for i in range(len(sizes) + 1)}
        self.plain = not (self.has_extra_moves or self.filters_moves or self.has_settle_step)
        """True when the board needs none of the extra hooks (its fast path)."""

    def __repr__(self) -> str:
        return f"find_variant({self.id!r})"

    def _tableau_face_up(self) -> bool:
        """Whether every tableau card is dealt face up with these options."""
        return self.dealt_face_up or "open" in self.options

    # -- the deck ---------------------------------------------------------------------------

    def canonical_deck(self) -> list[int]:
        """The deck, in canonical order, as card ids."""
        raise NotImplementedError

    # -- building and moving ----------------------------------------------------------------

    def build_key(self, card: int) -> object:
        """What a column ending in ``card`` offers to cards moving onto it (None: nothing)."""
        rank = self.cards.rank[card]
        return rank if rank > 1 else None

    def wants(self, card: int) -> tuple[object, ...]:
        """The build keys that ``card`` may go onto."""
        return (self.cards.rank[card] + 1,)

    def follows(self, upper: int, lower: int) -> bool:
        """Whether ``lower``, lying on ``upper``, continues a movable run (same suit, one
        rank lower)."""
        cards = self.cards
        return (
            cards.rank[lower] == cards.rank[upper] - 1 and cards.suits[lower] == cards.suits[upper]
        )

    def _next_in_run(self, card: int) -> int:
        if card == UNKNOWN:
            return -1
        for other in range(1, len(self.cards) + 1):
            if self.follows(card, other):
                return other
        return -1

    def movable(self, column: Sequence[int], up: int) -> int:
        """How many cards at the end of ``column`` (with ``up`` face-up cards) form its
        movable run; any tail of it may move."""
        n = len(column)
        if not up:
            return 0
        nxt = self.next
        k = 1
        while k < up and nxt[column[n - k - 1]] == column[n - k]:
            k += 1
        return k

    # -- what leaves and the end of the game ------------------------------------------------

    def completed(self, column: Sequence[int], up: int) -> tuple[int, str] | None:
        """A complete set at the column's end that leaves at once: its size and its
        foundation token; None when there is none."""
        return None

    def foundation_tokens(self) -> frozenset[str]:
        """The tokens the foundation field may hold."""
        return frozenset()

    def set_count(self) -> int:
        """How many sets leave in a won game (for progress)."""
        return 0

    # -- progress (rules.md §7a) ------------------------------------------------------------

    def sets_completed(self, board: Position) -> int:
        """Sets completed (rules.md §7a): one per token in the foundation, which holds one
        token per set that has left (alt-decks.md §0: a Myrmex group, a Sparrow set, a run
        or each single trump of Wizard's Tower)."""
        return len(board.foundation)

    def cards_turned_up(self, board: Position, down_at_deal: int) -> int:
        """Cards turned up (rules.md §7a): of the ``down_at_deal`` cards that lay face down
        in the tableau at the deal, those face up now or gone to the foundation. No rule
        turns a card face down (only an undo of a turn, which takes its count back), so it
        is ``down_at_deal`` less the cards face down now; 0 when the deal is face up."""
        return down_at_deal - sum(board.down)

    def suited(self, board: Position) -> int:
        """rules.md §7 ``suited``: each face-up card on a face-up card of its suit one rank
        higher, plus 12 for each set in the foundation."""
        nxt = self.next
        score = 12 * len(board.foundation)
        for col, down in zip(board.cols, board.down, strict=True):
            for i in range(down + 1, len(col)):
                if nxt[col[i - 1]] == col[i]:
                    score += 1
        return score

    def progress(self, board: Position, down_at_deal: int) -> tuple[int, int, int]:
        """A position's progress (rules.md §7a), compared as a tuple, larger first: sets
        completed, cards turned up (``down_at_deal`` as in :meth:`cards_turned_up`) and the
        ``suited`` score (0 for a variant without one)."""
        return (
            self.sets_completed(board),
            self.cards_turned_up(board, down_at_deal),
            self.suited(board) if self.suited_score else 0,
        )

    def may_deal(self, board: Position) -> bool:
        """Whether the stock may deal now (rule 5)."""
        return board.stock_left() > 0 and (self.relaxed or all(board.cols))

    def is_won(self, board: Position) -> bool:
        return board.stock_left() == 0 and not any(board.cols)

    # -- extra state --------------------------------------------------------------------------

    def initial_extra(self) -> list[int]:
        """``board.extra`` of a fresh deal, one int per name of :attr:`extra_fields`."""
        return []

    def format_extra(self, extra: Sequence[int]) -> list[str]:
        """The extra position fields (after the foundation) for ``board.extra``."""
        return []

    def parse_extra(self, fields: Sequence[str]) -> list[int]:
        """``board.extra`` from the extra position fields (as many as :attr:`extra_fields`);
        raises :class:`~.errors.PositionError` (or its :class:`~.errors.FitError`) for a bad
        one."""
        return []

    # -- extra moves, move filter, settle step ------------------------------------------------

    def extra_moves(self, board: Position) -> Iterator[Move]:
        """Yield the legal moves beyond column moves and deals (with ``has_extra_moves``)."""
        return iter(())

    def check_extra(self, board: Position, move: Move) -> str | None:
        """None when ``move`` — of a kind other than a column move or a deal, or a column
        move naming a column beyond the tableau — is legal here; otherwise why it is not."""
        return f"{move.text()}: this variant has no such move"

    def apply_extra(self, board: Position, move: Move, actions: Actions) -> Iterable[int]:
        """Apply a legal extra move through the board's edit methods (recording into
        ``actions``); returns the columns it changed, which the board then settles."""
        raise NotImplementedError

    # -- the solver -------------------------------------------------------------------------------

    def columns_alike(self) -> bool:
        """Whether the columns are interchangeable once the stock is empty: no rule then
        depends on a column's place, so positions that differ only in the columns' order
        play alike (the solver keys them as one). By default, true of a variant that needs
        none of the extra hooks."""
        return self.plain

    def solver_bonus(self, cols: Sequence[Sequence[int]], extra: Sequence[int]) -> int:
        """What the solver adds to its evaluation of a position (``cols``: the columns,
        ``extra``: ``board.extra``) for progress its own measures miss, in its units: a set
        gone counts 400, a card on the card it follows 10 (``solver.Weights``). Spider adds
        nothing."""
        return 0

    def solver_column_bonus(self, col: Sequence[int], down: int) -> int:
        """Like :meth:`solver_bonus`, for what one column holds alone (``down`` of its cards
        face down); the solver keeps it with the column's own score, so it is asked once per
        different column rather than once per position. Spider adds nothing."""
        return 0

    def solver_skips(self, board: Position, move: Move) -> bool:
        """Whether the solver's pruned searches skip ``move``, a legal move of a kind other
        than a column move or a deal (or naming a place beyond the tableau), as unlikely to
        help. Only a heuristic: the solver's last, complete search skips nothing."""
        return False

    def move_refused(self, board: Position, src: int, count: int, dst: int) -> str | None:
        """With ``filters_moves``: why the column move (legal by building and run rules) is
        not allowed, or None when it is."""
        return None

    def settle_step(self, board: Position, actions: Actions | None) -> int | None:
        """With ``has_settle_step``: apply one rule that acts at once beyond rules 3 and 4
        (through the board's edit methods) and return the column it changed, which the board
        then settles by rules 3 and 4 before asking again; None when no such rule acts."""
        return None

    def unsettled(self, board: Position) -> str | None:
        """Why a parsed position is not settled by this variant's own at-once rules (the
        board checks rules 3 and 4 itself), or None."""
        return None


class SpiderFamily(Variant):
    """Spider with standard cards: bases differ in suits, copies and layout."""

    options_allowed = frozenset({"keep", "open", "relaxed"})
    suit_order: ClassVar[str] = "shdc"
    copies: ClassVar[int] = 2
    columns: ClassVar[int] = 10
    first_deal: ClassVar[tuple[int, ...]] = (6, 6, 6, 6, 5, 5, 5, 5, 5, 5)
    stock_deals: ClassVar[tuple[tuple[int, ...], ...]] = (tuple(range(10)),) * 5
    run_length: ClassVar[int] = 13

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "cards" not in cls.__dict__:
            cls.cards = standard_cards(cls.suit_order)

    def canonical_deck(self) -> list[int]:
        per_copy = list(range(1, len(self.cards) + 1))
        return per_copy * self.copies

    def completed(self, column: Sequence[int], up: int) -> tuple[int, str] | None:
        size = self.run_length
        if up < size or self.cards.rank[column[-1]] != 1:
            return None
        if self.movable(column, up) < size:
            return None
        return size, self.cards.suits[column[-1]]

    def foundation_tokens(self) -> frozenset[str]:
        return frozenset(self.suit_order)

    def set_count(self) -> int:
        return len(self.canonical_deck()) // self.run_length

    def sets_completed(self, board: Position) -> int:
        """The runs in the foundation; with ``keep``, the complete runs at column ends."""
        if self.keep:
            return len(board.foundation) + self.complete_runs_at_ends(board)
        return len(board.foundation)

    def complete_runs_at_ends(self, board: Position) -> int:
        """With ``keep``: how many columns end in a complete run."""
        count = 0
        for col, down in zip(board.cols, board.down, strict=True):
            if col and self.completed(col, len(col) - down):
                count += 1
        return count

    def is_won(self, board: Position) -> bool:
        if not self.keep:
            return super().is_won(board)
        if board.stock_left():
            return False
        size = self.run_length
        for col, down in zip(board.cols, board.down, strict=True):
            if col and (len(col) != size or down or not self.completed(col, size)):
                return False
        return True


@register_variant
class Spider1(SpiderFamily):
    base = "spider1"
    suit_order = "s"
    copies = 8


@register_variant
class Spider2(SpiderFamily):
    base = "spider2"
    suit_order = "sh"
    copies = 4


@register_variant
class Spider4(SpiderFamily):
    base = "spider4"
    suit_order = "shdc"
    copies = 2


@register_variant
class Spiderette(SpiderFamily):
    base = "spiderette"
    suit_order = "shdc"
    copies = 1
    columns = 7
    first_deal = (1, 2, 3, 4, 5, 6, 7)
    stock_deals = (tuple(range(7)),) * 3 + ((0, 1, 2),)
