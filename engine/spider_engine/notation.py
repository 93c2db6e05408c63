"""Position notation (rules.md §6): ``<variant> <tableau> <stock> <foundation>``, then the
variant's extra fields, if any (alt-decks.md §0), which its hooks parse and format.

:func:`read_position` reads a text into its variant and its :class:`~.position.Position`,
checking that the text is well formed, fits its variant (columns, cards of its deck, a stock
size its deals can have left) and is settled (no face-down card at a column's end, no
complete set still at an end unless the variant keeps them). :func:`format_texts` writes a
position and its player's view. :meth:`Board.from_text <.board.Board.from_text>` and
:meth:`Board.text <.board.Board.text>` are these two for a board.
"""

from __future__ import annotations

from .cards import UNKNOWN, CardSet, format_cards
from .errors import FitError, NotationError, PositionError, UnsettledError
from .moves import column_letter
from .position import Position
from .variants import Variant, find_variant

__all__ = ["format_texts", "read_position"]

_MEMO_MAX = 20_000
"""Texts a card set remembers at most (then it starts again): a few megabytes."""


def _column_texts(cards: CardSet, col: list[int], down: int) -> tuple[str, str]:
    """A column's text in a position and in a view. The columns of a game change one or
    two at a time, so most were formatted before: their texts are remembered."""
    key = (down, *col)
    memo = cards.memo
    texts = memo.get(key)
    if texts is None:
        tokens = cards.tokens
        up = format_cards(tokens, col[down:])
        if down:
            texts = (f"{format_cards(tokens, col[:down])}|{up}", f"*{down}|{up}")
        else:
            texts = ("|" + up, "|" + up)
        _remember(memo, key, texts)
    return texts


def _stock_text(cards: CardSet, stock: list[int]) -> str:
    """The stock's text in a position (remembered as the columns' are)."""
    key = (-1, *stock)
    memo = cards.memo
    texts = memo.get(key)
    if texts is None:
        text = format_cards(cards.tokens, stock) or "-"
        texts = (text, text)
        _remember(memo, key, texts)
    return texts[0]


def _remember(
    memo: dict[tuple[int, ...], tuple[str, str]], key: tuple[int, ...], texts: tuple[str, str]
) -> None:
    if len(memo) >= _MEMO_MAX:
        memo.clear()
    memo[key] = texts


def format_texts(variant: Variant, position: Position, *, view: bool = True) -> tuple[str, str]:
    """The text of ``position`` (of ``variant``) and, with ``view``, of the player's view of
    it, the face-up cards formatted once for both; without ``view`` the second text is
    empty."""
    cards = variant.cards
    pairs = [
        _column_texts(cards, col, down)
        for col, down in zip(position.cols, position.down, strict=True)
    ]
    stock_left = len(position.stock) - position.stock_pos
    stock = _stock_text(cards, position.stock[position.stock_pos :])
    foundation = "".join(position.foundation) or "-"
    tail = f" {foundation}"
    if variant.extra_fields:
        tail = " ".join([tail, *variant.format_extra(position.extra)])
    text = f"{variant.id} {'/'.join([p[0] for p in pairs])} {stock}{tail}"
    if not view:
        return text, ""
    shown_stock = f"*{stock_left}" if stock_left else "-"
    return text, f"{variant.id} {'/'.join([p[1] for p in pairs])} {shown_stock}{tail}"


def read_position(text: str) -> tuple[Variant, Position]:
    """The variant and the position that ``text`` writes; raises a
    :class:`~.errors.NotationError` subclass for text that is malformed, does not fit its
    variant or is not settled."""
    if not isinstance(text, str):
        raise PositionError(f"a position is text, not {type(text).__name__}")
    fields = text.split(" ")
    if len(fields) < 1 or not fields[0]:
        raise PositionError("empty position")
    variant = find_variant(fields[0])
    names = ("variant", "tableau", "stock", "foundation", *variant.extra_fields)
    if len(fields) != len(names):
        raise PositionError(
            f"a position of {variant.id} has {len(names)} fields separated by single spaces"
            f" ({', '.join(names)}); got {len(fields)}"
        )
    _, tableau, stock_text, foundation_text = fields[:4]
    cards = variant.cards
    column_texts = tableau.split("/")
    if len(column_texts) != variant.columns:
        raise FitError(
            f"{variant.id} has {variant.columns} columns; the tableau has {len(column_texts)}"
        )
    cols: list[list[int]] = []
    down: list[int] = []
    for i, column_text in enumerate(column_texts):
        name = f"column {column_letter(i)}"
        if column_text.count("|") != 1:
            raise PositionError(f"{name} {column_text!r} needs exactly one '|'")
        hidden_text, shown_text = column_text.split("|")
        hidden = _cards(cards.parse, hidden_text, name)
        shown = _cards(cards.parse, shown_text, name)
        if UNKNOWN in shown:
            raise PositionError(f"{name}: a face-up card must be known")
        if hidden and variant.open:
            raise FitError(f"{name}: {variant.id} deals every tableau card face up")
        cols.append(hidden + shown)
        down.append(len(hidden))
    stock = [] if stock_text == "-" else _cards(cards.parse, stock_text, "the stock")
    if stock_text != "-" and not stock:
        raise PositionError("an empty stock is written '-'")
    if len(stock) not in variant.deal_at:
        sizes = ", ".join(str(s) for s in sorted(variant.deal_at))
        raise FitError(f"{variant.id}'s stock holds {sizes} cards between deals, not {len(stock)}")
    foundation: list[str] = []
    if foundation_text != "-":
        allowed = variant.foundation_tokens()
        for token in foundation_text:
            if token not in allowed:
                raise FitError(f"{token!r} is not a foundation token of {variant.id}")
            foundation.append(token)
    extra = variant.parse_extra(fields[4:]) if variant.extra_fields else variant.initial_extra()
    position = Position(cols, down, stock, foundation, extra=extra)
    _check_settled(variant, position)
    return variant, position


def _cards(parse: object, text: str, what: str) -> list[int]:
    assert callable(parse)
    try:
        result = parse(text, what=what)
    except FitError:
        raise
    except NotationError as exc:
        if "no card" in str(exc):
            raise FitError(f"{what}: {exc}") from None
        raise PositionError(str(exc)) from None
    return list(result)


def _check_settled(v: Variant, position: Position) -> None:
    for i, (col, down) in enumerate(zip(position.cols, position.down, strict=True)):
        if col and down == len(col):
            raise UnsettledError(
                f"column {column_letter(i)} ends in a face-down card (it turns up at once)"
            )
        if col and not v.keep and v.completed(col, len(col) - down):
            raise UnsettledError(
                f"column {column_letter(i)} ends in a complete run (it leaves at once)"
            )
    reason = v.unsettled(position)
    if reason is not None:
        raise UnsettledError(reason)
