"""The quick match's own rules, without I/O (:mod:`spider_server.race.matches`): seats
confirmed by joining, a match called off, what a dodge does, the wait before queueing
again, and a dodger ranked below everyone who raced."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spider_client import protocol as p
from spider_server import race as rules
from spider_server.errors import NotAPlayer
from spider_server.race import RaceState, Status

NOW = 1_000_000.0


def _matched(*players: str, rated: bool = True, countdown: int = 5) -> rules.Race:
    options = rules.RaceOptions(
        variant="spider1",
        max_players=len(players),
        time_limit=900,
        undo=True,
        live_boards=False,
        countdown=countdown,
        quick=True,
        rated=rated,
    )
    change = rules.matched_race(
        code="QQQQQ", options=options, players=[(x, x.upper()) for x in players], now=NOW
    )
    return change.race


def _confirmed(race: rules.Race, *players: str) -> rules.Race:
    for player in players:
        change = rules.confirm_seat(race, player, NOW)
        assert change is not None
        race = change.race
    return race


def test_a_match_waits_open_until_every_player_joined() -> None:
    race = _matched("a", "b", "c")
    assert race.state is RaceState.OPEN and rules.unconfirmed(race) == ["a", "b", "c"]
    race = _confirmed(race, "a", "c")
    assert race.state is RaceState.OPEN and rules.unconfirmed(race) == ["b"]
    assert rules.confirm_seat(race, "a", NOW) is None  # joining again changes nothing
    assert rules.confirm_seat(race, "z", NOW) is None  # not a player of it
    race = _confirmed(race, "b")
    assert race.state is RaceState.COUNTDOWN and race.starts_at == NOW + 5
    assert rules.unconfirmed(race) == [] and rules.confirm_seat(race, "b", NOW) is None


def test_a_match_called_off_takes_everyone_out_and_says_who_was_missing() -> None:
    race = _confirmed(_matched("a", "b", "c"), "a")
    change = rules.cancel_match(race, ["b", "c"])
    assert change.base == race.version and change.race.players == {}
    assert sorted(change.removed) == ["a", "b", "c"]
    [(_, event)] = change.events
    assert isinstance(event, p.MatchCancelled) and event.missing == ["b", "c"]


@pytest.mark.parametrize(
    ("players", "costly", "expected"),
    [
        (("a", "b", "c"), False, "leave"),  # two race on
        (("a", "b"), False, "cancel"),  # one would race alone
        (("a", "b"), True, "stay"),  # a costly dodge: the other races against them
        (("a",), True, "cancel"),  # nobody else
    ],
)
def test_what_a_dodge_does(players: tuple[str, ...], costly: bool, expected: str) -> None:
    race = _matched(*players)
    assert rules.dodge_kind(race, "a", costly=costly) == expected


def test_a_costly_dodge_keeps_the_dodger_as_left_and_the_race_goes_on() -> None:
    race = _confirmed(_matched("a", "b"), "b")
    change = rules.dodge(race, "a", NOW, costly=True)
    entry = change.race.players["a"]
    assert (entry.status, entry.ready) == (Status.LEFT, True)
    # every other player was ready: it counts down at once
    assert change.race.state is RaceState.COUNTDOWN
    started = rules.start(change.race, NOW + 5)
    assert started.race.players["a"].status == Status.LEFT
    assert started.race.players["b"].status == Status.PLAYING
    # the other resigns at once, with the very progress of the dodger: still above them
    b = replace(started.race.players["b"], status=Status.RESIGNED, time=0.0)
    resigned = {**started.race.players, "b": b}
    ranked = rules.rank(resigned.values())
    assert [(r.player, r.rank, r.status) for r in ranked] == [
        ("b", 1, Status.RESIGNED),
        ("a", 2, Status.LEFT),
    ]


def test_a_free_dodge_leaves_and_the_countdown_goes_on() -> None:
    race = _confirmed(_matched("a", "b", "c"), "a", "b", "c")
    change = rules.dodge(race, "a", NOW, costly=False)
    assert change.removed == ["a"] and "a" not in change.race.players
    assert change.race.state is RaceState.COUNTDOWN
    with pytest.raises(NotAPlayer):
        rules.dodge(change.race, "a", NOW, costly=False)


def test_dodges_cost_only_in_rated_races_past_the_free_ones() -> None:
    assert rules.FREE_DODGES == 3
    assert [rules.dodge_costs(n, rated=True) for n in range(5)] == [False] * 3 + [True] * 2
    assert not rules.dodge_costs(10, rated=False)


def test_the_wait_doubles_with_each_strike_up_to_the_cap() -> None:
    def wait(*times: float, now: float = NOW) -> float:
        return rules.queue_wait(list(times), now, base=30.0, cap=100.0)

    assert wait() == 0.0
    assert wait(NOW) == 30.0
    assert wait(NOW - 10, NOW) == 60.0  # from the last one
    assert wait(NOW - 20, NOW - 10, NOW) == 100.0  # 120, capped
    assert wait(NOW, now=NOW + 12) == 18.0
    assert wait(NOW, now=NOW + 31) == 0.0
