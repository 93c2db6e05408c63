"""The solver's schedule of beams: the variant's own evaluation first, no beam twice."""

from __future__ import annotations

from dataclasses import replace

from spider_engine.beams import NARROW, schedule
from spider_engine.search import Weights


def test_the_first_beams_search_by_the_weights_given() -> None:
    weights = Weights(suited=7)
    beams = schedule(weights)
    assert [width for width, _ in beams[: len(NARROW)]] == [w for w, _ in NARROW]
    assert all(w == weights for _, w in beams[: len(NARROW)])
    assert beams[-1] == (None, weights)
    assert any(w != weights for _, w in beams)


def test_no_beam_repeats_an_earlier_one() -> None:
    # with nothing in suit or blocked to weigh, those evaluations change nothing
    weights = replace(Weights(), suited=0, blocked=0, natural=0)
    beams = schedule(weights)
    assert len(beams) == len(set(beams))
    assert len(beams) < len(schedule(Weights()))


def test_a_position_with_no_face_down_card_skips_the_face_down_evaluation() -> None:
    """Deals are face up: with no face-down card on the board, a beam that weighs them
    differently searches exactly as the variant's own evaluation at its width."""
    weights = Weights()
    hidden, open_ = schedule(weights), schedule(weights, hidden=False)
    changed = [(width, w) for width, w in hidden if w.face_down != weights.face_down]
    assert changed and not [b for b in changed if b in open_]
    assert [b for b in hidden if b not in changed] == open_
