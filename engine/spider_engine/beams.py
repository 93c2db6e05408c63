"""The solver's schedule of beams (:data:`BEAMS`): which width each beam has and which
evaluation it searches by, tried in turn while the budget lasts.

A beam that fails does not only call for a wider one: the beams of one width that judge
positions a little differently (sets in suit worth more, blocked cards worse, empty columns
worth more, and so on) keep different positions and fail on different deals. After the
narrow beams of the variant's own evaluation (:data:`NARROW`), the schedule tries those
other evaluations at moderate widths (:data:`RETRIES`), each far cheaper than the next
width, before it widens (:data:`WIDE`).

Each evaluation is the variant's weights changed by a rule (:data:`EVALUATIONS`), so that
a deck with weights of its own keeps their proportions. The schedule depends on nothing but
these tables: a budget only cuts it short.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from .search import Weights

__all__ = ["BEAMS", "EVALUATIONS", "NARROW", "RETRIES", "WIDE", "schedule"]

EVALUATIONS: dict[str, Callable[[Weights], Weights]] = {
    "own": lambda w: w,
    "suited": lambda w: replace(w, suited=w.suited * 8 // 5),
    "blocked": lambda w: replace(w, blocked=w.blocked * 2, natural=0),
    "empty": lambda w: replace(w, empty=w.empty * 2),
    "dealt": lambda w: replace(w, dealt=w.dealt + 20),
    "face_down": lambda w: replace(w, face_down=w.face_down * 5 // 3),
}
"""The evaluations by name: each turns the variant's weights into the beam's."""

NARROW: tuple[tuple[int | None, str], ...] = ((10, "own"), (40, "own"), (150, "own"), (500, "own"))
"""The first beams: the variant's own evaluation, widths growing."""

RETRIES: tuple[tuple[int | None, str], ...] = (
    (150, "suited"),
    (150, "blocked"),
    (150, "empty"),
    (500, "suited"),
    (500, "blocked"),
    (500, "empty"),
    (500, "dealt"),
    (500, "face_down"),
)
"""Then the other evaluations, at widths whose beams cost a fraction of a wider one's."""

WIDE: tuple[tuple[int | None, str], ...] = (
    (1500, "own"),
    (5000, "own"),
    (15000, "own"),
    (50000, "own"),
    (None, "own"),
)
"""Last, wider beams of the variant's own evaluation, and one without a width."""

BEAMS: tuple[tuple[int | None, str], ...] = NARROW + RETRIES + WIDE
"""Every beam of a search, in the order they run: its width (None: no limit) and the name
of its evaluation."""


def schedule(weights: Weights, hidden: bool = True) -> list[tuple[int | None, Weights]]:
    """The beams of :data:`BEAMS` with their evaluations made from ``weights``, less any
    beam that would repeat an earlier one: an evaluation that leaves these weights as they
    are, or, for a position with no face-down card (``hidden`` False: none can come, since
    deals are face up), one that changes only the weight of face-down cards."""
    beams: list[tuple[int | None, Weights]] = []
    seen: list[tuple[int | None, Weights]] = []
    for width, name in BEAMS:
        evaluation = EVALUATIONS[name](weights)
        same = evaluation if hidden else replace(evaluation, face_down=weights.face_down)
        if (width, same) not in seen:
            seen.append((width, same))
            beams.append((width, evaluation))
    return beams
