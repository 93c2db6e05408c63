"""Drawing boards, progress and results as text (no terminal, no server)."""

from __future__ import annotations

import pytest
from rich.cells import cell_len

from spider_client.protocol import PlayerInfo, RaceInfo, Result
from spider_engine import Board, Move
from spider_engine.moves import column_letter
from spider_race.tui.progress import format_clock, progress_bar, render_players, render_results
from spider_race.tui.render import (
    BACK,
    DECK_SUITS,
    RESERVE,
    TRUMP_STYLE,
    board_room,
    board_width,
    card_name,
    card_text,
    cards_as_shown,
    render_board,
)
from spider_race.tui.tiles import tile_boards


def _running_race(variant: str, players: list[PlayerInfo]) -> RaceInfo:
    return RaceInfo(
        code="K7QX2",
        variant=variant,
        state="running",
        version=9,
        creator="p1",
        max_players=8,
        time_limit=1800,
        undo=True,
        live_boards=False,
        countdown=3,
        players=players,
    )


def test_board_shows_backs_suits_in_colour_and_the_stock() -> None:
    view = Board.deal("spider4", "1").view()
    text = render_board(view, selected=3)
    plain = text.plain
    assert plain.splitlines()[0].split() == list("abcdefghij")
    assert plain.count(BACK) == sum(view.down)
    assert "Q♥" in plain and "10♣" in plain  # ten is 10 on the cards (T only in moves)
    assert "T♣" not in plain
    assert "5 deals left" in plain
    styles = {str(span.style) for span in text.spans}
    assert "bold red" in styles  # hearts
    assert "reverse bold yellow" in styles  # the picked column


def test_compact_board_counts_the_backs() -> None:
    view = Board.deal("spider1", "1").view()
    plain = render_board(view, compact=True).plain
    assert "▒×5" in plain and "▒×4" in plain
    assert BACK not in plain


def test_progress_and_results() -> None:
    race = _running_race(
        "spider1",
        [
            PlayerInfo(player="p1", name="ada", status="won", runs=8, moves=130, time=95.0),
            PlayerInfo(player="p2", name="bob", status="playing", runs=2, turned_up=12),
        ],
    )
    plain = render_players(race, sets=8, cards=104, me="p2").plain
    assert "8/8 runs" in plain and "2/8 runs" in plain
    assert "won in 1:35" in plain
    assert "▶ bob" in plain
    results = [
        Result(
            rank=1, player="p1", name="ada", status="won", time=95.0, runs=8, moves=130, score=1170
        )
    ]
    assert "1. ada" in render_results(results).plain
    assert progress_bar(4, 8, width=8).plain == "████░░░░"
    assert format_clock(3725) == "1:02:05" and format_clock(-3) == "0:00"


# -- Spider, exactly as before the other decks --------------------------------------------------

SPIDER4_1 = "\n".join(
    [
        " a   b   c   d   e   f   g   h   i   j  ",
        "▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ",
        "▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ",
        "▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ",
        "▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒ ",
        "▒▒▒ ▒▒▒ ▒▒▒ ▒▒▒  2♣ 10♠  5♦  7♠  A♣  6♦ ",
        " Q♥ 10♣ 10♠  5♠                         ",
        "stock: 5 deals left   foundation: -",
    ]
)


def test_spider_looks_as_it_always_did() -> None:
    view = Board.deal("spider4", "1").view()
    text = render_board(view)
    assert text.plain == SPIDER4_1
    styles = {text.plain[s.start : s.end]: str(s.style) for s in text.spans}
    assert styles[" Q♥"] == "bold red"
    assert styles[" 5♦"] == "bold blue"
    assert styles["10♣"] == "bold green"
    assert styles["10♠"] == "bold white"
    assert styles[BACK] == "blue on grey23"
    # a known face-down card (the full board, after a race) is dimmed on grey
    full = Board.deal("spider4", "1")
    down = card_text(full, full.cols[0][0], face_down=True)
    assert str(down.spans[0].style).startswith("dim bold ") and "on grey23" in str(
        down.spans[0].style
    )


# -- the other decks --------------------------------------------------------------------------

VARIANTS = ["myrmex", "wizard", "wizard+weave", "sparrow", "starfish"]


def all_cards(variant: str) -> tuple[Board, list[int]]:
    board = Board.deal(variant, "1")
    return board, list(range(1, len(board.variant.cards) + 1))


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_card_of_every_deck_is_three_cells(variant: str) -> None:
    board, cards = all_cards(variant)
    faces = [card_text(board, c).plain for c in cards]
    assert all(cell_len(face) == 3 for face in faces)
    assert len(set(faces)) == len(faces)  # no two cards look alike
    assert all(cell_len(card_text(board, c, face_down=True).plain) == 3 for c in cards)


