"""Differential tests: the fast engine against the simple reference of ``reference_spider``.

For every Spider variant id (4 bases x {no option, open, relaxed, open+relaxed}) and seeds
"0".."N-1", both implementations deal the seed, then play up to S random legal moves chosen
with ``random.Random(f"{variant}/{seed}")`` (a move picked among the sorted legal move texts;
the game stops when there is none). After every step the sorted legal move texts and the
position texts must be equal; the fast engine also undoes now and then (``pop``) and must
restore the exact earlier text, then redoes the moves.

Random play deals the whole stock early but rarely completes a run (only in spider1), so the
same comparison also runs on games played greedily (``reference_spider.greedy_choice``, runs
leave in spider1 and spider2) and from made-up positions where a move, a deal, or the last
Spiderette deal completes runs of every suit. A further test walks the same games comparing
views, scores and the won/stuck status, and the reference itself is checked against
the spec's vectors.txt (docs/spec).

Environment: ``SPIDER_DIFF_SEEDS`` (default 8) and ``SPIDER_DIFF_STEPS`` (default 200).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from spider_engine import Board, Move
from tests.engine import reference_spider as ref

BASES = ["spider1", "spider2", "spider4", "spiderette"]
OPTIONS = ["", "+open", "+relaxed", "+open+relaxed"]
VARIANTS = [base + options for base in BASES for options in OPTIONS]

SEEDS = int(os.environ.get("SPIDER_DIFF_SEEDS", "8"))
STEPS = int(os.environ.get("SPIDER_DIFF_STEPS", "200"))

# How often the fast engine is made to undo (and redo) a few moves, and how far back.
UNDO_PROBABILITY = 0.15
UNDO_DEPTH = 4


# --------------------------------------------------------------------------- the reference game


@dataclass
class Step:
    """One step of a reference game: the move played (None at the start), the resulting
    position, its text and its legal moves."""

    number: int
    move: str | None
    before: str | None
    position: ref.Position
    text: str
    moves: list[str]


def reference_game(
    start: ref.Position,
    rng_key: str,
    steps: int,
    *,
    greedy: bool = False,
    first: tuple[str, ...] = (),
) -> Iterator[Step]:
    """The reference's game: the start, then up to ``steps`` legal moves, the ``first`` ones
    given, the others chosen at random (or greedily) with ``random.Random(rng_key)``; it ends
    early when no move is legal."""
    rng = random.Random(rng_key)
    position = start
    text = ref.format_position(position)
    moves = ref.legal_moves(position)
    yield Step(0, None, None, position, text, moves)
    for number in range(1, steps + 1):
        if not moves:
            return
        if number <= len(first):
            move = first[number - 1]
        elif greedy:
            move = ref.greedy_choice(position, moves, rng)
        else:
            move = rng.choice(moves)
        before = text
        position = ref.apply_move(position, move)
        text = ref.format_position(position)
        moves = ref.legal_moves(position)
        yield Step(number, move, before, position, text, moves)


def seeded_game(variant: str, seed: str, *, greedy: bool = False) -> Iterator[Step]:
    return reference_game(ref.deal(variant, seed), f"{variant}/{seed}", STEPS, greedy=greedy)


def where(label: str, step: Step, history: list[str]) -> str:
    """Where a failure happened: enough to reproduce it by hand."""
    moves = " ".join(history) or "(none)"
    lines = [f"{label} step={step.number}", f"  moves played from the start: {moves}"]
    if step.move is not None:
        lines.append(f"  position before: {step.before}")
        lines.append(f"  move: {step.move}")
    lines.append(f"  reference position: {step.text}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- the comparison


def fast_move_texts(board: Board) -> list[str]:
    return sorted(move.text() for move in board.legal_moves)


def check_undo(
    board: Board, history: list[str], texts: list[str], rng: random.Random, context: str
) -> None:
    """Pop up to UNDO_DEPTH moves, checking each restores the earlier text, then redo them."""
    depth = rng.randint(1, min(UNDO_DEPTH, len(history)))
    for back in range(1, depth + 1):
        popped = board.pop()
        assert popped.text() == history[-back], (
            f"pop returned {popped.text()!r}, expected {history[-back]!r}\n{context}"
        )
        assert board.text() == texts[-back - 1], (
            f"pop of {history[-back]!r} did not restore the earlier position\n"
            f"  expected: {texts[-back - 1]}\n  got:      {board.text()}\n{context}"
        )
    for back in range(depth, 0, -1):
        board.push(Move.from_text(history[-back]))
        assert board.text() == texts[-back], (
            f"redo of {history[-back]!r} after pop differs\n"
            f"  expected: {texts[-back]}\n  got:      {board.text()}\n{context}"
        )


def compare(board: Board, game: Iterator[Step], label: str, *, undo_first: int = 0) -> None:
    """Play ``game`` on the fast ``board`` (already at the game's start), comparing it with
    the reference after every step, undoing now and then (always after the first
    ``undo_first`` moves)."""
    undo_rng = random.Random(f"undo/{label}")
    history: list[str] = []
    texts: list[str] = []
    for step in game:
        context = where(label, step, history)
        if step.move is None:
            assert board.text() == step.text, (
                f"start positions differ\n  fast:      {board.text()}\n{context}"
            )
        else:
            legal = {move.text(): move for move in board.legal_moves}
            assert step.move in legal, f"fast engine lacks the move {step.move!r}\n{context}"
            board.push(legal[step.move])
            history.append(step.move)
            assert board.text() == step.text, (
                f"positions differ after {step.move!r}\n  fast:      {board.text()}\n{context}"
            )
        texts.append(step.text)
        expected_moves = step.moves
        got_moves = fast_move_texts(board)
        assert got_moves == expected_moves, (
            f"legal moves differ\n  fast:      {' '.join(got_moves)}\n"
            f"  reference: {' '.join(expected_moves)}\n"
            f"  only fast: {sorted(set(got_moves) - set(expected_moves))}\n"
            f"  only reference: {sorted(set(expected_moves) - set(got_moves))}\n{context}"
        )
        if history and (len(history) <= undo_first or undo_rng.random() < UNDO_PROBABILITY):
            check_undo(board, history, texts, undo_rng, context)


@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_engine_plays_like_reference(variant: str) -> None:
    """The brief's comparison: seeded deals, random play."""
    for seed in map(str, range(SEEDS)):
        label = f"variant={variant} seed={seed!r} play=random"
        compare(Board.deal(variant, seed), seeded_game(variant, seed), label)


@pytest.mark.parametrize("variant", VARIANTS)
def test_fast_engine_plays_like_reference_greedy(variant: str) -> None:
    """Seeded deals, greedy-ish play: runs leave (often in spider1, in some spider2 games)
    and are undone."""
    for seed in map(str, range(SEEDS)):
        label = f"variant={variant} seed={seed!r} play=greedy"
        compare(Board.deal(variant, seed), seeded_game(variant, seed, greedy=True), label)


# --------------------------------------------------------------------------- made-up positions


def made_up_positions(variant_id: str) -> list[tuple[str, ref.Position]]:
    """Positions (not from a deal; §6 allows any card counts) where runs of every suit can
    leave: by the move ``b1a``, by a deal onto columns a and c (which records them left to
    right), and for Spiderette by the last deal of three cards. Stock sizes are those met
    between deals (the fast engine refuses others) and open games have no face-down card."""
    variant = ref.parse_variant(variant_id)
    rng = random.Random(f"made-up/{variant_id}")
    deck = variant.deck()
    columns = variant.columns

    def filler(count: int) -> tuple[str, ...]:
        return tuple(rng.choice(deck) for _ in range(count))

    def king_to_two(suit: str) -> tuple[str, ...]:
        return tuple(rank + suit for rank in reversed(ref.RANKS[1:]))

    def position(
        down: list[tuple[str, ...]], up: list[tuple[str, ...]], stock: tuple[str, ...], found: str
    ) -> ref.Position:
        if variant.open:  # nothing is ever face down in an open game
            up = [d + u for d, u in zip(down, up, strict=True)]
            down = [() for _ in down]
        return ref.Position(variant, tuple(down), tuple(up), stock, found)

    positions = []
    first_deal = 10 if columns == 10 else 7
    for suit in variant.suits:
        # b1a completes a run in column a; column j (or g) is empty.
        down = [filler(2) for _ in range(columns)]
        up = [filler(1) for _ in range(columns)]
        up[0] = king_to_two(suit)
        up[1] = ("A" + suit,)
        down[-1] = up[-1] = ()
        stock = filler(20 if columns == 10 else 10)  # spiderette: deals of 7, then of 3
        positions.append((f"move-completes-{suit}", position(down, up, stock, "")))

        # A deal completes runs in columns a and c, of two suits when there are two.
        other = variant.suits[-1] if suit == variant.suits[0] else variant.suits[0]
        down = [filler(1) for _ in range(columns)]
        up = [filler(1) for _ in range(columns)]
        up[0] = king_to_two(suit)
        up[2] = king_to_two(other)
        dealt = list(filler(first_deal))
        dealt[0] = "A" + suit
        dealt[2] = "A" + other
        stock = tuple(dealt) + filler(10 if columns == 10 else 3)
        positions.append((f"deal-completes-{suit}{other}", position(down, up, stock, other)))

    if variant.base == "spiderette":
        # The last deal (3 cards, columns a-c) completes a run in column c.
        down = [filler(1) for _ in range(columns)]
        up = [filler(1) for _ in range(columns)]
        up[2] = king_to_two("d")
        positions.append(("last-deal-completes", position(down, up, filler(2) + ("Ad",), "sh")))
    return positions


MADE_UP = [
    (variant, name, ref.format_position(pos))
    for variant in VARIANTS
    for name, pos in made_up_positions(variant)
]


@pytest.mark.parametrize(
    ("variant", "name", "text"), MADE_UP, ids=[f"{v}-{n}" for v, n, _ in MADE_UP]
)
def test_fast_engine_plays_like_reference_from_made_up_position(
    variant: str, name: str, text: str
) -> None:
    start = ref.parse_position(text)
    first = ("b1a",) if name.startswith("move") else ("+",)
    for policy in ["random", "greedy"]:
        for trial in range(2):
            label = f"variant={variant} made-up={name} play={policy} trial={trial}"
            steps = min(STEPS, 100)
            game = reference_game(start, label, steps, greedy=policy == "greedy", first=first)
            compare(Board.from_text(text), game, label, undo_first=1)


# --------------------------------------------------------------------------- views and scores


@pytest.mark.parametrize("variant", VARIANTS)
def test_views_scores_and_status_match_reference(variant: str) -> None:
    for seed in map(str, range(SEEDS)):
        for greedy in [False, True]:
            label = f"variant={variant} seed={seed!r} play={'greedy' if greedy else 'random'}"
            history: list[str] = []
            for step in seeded_game(variant, seed, greedy=greedy):
                context = where(label, step, history)
                if step.move is not None:
                    history.append(step.move)
                check_view_score_status(step, context)


def check_view_score_status(step: Step, context: str) -> None:
    board = Board.from_text(step.text)
    assert board.text() == step.text, f"parse/format differs: {board.text()}\n{context}"
    expected_view = ref.format_position(ref.view(step.position))
    assert board.view_text() == expected_view, (
        f"views differ\n  fast:      {board.view_text()}\n  reference: {expected_view}\n{context}"
    )
    assert board.view().text() == expected_view, f"view().text() differs\n{context}"
    view_board = Board.from_text(expected_view)
    assert view_board.text() == expected_view, f"view parse/format differs\n{context}"
    expected_moves = step.moves
    got_view_moves = fast_move_texts(view_board)
    assert got_view_moves == expected_moves, (
        f"legal moves of the view differ\n  fast:      {' '.join(got_view_moves)}\n"
        f"  reference: {' '.join(expected_moves)}\n{context}"
    )
    expected_score = ref.suited_score(step.position)
    assert board.suited_score() == expected_score, (
        f"suited score {board.suited_score()} != reference {expected_score}\n{context}"
    )
    assert board.is_won() == ref.is_won(step.position), f"is_won differs\n{context}"
    stuck = not step.moves and not ref.is_won(step.position)
    assert board.is_stuck() == stuck, f"is_stuck differs\n{context}"


# --------------------------------------------------------------------------- the reference itself


def test_reference_reproduces_the_spec_example() -> None:
    """rules.md §6's example (seed 1 after d1j and +), independent of the engine."""
    position = ref.deal("spider4", "1")
    for move in ["d1j", "+"]:
        position = ref.apply_move(position, move)
    view_text = ref.format_position(ref.view(position))
    assert view_text == (
        "spider4 *5|Qh3s/*5|Tc6h/*5|TsAh/*4|9c7d/*4|2c6h/*4|Ts7h/*4|5dKc/*4|7sJh/*4|AcJs/"
        "*4|6d5sKs *40 -"
    )
    assert ref.legal_moves(ref.parse_position(view_text)) == ["+", "b1d", "b1f", "e1d", "e1f"]


def test_made_up_positions_do_what_they_say() -> None:
    """The made-up positions really complete runs (else their tests would prove little)."""
    for variant in VARIANTS:
        for name, position in made_up_positions(variant):
            move = "b1a" if name.startswith("move") else "+"
            if name == "last-deal-completes":
                assert len(position.stock) == 3
            after = ref.apply_move(position, move)
            expected = len(position.foundation) + (2 if name.startswith("deal") else 1)
            if name.startswith("deal"):
                assert after.foundation[-2:] == name[-2:], (variant, name, after.foundation)
            assert len(after.foundation) == expected, (variant, name)


def vector_lines() -> list[tuple[int, str]]:
    """The lines of the spec's vectors.txt, from the copy in docs/spec."""
    path = Path(__file__).resolve().parents[2] / "docs" / "spec" / "vectors.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    return [
        (number, line)
        for number, line in enumerate(lines, start=1)
        if line.strip() and not line.startswith("#")
    ]


VECTOR_LINES = vector_lines()


@pytest.mark.parametrize(
    "line",
    [line for _, line in VECTOR_LINES],
    ids=[f"line{number}-{line.split()[0]}" for number, line in VECTOR_LINES],
)
def test_reference_reproduces_vector(line: str) -> None:
    """The reference must reproduce the spec's vectors, or its verdicts mean nothing."""
    kind, rest = line.split(" ", 1)
    parts = rest.split(" => ")
    if kind == "deal":
        variant, seed = parts[0].split(" ", 1)
        assert ref.format_position(ref.deal(variant, seed)) == parts[1]
    elif kind == "moves":
        expected = parts[1].split() if len(parts) > 1 else []
        assert ref.legal_moves(ref.parse_position(parts[0].removesuffix(" =>"))) == expected
    elif kind == "apply":
        position = ref.apply_move(ref.parse_position(parts[0]), parts[1])
        assert ref.format_position(position) == parts[2]
    elif kind == "view":
        assert ref.format_position(ref.view(ref.parse_position(parts[0]))) == parts[1]
    elif kind == "suited":
        assert ref.suited_score(ref.parse_position(parts[0])) == int(parts[1])
    else:
        pytest.fail(f"unknown vector kind {kind!r}")
