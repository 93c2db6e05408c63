"""A made-up variant, defined through the variant hooks alone (no edit to the core): it
deals, moves, undoes and scores."""

from __future__ import annotations

from spider_engine import Board, Move, SpiderFamily, find_variant, register_variant


# --- the whole variant: well under 60 lines ------------------------------------------------
@register_variant
class Tri(SpiderFamily):
    """Three suits, 9 columns, 2 copies (78 cards): 40 dealt, 4 deals of 9, 2 cards left
    for a last deal onto the first two columns. Runs of 13 leave as in Spider."""

    base = "tri"
    suit_order = "shd"
    copies = 2
    columns = 9
    first_deal = (5, 5, 5, 5, 4, 4, 4, 4, 4)
    stock_deals = (tuple(range(9)),) * 4 + ((0, 1),)
    listed = False


# -------------------------------------------------------------------------------------------


def test_made_up_variant_deals_moves_undoes_and_scores() -> None:
    variant = find_variant("tri+relaxed")
    assert variant.columns == 9 and len(variant.canonical_deck()) == 78
    board = Board.deal("tri+relaxed", "7")
    text = board.text()
    assert Board.from_text(text).text() == text
    assert text.startswith("tri+relaxed ")
    assert len(text.split(" ")[1].split("/")) == 9
    assert sum(len(c) for c in board.cols) == 40 and board.stock_left() == 38
    tokens = {variant.cards.tokens[c] for col in board.cols for c in col}
    assert {t[-1] for t in tokens} <= {"s", "h", "d"}

    history = [text]
    deals = 0
    for _ in range(120):
        moves = sorted(board.legal_moves)
        if not moves:
            break
        move = moves[len(history) % len(moves)]
        deals += move == Move.deal()
        board.push(move)
        history.append(board.text())
        assert board.suited_score() >= 0
        assert board.classic_score(len(history) - 1) == 500 - (len(history) - 1) + 100 * len(
            board.foundation
        )
    assert deals >= 1, "the stock was never dealt"
    # the last deal of two cards goes onto columns a and b only
    while board.stock_left():
        board.push(Move.deal())
        history.append(board.text())
    assert board.deals_left() == 0
    while len(history) > 1:
        board.pop()
        history.pop()
        assert board.text() == history[-1]
    assert board.text() == text


def test_made_up_variant_last_deal_reaches_two_columns() -> None:
    board = Board.deal("tri+relaxed", "1")
    for _ in range(4):
        board.push(Move.deal())
    assert board.stock_left() == 2 and board.deals_left() == 1
    before = [list(c) for c in board.cols]
    stock = board.stock[board.stock_pos :]
    board.push(Move.deal())
    assert board.stock_left() == 0
    assert board.cols[0] == before[0] + stock[:1]
    assert board.cols[1] == before[1] + stock[1:]
    assert board.cols[2:] == before[2:]