def test_decktet_cards_show_both_suits_each_in_its_colour() -> None:
    board, _ = all_cards("myrmex")
    cards = board.variant.cards
    seven = card_text(board, cards.card("7ml"))
    assert seven.plain == "7☾❦"
    assert [str(s.style) for s in seven.spans] == [
        "bold white",
        DECK_SUITS["myrmex"]["m"][1],
        DECK_SUITS["myrmex"]["l"][1],
    ]
    assert card_text(board, cards.card("Am")).plain == " A☾"
    assert card_text(board, cards.card("Ck")).plain == " ♛⌘"  # a Crown
    assert card_name(board, cards.card("7ml")) == "7 of moons and leaves"
    assert card_name(board, cards.card("Ck")) == "crown of knots"
    # a board of them: every two-suit card face up shows both symbols
    text = render_board(Board.deal("myrmex", "m0").view()).plain
    assert "2☀∿" in text and "6❦⌘" in text and "stock: 4 deals left" in text


def test_tarot_trumps_are_numbers_on_gold_and_suit_cards_have_symbols() -> None:
    board, _ = all_cards("wizard+weave")
    cards = board.variant.cards
    for n in (0, 7, 21):
        face = card_text(board, cards.card(f"{n}t"))
        assert face.plain == str(n).rjust(3)
        assert str(face.spans[0].style) == TRUMP_STYLE
    assert card_text(board, cards.card("Tw")).plain == "10⚚"
    assert card_text(board, cards.card("Pc")).plain == "Pg∪"
    assert card_text(board, cards.card("Nd")).plain == "Kn◉"
    assert card_text(board, cards.card("Ks")).plain == " K⚔"
    assert card_name(board, cards.card("0t")) == "trump 0"
    assert card_name(board, cards.card("Nd")) == "knight of discs"


def test_wizard_shows_the_tower_and_the_reserve() -> None:
    board = Board.deal("wizard+weave", "w0")
    lines = render_board(board.view()).plain.splitlines()
    assert lines[0].split() == [*"abcdefghijklm", "│", "z"]
    assert lines[-2] == "stock: none   foundation: -"
    assert lines[-1] == "tower: 0/22 trumps gone, next  0   reserve z: empty"
    end = board.cols[0][-1]
    board.push(Move.from_text("a1z"))
    text = render_board(board.view(), selected=RESERVE)
    lines = text.plain.splitlines()
    face = card_text(board, end).plain
    assert lines[1].endswith("│ " + face)
    assert lines[-1].endswith("reserve z: " + face)
    assert any(
        text.plain[s.start : s.end] == " z " and "reverse" in str(s.style) for s in text.spans
    )
    # the Tower counts the trumps gone and names the next one
    assert (
        "tower: 3/22 trumps gone, next  3"
        in render_board(
            Board.from_text("wizard " + "/".join(["|Ks"] + ["|"] * 12) + " - ttt"), max_width=120
        ).plain
    )
    # without weave: no reserve
    plain = render_board(Board.deal("wizard", "1").view()).plain
    assert "│" not in plain and "reserve" not in plain


def test_mah_jong_tiles_winds_dragons_flowers_and_seasons() -> None:
    board, _ = all_cards("sparrow")
    cards = board.variant.cards
    faces = {t: card_text(board, cards.card(t)) for t in ("5b", "5c", "5m", "Db", "Dc", "Dm")}
    assert faces["5b"].plain == " 5‖" and faces["5c"].plain == " 5●" and faces["5m"].plain == " 5※"
    assert faces["Db"].plain == " D‖" and faces["Dc"].plain == " D●" and faces["Dm"].plain == " D※"
    suit_style = DECK_SUITS["sparrow"]["b"][1]
    assert str(faces["5b"].spans[0].style) == suit_style
    assert str(faces["Db"].spans[0].style).startswith(suit_style + " on ")  # a Dragon's tile
    winds = [card_text(board, cards.card(w)).plain for w in ("Ew", "Sw", "Ww", "Nw")]
    assert winds == [" E→", " S↓", " W←", " N↑"]
    assert card_text(board, cards.card("3f")).plain == " 3✿"  # a Flower
    assert card_text(board, cards.card("7f")).plain == " 7❄"  # a Season
    assert card_name(board, cards.card("Dc")) == "red dragon"
    assert card_name(board, cards.card("Nw")) == "north wind"
    assert card_name(board, cards.card("7f")) == "season 7"
    # a set of Winds taken off shows in the foundation
    deal = Board.deal("sparrow", "s6")
    deal.push(Move.from_text("xaehj"))
    assert "foundation: ESWN" in render_board(deal.view()).plain


