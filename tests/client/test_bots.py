"""Bots on engine positions, without a server."""

from __future__ import annotations

import statistics

import pytest

from spider_client.bots import CarelessBot, GreedyBot, RandomBot, make_bot, play_game
from spider_client.errors import ERROR_CLASSES, ServerError, error_from_message
from spider_client.protocol import ERROR_CODES, Error
from spider_engine import Board, Move, find_variant, variant_ids


def view(*columns: str, stock: str = "*10") -> Board:
    return Board.from_text(f"spider1 {'/'.join(columns)} {stock} -")


FILLER = ["*1|9s"] * 6


@pytest.mark.parametrize("variant", ["spider1", "spider1+keep"])
def test_greedy_finishes_a_run_first(variant: str) -> None:
    # with keep the run stays at the column's end, complete: it counts all the same
    columns = ["*3|KsQsJsTs9s8s7s6s5s4s3s2s", "*2|As", "*4|5s", "|6s", *FILLER]
    board = Board.from_text(f"{variant} {'/'.join(columns)} *10 -")
    assert {"b1a", "c1d", "+"} <= set(board.legal_moves.texts())
    assert GreedyBot()(board) == "b1a"


def test_greedy_turns_up_before_building_on_suit() -> None:
    # c1d turns up a card; e1d only lays a 5 onto a 6 (it lay on a King)
    board = view("*3|Ks", "*2|Js", "*4|5s", "*1|6s", "*1|Ks5s", "*1|Js", *["*1|2s"] * 4)
    assert {"c1d", "e1d", "+"} <= set(board.legal_moves.texts())
    assert GreedyBot()(board) == "c1d"


NO_MOVES = ["*1|Qs2s"] * 4


def test_greedy_builds_onto_its_suit_before_dealing() -> None:
    board = view(*NO_MOVES, "*1|Ks5s", "*1|Qs6s", *NO_MOVES)
    assert board.legal_moves.texts() == ["+", "e1f"]
    assert GreedyBot()(board) == "e1f"


def test_greedy_deals_when_nothing_useful_is_left() -> None:
    # moving the 8 onto the other 9 gains nothing: it lies on a 9 already
    board = view(*NO_MOVES, "*1|Ks9s8s", "*1|Qs9s", *NO_MOVES)
    assert board.legal_moves.texts() == ["+", "e1f"]
    assert GreedyBot()(board) == "+"


def test_greedy_does_not_go_back_and_forth() -> None:
    # the stock is out: the only moves shuttle the 8 between the two nines
    board = view(*NO_MOVES, "*1|Ks9s8s", "*1|Qs9s", *NO_MOVES, stock="-")
    bot = GreedyBot()
    assert bot(board) == "e1f"
    board.push(Move.from_text("e1f"))
    assert board.legal_moves.texts() == ["f1e"]
    assert bot(board) is None  # f1e only goes back to a position it has seen


def test_random_bot_plays_legal_moves_and_gives_up_when_stuck() -> None:
    bot = RandomBot(7)
    board = Board.deal("spider1", "3")
    for _ in range(50):
        text = bot(board.view())
        assert text is not None
        assert text in board.legal_moves.texts()
        board.push(Move.from_text(text))
    stuck = view("*3|As", "*2|As", "*4|As", "|As", *["*1|As"] * 6, stock="-")
    assert RandomBot()(stuck) is None
    assert GreedyBot()(stuck) is None


def test_make_bot() -> None:
    assert isinstance(make_bot("greedy"), GreedyBot)
    assert isinstance(make_bot("random", seed=1), RandomBot)


@pytest.mark.parametrize("seeds", [12, pytest.param(50, marks=pytest.mark.slow)])
def test_greedy_beats_random_over_many_spider1_seeds(seeds: int) -> None:
    """Over the first dozen seeds in `make test`, fifty in `make acceptance`."""
    greedy, random_ = [], []
    for seed in range(seeds):
        board = play_game(Board.deal("spider1", str(seed)), GreedyBot(), max_actions=1000)
        greedy.append(len(board.foundation))
        board = play_game(Board.deal("spider1", str(seed)), RandomBot(seed), max_actions=1000)
        random_.append(len(board.foundation))
    assert statistics.median(greedy) > statistics.median(random_)


def test_careless_lies_between_random_and_greedy() -> None:
    assert isinstance(make_bot("careless", seed=1), CarelessBot)
    sets: dict[str, int] = {}
    for strategy in ("random", "careless", "greedy"):
        boards = [
            play_game(Board.deal("spider1", str(s)), make_bot(strategy, seed=s), max_actions=3000)
            for s in range(12)
        ]
        sets[strategy] = sum(len(b.foundation) for b in boards)
    assert sets["random"] < sets["careless"] < sets["greedy"], sets


# -- the alternative decks ---------------------------------------------------------------------


