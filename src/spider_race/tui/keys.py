"""The race screen's keys for each game, as pure functions of the player's view.

Which kinds of moves a game has beyond column moves (Sparrow's sets, Starfish's Jokers,
Wizard's Tower's reserve) and so which keys it offers; the move a pick of two columns makes
when no count was typed; examples for the move line; the help pane's text.

Keys on the race screen (the board has the focus; ``?`` shows them):

- column letters ``a`` … (to ``j``, ``l`` or ``m``: as many as the game has columns) pick the
  column to move from, then the column to move to; digits typed between the two say how many
  cards (``d`` ``1`` ``j`` is the move ``d1j``); without them the longest run that fits is
  moved;
- Sparrow: ``x`` then four column letters takes a set off (``x`` ``a`` ``d`` ``f`` ``j`` is
  ``xadfj``; the letters in any order);
- Starfish: ``*``, the column, the depth (digits; 2 without them: the card above the end
  card), then the column the replaced card goes to (``*`` ``c`` ``3`` ``f`` is ``*c3f``);
- Wizard's Tower with ``weave``: ``z`` is the reserve, to move from or to (``a`` ``z`` is
  ``a1z``, ``z`` ``c`` is ``z1c``);
- ``+`` deals, ``u`` undoes (when the race allows it), ``r`` marks you ready (or not;
  while the race is open),
  ``escape`` drops a picked column (or a set, or a Joker move);
- ``:`` (or ``tab``) goes to the move line: type a move (``d1j``, ``+``, ``xadfj``,
  ``*c3f``, ``a1z``) or ``undo``, ``resign``, ``ready`` and press enter; ``escape`` goes back
  to the board;
- ``q`` quits, after asking while the player's game goes on (it goes on without them;
  they may come back as the same player); ``ctrl+c`` quits at once.
"""

from __future__ import annotations

from rich.text import Text

from spider_client.protocol import RaceInfo
from spider_engine import Board, EngineError, Move
from spider_engine.moves import column_letter

from .render import RESERVE

__all__ = [
    "fitting_count",
    "has_jokers",
    "has_reserve",
    "has_sets",
    "has_stock",
    "help_text",
    "joker_depth",
    "key_acts",
    "move_examples",
    "place_letter",
    "variant_board",
]


def has_sets(view: Board) -> bool:
    """Whether the game takes sets off with ``x`` (Sparrow)."""
    return view.variant.base == "sparrow"


def has_jokers(view: Board) -> bool:
    """Whether the game has Joker moves ``*`` (Starfish)."""
    return view.variant.base == "starfish"


def has_reserve(view: Board) -> bool:
    """Whether the game has the reserve ``z`` (Wizard's Tower with ``weave``)."""
    return "reserve" in view.variant.extra_fields and bool(view.extra)


def place_letter(column: int) -> str:
    """The letter of a column, or ``z`` for the reserve."""
    return "z" if column == RESERVE else column_letter(column)


def joker_depth(view: Board, source: int, target: int) -> int:
    """The depth of a Joker move from ``source`` to ``target`` when none was typed: the
    shallowest legal one (2, the card above the end card, when none is legal)."""
    for depth in range(2, len(view.cols[source]) + 1):
        if view.is_legal(Move("joker", source, depth, target)):
            return depth
    return 2


def has_stock(view: Board | None) -> bool:
    """Whether the game has a stock to deal (Wizard's Tower has none)."""
    return view is None or bool(view.variant.stock_deals)


def move_examples(view: Board | None) -> list[str]:
    """Examples of the game's kinds of moves, as typed."""
    examples = ["d1j", "+"] if has_stock(view) else ["d1j"]
    if view is not None and has_sets(view):
        examples.append("xadfj")
    if view is not None and has_jokers(view):
        examples.append("*c3f")
    if view is not None and has_reserve(view):
        examples.append("a1z")
    return examples


def help_text(view: Board | None) -> Text:
    """The keys of the race screen, for the game ``view`` is a board of (each line at most
    52 cells: it fits beside a 13-column board in 120 terminal columns)."""
    ncols = len(view.cols) if view is not None else 10
    last = column_letter(ncols - 1)
    rows = [
        (f"a … {last}", "pick the column to move from, then to"),
        ("digits", "typed between: how many cards"),
    ]
    if view is not None and has_sets(view):
        rows.append(("x", "then four columns: take a set off"))
    if view is not None and has_jokers(view):
        rows.append(("*", "column, depth, column: a Joker move"))
    if view is not None and has_reserve(view):
        rows.append(("z", "the reserve, to move from or to"))
    if has_stock(view):
        rows.append(("+", "deal"))
    rows += [
        ("u", "undo (when the race allows it)"),
        ("r", "ready (or not)"),
        (": or tab", f"type a move ({', '.join(move_examples(view))})"),
        ("escape", "drop what is picked"),
        ("?", "hide these keys"),
        ("q", "quit (or ctrl+c)"),
    ]
    out = Text()
    out.append("Keys\n", style="bold underline")
    for key, what in rows:
        out.append(f"{key:>8}  ", style="bold yellow")
        out.append(what + "\n")
    out.rstrip()
    return out


PLAYER_ACTIONS = frozenset({"deal", "undo", "ready", "type_move"})
"""The race screen's actions that only a player's keys have."""


def key_acts(action: str, *, role: str, race: RaceInfo | None, view: Board | None) -> bool:
    """Whether the race screen's key for ``action`` acts (and so shows in the footer): a
    player's keys only for players, and only when they can act: deal in a game with a
    stock, undo in a race that allows it, ready while the race is open (not once it counts
    down: the server takes it no more). Other keys always."""
    if action not in PLAYER_ACTIONS:
        return True
    if role != "player":
        return False
    if action == "deal":
        return has_stock(view)
    if action == "undo":
        return race is None or race.undo
    if action == "ready":  # the server takes ready only while the race is open
        return race is None or race.state == "open"
    return True


def fitting_count(view: Board, source: int, target: int) -> int:
    """The most cards of ``source``'s movable run that may move onto ``target``."""
    col = view.cols[source]
    run = view.variant.movable(col, len(col) - view.down[source])
    for count in range(run, 0, -1):
        if view.is_legal(Move.column_move(source, count, target)):
            return count
    return max(run, 1)


def variant_board(variant: str) -> Board | None:
    """A board of ``variant`` (its seed-0 deal), or None when there is no such variant."""
    try:
        return Board.deal(variant, "0")
    except EngineError:
        return None
