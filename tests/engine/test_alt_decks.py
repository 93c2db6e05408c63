"""The Spiders of other decks (alt-decks.md) and the Spider option ``keep``: every line of
alt-vectors.txt, ``blind``, ``keep``, views, notation, variant ids and the command line.

Each game's own rules are tested with positions in ``tests/engine/alt/test_<game>.py``;
random play against a simple reference in ``tests/engine/alt/test_alt_diff.py``; properties
in ``tests/engine/alt/test_alt_properties.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spider_engine import Board, Move, VariantError, find_variant, variant_ids
from spider_race.cli import main

SPEC = Path(__file__).resolve().parents[3] / "shared" / "spec"
if not SPEC.is_dir():  # a checkout with the spec beside it, or the copy kept in docs/
    SPEC = Path(__file__).resolve().parents[2] / "docs" / "spec"

ALT = ["myrmex", "wizard", "sparrow", "starfish"]


def _vectors(name: str) -> list[tuple[str, list[str]]]:
    rows = []
    for line in (SPEC / name).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, rest = line.split(" ", 1)
        rows.append((kind, rest.split(" => ")))
    return rows


VECTORS = _vectors("alt-vectors.txt")


def test_vectors_are_there() -> None:
    assert {kind for kind, _ in VECTORS} == {"deal"}
    assert {parts[0].split(" ")[0].split("+")[0] for _, parts in VECTORS} == set(ALT)


@pytest.mark.parametrize(("kind", "parts"), VECTORS, ids=[p[0] for _, p in VECTORS])
def test_vector(kind: str, parts: list[str]) -> None:
    assert kind == "deal"
    head, expected = parts
    variant, seed = head.split(" ", 1)
    board = Board.deal(variant, seed)
    assert board.text() == expected
    assert Board.from_text(expected).text() == expected
    assert Board.from_text(expected) == board


# -- variant ids -----------------------------------------------------------------------------


def test_variant_ids() -> None:
    ids = variant_ids(with_options=True)
    for variant in ["myrmex+blind", "wizard+blind+weave", "sparrow+blind", "starfish+blind"]:
        assert variant in ids and find_variant(variant).id == variant
    assert set(ALT) <= set(variant_ids())


@pytest.mark.parametrize(
    "variant", ["wizard+weave+blind", "myrmex+weave", "starfish+open", "spider4+blind", "sparrow+keep"]
)
def test_bad_variant_ids(variant: str) -> None:
    with pytest.raises(VariantError):
        find_variant(variant)


# -- blind -----------------------------------------------------------------------------------


@pytest.mark.parametrize("base", ALT)
def test_blind_deals_like_spider(base: str) -> None:
    for seed in ["1", "2", "blind"]:
        up = Board.deal(base, seed)
        blind = Board.deal(base + "+blind", seed)
        assert blind.cols == up.cols and blind.stock == up.stock  # options do not reorder
        assert blind.foundation == up.foundation and blind.extra == up.extra
        assert up.down == [0] * len(up.cols)
        assert blind.down == [len(c) - 1 if c else 0 for c in blind.cols]
        view = blind.view_text()
        for column in view.split(" ")[1].split("/"):
            hidden, shown = column.split("|")
            assert len(shown) > 0 and hidden.startswith("*")
        # only end cards move at first: a column move of one card, or the deal
        assert all(t == "+" or t[1] == "1" for t in blind.legal_moves.texts())


def test_a_face_up_game_has_no_face_down_card() -> None:
    text = Board.deal("myrmex+blind", "1").text().replace("myrmex+blind", "myrmex", 1)
    with pytest.raises(ValueError, match="face up"):
        Board.from_text(text)


# -- views -----------------------------------------------------------------------------------


def test_views_hide_the_stock_and_keep_the_extra_fields() -> None:
    for _, (_head, text) in VECTORS:
        board = Board.from_text(text)
        view = board.view_text()
        fields, view_fields = text.split(" "), view.split(" ")
        assert view_fields[1] == fields[1] or "+blind" in fields[0]
        assert view_fields[3:] == fields[3:]  # foundation, Troupe, reserve
        stock = board.stock_left()
        assert view_fields[2] == (f"*{stock}" if stock else "-")
        assert Board.from_text(view).text() == view
        assert Board.from_text(view).legal_moves.texts() == board.legal_moves.texts()
    assert Board.deal("starfish", "1").view_text().endswith(" *84 - 6")
    assert Board.deal("wizard+weave", "7").view_text().endswith(" - ttt -")
    view = Board.deal("myrmex+blind", "1").view_text()
    assert view.startswith("myrmex+blind *3|6mw/*3|3mw/*3|8ms/*3|9ms/*3|Cy/*3|8wl/*3|9wy/*3|4yk *28 -")


# -- keep (alt-decks.md §5) -----------------------------------------------------------------

RUN = "KsQsJsTs9s8s7s6s5s4s3s2s"


def test_keep_a_completed_run_stays_and_the_classic_score_counts_it() -> None:
    text = f"spider1+keep |{RUN}/|As/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks - -"
    board = Board.from_text(text)
    board.push(Move.from_text("b1a"))
    assert board.text() == f"spider1+keep |{RUN}As/|/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks - -"
    assert board.foundation == [] and board.classic_score(1) == 500 - 1 + 100
    assert not board.is_won()
    plain = Board.from_text(text.replace("+keep", "", 1))
    plain.push(Move.from_text("b1a"))
    assert plain.text() == "spider1 |/|/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks - s"
    assert plain.classic_score(1) == board.classic_score(1)
    board.pop()
    assert board.text() == text


def test_keep_won_when_every_column_is_empty_or_one_complete_run() -> None:
    board = Board.from_text(f"spider1+keep |{RUN}/|As/|{RUN}As/|/|/|/|/|/|/| - -")
    assert not board.is_won()
    board.push(Move.from_text("b1a"))
    assert board.is_won() and not board.is_stuck()  # (tails of the runs could still move)
    assert board.classic_score(1) == 500 - 1 + 200
    # a complete run on other cards, a face-down card, or cards left in the stock: not won
    for text in [
        f"spider1+keep |5s{RUN}As/|/|/|/|/|/|/|/|/| - -",
        f"spider1+keep 5s|{RUN}As/|/|/|/|/|/|/|/|/| - -",
        f"spider1+keep |{RUN}As/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks {'Qs' * 10} -",
    ]:
        board = Board.from_text(text)
        assert not board.is_won()
        assert board.classic_score(0) == 600  # the run lies at a column's end


def test_keep_a_deal_onto_a_kept_run_hides_it_from_the_score() -> None:
    board = Board.from_text(f"spider1+keep |{RUN}As/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks/|Ks {'Qs' * 10} -")
    board.push(Move.deal())
    assert board.text().startswith(f"spider1+keep |{RUN}AsQs/|KsQs/")
    assert board.classic_score(1) == 499


def test_keep_across_spider_bases() -> None:
    for variant in ["spider2+keep", "spider4+keep+open", "spiderette+keep+relaxed"]:
        board = Board.deal(variant, "3")
        plain = Board.deal(variant.replace("keep+", "").replace("+keep", ""), "3")
        assert board.cols == plain.cols and board.down == plain.down


# -- moves and notation ------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["xadfj", "xabcd", "*c3f", "*a12m", "a1z", "z1c"])
def test_alt_move_texts_round_trip(text: str) -> None:
    move = Move.from_text(text)
    assert move.text() == text and eval(repr(move)) == move  # noqa: S307
    assert Move.from_text(text) is move


def test_move_lists_sort_by_code_point() -> None:
    board = Board.from_text("starfish |Ah/|2h/|Kc9d5s4s/|3h/|4h/|Ts/|/|/|/|/|/| - - 6")
    texts = board.legal_moves.texts()
    assert texts == sorted(texts) and texts[0].startswith("*") and "a1b" in texts


def test_card_tokens_of_every_deck_round_trip() -> None:
    for base in ALT:
        cards = find_variant(base).cards
        assert cards.parse("".join(cards.tokens[1:])) == list(range(1, len(cards) + 1))


# -- the command line ----------------------------------------------------------------------------


def test_the_engine_commands_take_the_new_variants(capsys: pytest.CaptureFixture[str]) -> None:
    for _, (head, expected) in VECTORS:
        variant, seed = head.split(" ", 1)
        assert main(["deal", variant, seed]) == 0
        assert capsys.readouterr().out == expected + "\n"
    start = Board.deal("wizard+weave", "7").text()
    assert main(["apply", start, "a1z", "z1b"]) == 0
    board = Board.from_text(start)
    board.push_text("a1z")
    board.push_text("z1b")
    assert capsys.readouterr().out == board.text() + "\n"
    assert main(["moves", board.view_text()]) == 0
    assert capsys.readouterr().out == " ".join(board.legal_moves.texts()) + "\n"
    assert main(["apply", start, "z1b"]) == 2
    assert "reserve is empty" in capsys.readouterr().err