def test_starfish_six_suits_jokers_and_the_troupe() -> None:
    board = Board.deal("starfish", "j0")
    cards = board.variant.cards
    assert card_text(board, cards.card("Qr")).plain == " Q★"
    assert card_text(board, cards.card("Tq")).plain == "10Ψ"
    plain = render_board(board.view()).plain
    assert plain.endswith("troupe: 6 Jokers ☆☆☆☆☆☆")
    board.push(Move.from_text("*a3k"))
    lines = render_board(board.view()).plain.splitlines()
    assert lines[len(board.cols[0]) - 2].startswith("Jk☆")  # the header is line 0
    assert lines[-1] == "troupe: 5 Jokers ☆☆☆☆☆"
    joker = card_text(board, cards.card("@"))
    assert joker.plain == "Jk☆" and card_name(board, cards.card("@")) == "joker"


@pytest.mark.parametrize("variant", ["wizard+weave", "wizard+blind+weave", "sparrow", "starfish"])
def test_twelve_and_thirteen_columns_fit_in_120_cells(variant: str) -> None:
    board = Board.deal(variant, "1")
    for b, compact in ((board.view(), False), (board.view(), True), (board, False)):
        lines = render_board(b, compact=compact, pending="*c12").plain.splitlines()
        letters = [column_letter(i) for i in range(len(b.cols))]
        assert lines[0].split()[: len(b.cols)] == letters
        assert max(cell_len(line) for line in lines) <= 120 and board_width(b) <= 120
        rows = lines[1 : next(i for i, line in enumerate(lines) if line.startswith("stock"))]
        for line in rows:  # every column has its four cells in every row
            assert cell_len(line) >= 4 * len(b.cols)
        # each column's cards are under its letter
        first = rows[0]
        for i, col in enumerate(b.cols):
            if col and not compact:
                face = card_text(b, col[0], face_down=b.down[i] > 0).plain
                assert first[4 * i : 4 * i + 3] == face
    # a narrower limit drops the space between cards: 13 columns and the reserve in 44 cells
    narrow = render_board(Board.deal("wizard+weave", "1").view(), max_width=50).plain
    assert narrow.splitlines()[0].split() == [*"abcdefghijklm", "│", "z"]
    assert max(cell_len(line) for line in narrow.splitlines()[:-2]) == 44


def test_a_player_line_too_wide_for_the_pane_goes_on_two_lines() -> None:
    race = _running_race(
        "wizard+weave", [PlayerInfo(player="p1", name="ada", status="playing", runs=3, moves=12)]
    )
    wide = render_players(race, sets=26, cards=78, me="p1").plain.splitlines()
    assert len(wide) == 1 and "3/26 runs" in wide[0] and "12 moves" in wide[0]
    narrow = render_players(race, sets=26, cards=78, me="p1", width=58).plain.splitlines()
    assert len(narrow) == 2 and max(cell_len(line) for line in narrow) <= 58
    assert narrow[0].endswith("3/26 runs") and narrow[1].startswith(" " * 17 + "0 up")
    assert "12 moves" in narrow[1] and narrow[1].endswith("playing")


# -- words, names, the move being picked, spectators' boards side by side ------------------------


def test_counts_agree_with_their_words() -> None:
    race = _running_race(
        "spider1",
        [
            PlayerInfo(player="p1", name="ada", status="playing", runs=1, moves=1),
            PlayerInfo(player="p2", name="bob", status="playing", runs=2, moves=2),
        ],
    )
    lines = render_players(race, sets=8, cards=104).plain.splitlines()
    assert "   1 move   score" in lines[0] and "   2 moves  score" in lines[1]
    assert "1 moves" not in lines[0]
    results = [
        Result(rank=1, player="p1", name="ada", status="won", time=9.0, runs=1, moves=1, score=9),
        Result(
            rank=2, player="p2", name="bob", status="stuck", time=None, runs=0, moves=3, score=5
        ),
    ]
    plain = render_results(results).plain
    assert "1 run  1 move  score 9" in plain and "0 runs  3 moves  score 5" in plain
    one_deal = Board.from_text("spider1 " + "/".join(["|Ks"] * 10) + " " + "As" * 10 + " -")
    assert "stock: 1 deal left" in render_board(one_deal).plain


