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
