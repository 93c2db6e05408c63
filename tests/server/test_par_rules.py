"""The par's rules, without I/O: the shortest line known at the finish lands at once as a
provisional par (a winnable deal's proof, each winner's standing moves), a shorter one may
replace it, and the search's answer settles it: the shorter of the two, once."""

from __future__ import annotations

from dataclasses import replace

from spider_client.protocol import CreateRace, ParInfo
from spider_server import race as r

LIMITS = r.Limits()


def _finished(replays: dict[str, list[str]], won: set[str], *, daily: str | None = None) -> r.Race:
    """A finished two-player race whose players in ``won`` won, with ``replays``."""
    options = r.RaceOptions.from_request(CreateRace(req=1, variant="spider1", countdown=5), LIMITS)
    if daily:
        options = replace(options, daily=daily)
    race = replace(
        r.create_race(
            code="ABCDE", options=options, creator="p1", name="one", now=100.0, seed="7"
        ).race,
        version=1,
    )
    joined = r.join(race, "p2", "two", 100.0)
    assert joined is not None
    race = replace(joined.race, version=2)
    for pid in list(race.players):
        ready = r.set_ready(race, pid, True, 100.0)
        assert ready is not None
        race = ready.race
    start = r.start(race, race.starts_at or 0)
    race = start.race
    games = {
        g.player: replace(g, status="won" if g.player in won else "resigned", time=10.0)
        for g in start.games
    }
    return r.finish(race, games, replays, race.ends_at or 0).race


def test_the_standing_line_drops_what_undos_took_back() -> None:
    assert r.standing_line(["a1b", "c2d", "undo", "+", "e1f", "undo", "undo"]) == ["a1b"]
    assert r.standing_line(["undo", "a1b", "resign"]) == ["a1b"]
    assert r.standing_line([]) == []


def test_the_known_par_is_the_shortest_of_the_proof_and_the_winners_lines() -> None:
    replays = {"p1": ["a1b", "undo", "c1d", "e1f"], "p2": ["a1b", "c1d", "e1f", "g1h"]}
    race = _finished(replays, won={"p1", "p2"})
    known = r.known_par(race, [])
    assert known == ParInfo(moves=2, line=["c1d", "e1f"], provisional=True)  # p1's, undo gone
    assert r.known_par(race, [["x1y"]]) == ParInfo(moves=1, line=["x1y"], provisional=True)
    # a loser's moves are no winning line; without a winner the solver's lines alone
    lost = _finished(replays, won=set())
    assert r.known_par(lost, []) is None
    proof, hinted = ["x1y", "y1z", "z1a"], ["x1y", "y1z"]
    assert r.known_par(lost, [proof, hinted]) == ParInfo(moves=2, line=hinted, provisional=True)
    # a daily race's par is the day's, searched once: none provisional
    assert r.known_par(_finished(replays, won={"p1"}, daily="2026-12-02"), [["x1y"]]) is None


def test_a_provisional_par_lands_then_only_a_shorter_one_then_the_settled_one() -> None:
    race = _finished({"p1": ["a1b"] * 5}, won={"p1"})
    long = ParInfo(moves=5, line=["a1b"] * 5, provisional=True)
    change = r.par_change(race, long, 1e12)
    assert change is not None and change.race.par == long
    (event,) = [e for _, e in change.events]
    assert event.provisional and event.moves == 5 and event.first is None
    race = replace(change.race, version=race.version + 1)
    assert r.par_change(race, long, 1e12) is None  # the same length: nothing new
    shorter = ParInfo(moves=3, line=["c1d"] * 3, provisional=True)
    change = r.par_change(race, shorter, 1e12)
    assert change is not None and change.race.par == shorter
    race = replace(change.race, version=race.version + 1)
    # the solver's line is longer: the settled par keeps the known line, with its first
    searched = ParInfo(moves=4, line=["e1f"] * 4, first=9)
    change = r.par_change(race, searched, 1e12)
    assert change is not None
    assert change.race.par == ParInfo(moves=3, line=["c1d"] * 3, first=9)
    (event,) = [e for _, e in change.events]
    assert not event.provisional and event.moves == 3 and event.first == 9
    settled = replace(change.race, version=race.version + 1)
    # settled: nothing lands after it, provisional or not
    assert r.par_change(settled, ParInfo(moves=1, line=["g1h"], provisional=True), 1e12) is None
    assert r.par_change(settled, ParInfo(moves=1, line=["g1h"], first=1), 1e12) is None


def test_the_settled_par_is_the_solvers_when_shorter_and_the_known_line_when_it_found_none() -> (
    None
):
    known = ParInfo(moves=3, line=["c1d"] * 3, provisional=True)
    solver = ParInfo(moves=2, line=["a1b"] * 2, first=7)
    assert r.settled(known, solver) == solver
    assert r.settled(None, solver) == solver
    assert r.settled(known, ParInfo(none=True)) == ParInfo(moves=3, line=["c1d"] * 3)
    assert r.settled(None, ParInfo(none=True)) == ParInfo(none=True)
    # without a provisional par, the search's answer lands as it is
    race = _finished({}, won=set())
    change = r.par_change(race, ParInfo(none=True), 1e12)
    assert change is not None and change.race.par == ParInfo(none=True)