def test_names_have_the_room_they_need() -> None:
    long = "Charles greedy"
    longest = "A name of thirty-two characters!"
    race = _running_race(
        "spider1",
        [
            PlayerInfo(player="p1", name=long, status="playing"),
            PlayerInfo(player="p2", name="ada", status="playing"),
        ],
    )
    lines = render_players(race, sets=8, cards=104).plain.splitlines()
    assert lines[0].startswith("  " + long + " ")
    bars = [line.index("░") for line in lines]
    assert bars[0] == bars[1]  # the columns line up
    race.players.append(PlayerInfo(player="p3", name=longest, status="playing"))
    lines = render_players(race, sets=8, cards=104).plain.splitlines()
    assert longest not in lines[2] and longest[:23] + "…" in lines[2]  # elided past 24 cells
    results = [
        Result(rank=1, player="p3", name=longest, status="won", time=9.0, runs=8, moves=9, score=9)
    ]
    assert longest in render_results(results).plain  # whole in the results


def test_the_move_being_picked_has_a_line_of_its_own() -> None:
    view = Board.deal("spider4", "1").view()
    plain = render_board(view).plain
    picked = render_board(view, selected=0, pending="a12").plain
    assert picked.splitlines()[:-1] == plain.splitlines()
    assert picked.splitlines()[-1] == "move: a12▏"
    width = max(cell_len(line) for line in plain.splitlines())
    assert max(cell_len(line) for line in picked.splitlines()) <= width


def test_spectators_boards_go_side_by_side_when_they_fit() -> None:
    names = ["Ada greedy", "Brian random", "Charles greedy"]
    boards = [(n, Board.deal("spider1", str(i)).view()) for i, n in enumerate(names)]
    wide = tile_boards(boards, width=116).plain.splitlines()
    assert all(n in wide[0] for n in names)  # one row: every name on the first line
    assert max(cell_len(line) for line in wide) <= 116
    header = wide[1]
    assert header.count(" a ") == 3  # three boards' column letters on one line
    # two boards keep the space between cards
    two = tile_boards(boards[:2], width=116).plain.splitlines()
    assert all(n in two[0] for n in names[:2]) and " a   b " in two[1]
    # too narrow for two: one below the other, names whole
    narrow = tile_boards(boards, width=50).plain
    rows = [line for line in narrow.splitlines() if any(n in line for n in names)]
    assert [line.strip() for line in rows] == names
    # a board keeps its place while the game goes on
    first = tile_boards(boards, width=116).plain.splitlines()[0]
    played = Board.deal("spider1", "0")
    played.push(Move.deal())
    later = tile_boards([(names[0], played.view()), *boards[1:]], width=116).plain
    assert later.splitlines()[0] == first
    assert tile_boards([], width=116).plain == ""


def test_explanations_name_cards_as_the_board_shows_them() -> None:
    view = Board.deal("spider4", "1").view()
    why = view.explain_illegal(Move.from_text("e1f"))
    assert "Ts" in why  # the engine names cards by their tokens
    assert cards_as_shown(view, why) == "2♣ does not go onto 10♠ in column f"
    wizard = Board.deal("wizard+weave", "w0")
    assert cards_as_shown(wizard, "Tw onto 10t, 0t") == "10⚚ onto trump 10, trump 0"
    starfish = Board.deal("starfish", "j0")
    assert cards_as_shown(starfish, "@ for Tq in d1j") == "Jk☆ for 10Ψ in d1j"


def test_a_boards_room_holds_it_at_the_end_of_the_game() -> None:
    # Spider: 40 cells of columns, but the stock line with eight runs gone is 42
    won = Board.from_text("spider4 " + "/".join(["|"] * 10) + " - shdcshdc")
    widest = max(cell_len(line) for line in render_board(won).plain.splitlines())
    assert widest == 42 and board_room("spider4") >= widest
    assert board_room("wizard+weave") >= board_width(Board.deal("wizard+weave", "1"))
    assert board_room("no-such-game") == 0


def test_ghosts_are_marked() -> None:
    race = _running_race(
        "spider1",
        [
            PlayerInfo(player="p1", name="ada", status="playing", runs=1),
            PlayerInfo(player="ghost1", name="bob", status="playing", connected=False, ghost=True),
        ],
    )
    lines = render_players(race, sets=8, cards=104, me="p1").plain.splitlines()
    assert lines[1].startswith("◌ bob") and lines[1].endswith("(ghost)")
    assert "away" not in lines[1] and "ghost" not in lines[0]
    results = [
        Result(rank=1, player="ghost1", name="bob", status="won", time=9.0, runs=8, moves=99,
               score=1000, ghost=True),
        Result(rank=2, player="p1", name="ada", status="timeout", time=None, runs=1, moves=9,
               score=500),
    ]  # fmt: skip
    plain = render_results(results).plain.splitlines()
    assert plain[1].endswith("(ghost)") and not plain[2].endswith("(ghost)")