def test_greedy_takes_a_set_off_first() -> None:
    # xabcd takes the four Winds off; e1f would build 2b onto 3b and empty column e
    board = Board.from_text("sparrow |Ew/|Sw/|Ww/|Nw/|2b/|3b/|7c/|7c/|7c/|7c/|7c/|7c *72 -")
    assert {"xabcd", "e1f", "+"} <= set(board.legal_moves.texts())
    bot = GreedyBot()
    assert bot.rank(board, Move.from_text("xabcd"))[0] > bot.rank(board, Move.from_text("e1f"))[0]
    assert bot(board) == "xabcd"


def test_greedy_counts_a_trump_gone_to_the_tower_as_a_set() -> None:
    # a1b uncovers the Fool, which leaves for the Tower; e1f only empties a column
    board = Board.from_text("wizard |0t5c/|6c/|Kw/|Kw/|8s/|9s/|Kd/|Kd/|Kd/|Kd/|Kd/|Kd/|Kd - -")
    assert board.legal_moves.texts() == ["a1b", "e1f"]
    bot = GreedyBot()
    assert bot.rank(board, Move.from_text("a1b"))[0] > bot.rank(board, Move.from_text("e1f"))[0]
    assert bot(board) == "a1b"
    board.push(Move.from_text("a1b"))
    assert board.foundation == ["t"]


def test_greedy_keeps_a_myrmex_group_together() -> None:
    # 7ml 6mw 5ml share Moons: a3c lays the whole group on 8ms (all four share Moons);
    # a1b would lay 5ml on 6lk (they share Leaves) but part it from 6mw
    board = Board.from_text("myrmex |Ay7ml6mw5ml/|Ak6lk/|Aw8ms/|Cs/|Cw/|Cl/|Cy/|Ck *28 -")
    assert {"a1b", "a3c"} <= set(board.legal_moves.texts())
    bot = GreedyBot()
    assert bot.rank(board, Move.from_text("a3c")) > bot.rank(board, Move.from_text("a1b"))
    assert bot(board) == "a3c"


def test_greedy_does_not_spend_a_joker_on_a_mere_build() -> None:
    # *a2b would put 5h on 6h and leave a Joker inside column a for good: it deals instead
    board = Board.from_text(
        "starfish |Ks5h9d/|Qs6h/|Kc/|Kd/|Kr/|Kq/|Kh/|Kc/|Kd/|Kr/|Kq/|Kh *12 - 6"
    )
    assert {"*a2b", "+"} <= set(board.legal_moves.texts())
    assert GreedyBot()(board) == "+"


def in_groups(board: Board) -> int:
    """Face-up cards lying on a card they follow in a movable group."""
    follows = board.variant.follows
    return sum(
        follows(col[k - 1], col[k])
        for col, down in zip(board.cols, board.down, strict=True)
        for k in range(down + 1, len(col))
    )


def greedy_and_random(variant: str, seeds: range) -> tuple[tuple[int, int], tuple[int, int]]:
    """(sets completed, cards in groups at the end) of each bot, summed over the seeds."""
    totals = []
    for make in (lambda seed: GreedyBot(), RandomBot):
        boards = [play_game(Board.deal(variant, str(s)), make(s), max_actions=1000) for s in seeds]
        totals.append((sum(len(b.foundation) for b in boards), sum(map(in_groups, boards))))
    return totals[0], totals[1]


@pytest.mark.parametrize("variant", ["myrmex", "wizard", "wizard+weave", "sparrow"])
def test_greedy_completes_more_sets_than_random(variant: str) -> None:
    greedy, random_ = greedy_and_random(variant, range(4))
    assert greedy[0] > random_[0]


def test_greedy_plays_starfish_better_than_random() -> None:
    """Starfish's runs of thirteen in six suits are rare for both bots (the greedy one
    completes one in about one game in five, the random one none in fifty): over a handful
    of deals the greedy bot completes no fewer and ends with far more cards in groups."""
    greedy, random_ = greedy_and_random("starfish", range(4))
    assert greedy[0] >= random_[0]
    assert greedy[1] > 3 * random_[1]


def every_variant() -> list[str]:
    """Every base, alone and with each of its options."""
    ids = []
    for base in variant_ids():
        ids.append(base)
        ids += [f"{base}+{option}" for option in sorted(find_variant(base).options_allowed)]
    return [*ids, "wizard+blind+weave"]


@pytest.mark.parametrize("variant", every_variant())
def test_greedy_ends_its_game(variant: str) -> None:
    """The bot wins or gives up on its own, long before any cap on actions; so it does
    when it runs out of patience at once."""
    for bot in (GreedyBot(), GreedyBot(seed=1, patience=0)):
        # every action (deals too) is one step of the history: fewer than 1,000 of 5,000
        # allowed means the game was won or the bot gave up (returned None)
        board = play_game(Board.deal(variant, "ends"), bot, max_actions=5000)
        assert len(board.history()) < 1000, (variant, board.is_won())


def test_every_error_code_has_its_exception() -> None:
    assert set(ERROR_CLASSES) == set(ERROR_CODES)
    for code in ERROR_CODES:
        error = error_from_message(Error(error=code, message="m"))
        assert isinstance(error, ServerError)
        assert error.code == code
    assert type(error_from_message(Error(error="new_code", message="m"))) is ServerError
