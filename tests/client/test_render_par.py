"""The terminal's results with the deal's par: the winners' moves against it, while it is
worked out, and a deal without par."""

from __future__ import annotations

from spider_client.protocol import ParInfo, RaceInfo, Result
from spider_race.tui.progress import render_par, render_results

RESULTS = [
    Result(rank=1, player="p1", name="ada", status="won", time=90.0, runs=1, moves=150, score=9),
    Result(rank=2, player="p2", name="bob", status="won", time=99.0, runs=1, moves=120, score=8),
    Result(rank=3, player="p3", name="cy", status="stuck", time=None, runs=0, moves=30, score=5),
]


def _finished(par: ParInfo | None, seed: str | None = "s1") -> RaceInfo:
    return RaceInfo(
        code="K7QX2",
        variant="spider1",
        state="finished",
        version=99,
        creator="p1",
        max_players=8,
        time_limit=1800,
        undo=True,
        live_boards=False,
        countdown=3,
        results=RESULTS,
        seed=seed,
        par=par,
    )


def test_par_against_each_winners_moves() -> None:
    par = ParInfo(moves=132, line=["d1j"] * 132, first=300)
    assert render_par(par, RESULTS, me="p1") == "par 132 · you 150 (+18) · bob 120 (−12)"
    assert (
        render_par(ParInfo(moves=150, line=[], first=150), RESULTS[:1]) == "par 150 · ada 150 (±0)"
    )
    last = render_results(RESULTS, me="p1", race=_finished(par)).plain.splitlines()[-1]
    assert last == "par 132 · you 150 (+18) · bob 120 (−12)"


def test_par_while_it_is_worked_out_and_without_one() -> None:
    working = render_results(RESULTS, race=_finished(None)).plain.splitlines()[-1]
    assert working == "par: working it out…"
    none = render_results(RESULTS, race=_finished(ParInfo(none=True))).plain.splitlines()[-1]
    assert none == "no par: the solver did not settle this deal"


def test_no_par_line_while_the_deal_is_hidden() -> None:
    hidden = render_results(RESULTS, race=_finished(None, seed=None)).plain
    assert "par" not in hidden
    assert "par" not in render_results(RESULTS).plain


def test_a_provisional_par_says_it_is_the_line_so_far() -> None:
    known = ParInfo(moves=140, line=["d1j"] * 140, provisional=True)
    last = render_results(RESULTS, me="p1", race=_finished(known)).plain.splitlines()[-1]
    assert last == "par 140 so far · you 150 (+10) · bob 120 (−20) · looking for a shorter line…"
    settled = ParInfo(moves=132, line=["d1j"] * 132, first=300)
    assert "so far" not in render_par(settled, RESULTS) and "looking" not in render_par(
        settled, RESULTS
    )
