"""Presence's rules without I/O (``race/presence.py``): away, back, a rejoin after a lost
connection, abandoned once the time away in all reaches the grace (spells add up), idle
after the idle limit without an action, stuck after the grace on a position offering only
undo; the ``away_grace`` and ``idle_limit`` options' bounds; and ``away_since`` and
``idle_at`` in the entries' info."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spider_client.protocol import Away, Back, CreateRace, Progress, Started
from spider_engine import Board, Move
from spider_server import race as r
from spider_server.errors import InvalidMessage

START = 1000.0


def _running(
    players: int = 3, *, grace: int = 10, undo: bool = True, seed: str = "7", idle: int = 3600
) -> tuple[r.Race, dict[str, r.Game]]:
    request = CreateRace(
        req=1, variant="spider4", countdown=0, undo=undo, away_grace=grace, idle_limit=idle
    )
    options = r.RaceOptions.from_request(request, r.Limits())
    change = r.create_race(
        code="ABCDE", options=options, creator="p1", name="one", now=START, seed=seed
    )
    race = replace(change.race, version=1)
    for i in range(2, players + 1):
        c = r.join(race, f"p{i}", f"n{i}", START)
        assert c is not None
        race = replace(c.race, version=race.version + 1)
    for pid in list(race.players):
        c = r.set_ready(race, pid, True, START)
        assert c is not None
        race = replace(c.race, version=race.version + 1)
    started = r.start(race, START)
    return replace(started.race, version=race.version + 1), {g.player: g for g in started.games}


def _apply(race: r.Race, change: r.RaceChange | None) -> r.Race:
    assert change is not None and change.base == race.version
    return replace(change.race, version=race.version + len(change.events))


def _events(change: r.RaceChange | None) -> list[object]:
    assert change is not None
    return [e for _, e in change.events]


def test_away_then_back_with_the_time_away() -> None:
    race, games = _running()
    everyone = {"p1", "p2", "p3"}
    assert r.presence_plan(race, everyone, START + 1) == {}
    plan = r.presence_plan(race, everyone - {"p2"}, START + 1)
    assert plan == {"p2": "away"}
    change = r.presence_change(race, plan, {}, START + 1)
    assert _events(change) == [Away(race="ABCDE", version=0, player="p2", since=START + 1)]
    race = _apply(race, change)
    info = race.players["p2"].info()
    assert not info.connected and info.away_since == START + 1
    # still away: nothing more until the grace is over or they are back
    assert r.presence_plan(race, everyone - {"p2"}, START + 5) == {}
    plan = r.presence_plan(race, everyone, START + 4.5)
    assert plan == {"p2": "back"}
    change = r.presence_change(race, plan, {}, START + 4.5)
    assert _events(change) == [Back(race="ABCDE", version=0, player="p2", away=3.5, total=3.5)]
    race = _apply(race, change)
    assert race.players["p2"].away_since is None and race.players["p2"].info().connected
    assert race.players["p2"].away_total == 3.5
    assert change is not None and not change.games  # their game goes on


def test_away_past_the_grace_is_abandoned_at_their_progress() -> None:
    race, games = _running(grace=10)
    race = _apply(race, r.presence_change(race, {"p3": "away"}, {}, START + 2))
    assert r.presence_plan(race, {"p1", "p2"}, START + 11.9) == {}
    plan = r.presence_plan(race, {"p1", "p2"}, START + 12)
    assert plan == {"p3": "abandoned"}
    change = r.presence_change(race, plan, games, START + 12)
    assert change is not None
    [game] = change.games
    assert game.player == "p3" and game.status == r.Status.ABANDONED and game.time == 12.0
    assert game.position == games["p3"].position and game.seq == games["p3"].seq
    [event] = _events(change)
    assert isinstance(event, Progress) and event.player.status == "abandoned"
    assert not event.player.connected and event.player.away_since == START + 2
    race = _apply(race, change)
    # the others still play: the race goes on; once they are done it ends
    assert r.due_transition(race, START + 13) is None
    for pid in ("p1", "p2"):
        race.players[pid] = replace(race.players[pid], status=r.Status.RESIGNED)
    assert r.due_transition(race, START + 14) == "finish"
    # an abandoned game is over: nothing more is due for it
    assert r.presence_plan(race, set(), START + 100) == {}


def test_back_within_the_grace_plays_on_and_back_past_it_is_too_late() -> None:
    race, _ = _running(grace=10)
    race = _apply(race, r.presence_change(race, {"p3": "away"}, {}, START + 2))
    # the sweep comes late, but the player's claim is live again within the grace: back
    assert r.presence_plan(race, {"p1", "p2", "p3"}, START + 11.9) == {"p3": "back"}
    # a return after the grace was spent (no sweep saw it pass) comes too late: out
    assert r.presence_plan(race, {"p1", "p2", "p3"}, START + 30) == {"p3": "abandoned"}


def test_a_rejoin_after_a_lost_connection_is_away_and_back_together() -> None:
    race, _ = _running()
    everyone = {"p1", "p2", "p3"}
    assert r.presence_plan(race, everyone, START + 5, resumed="p1") == {"p1": "resumed"}
    change = r.presence_change(race, {"p1": "resumed"}, {}, START + 5, resumed_since=START + 3)
    assert _events(change) == [
        Away(race="ABCDE", version=0, player="p1", since=START + 3),
        Back(race="ABCDE", version=0, player="p1", away=2.0, total=2.0),
    ]
    assert _apply(race, change).players["p1"].away_since is None
    assert _apply(race, change).players["p1"].away_total == 2.0
    # seen away already: only back
    race = _apply(race, r.presence_change(race, {"p1": "away"}, {}, START + 6))
    assert r.presence_plan(race, everyone, START + 7, resumed="p1") == {"p1": "back"}


def test_only_undo_past_the_grace_is_stuck() -> None:
    seed = next(s for s in (f"stuck{n}" for n in range(100, 400)) if _stuck_after_deals(s))
    race, games = _running(players=2, grace=10, seed=seed)
    game = games["p1"]
    for k in range(5):  # every deal, nothing else: a position with no move and no deal
        outcome = r.apply_action(race, game, "move", move="+", now=START + 1 + k)
        game = outcome.game
        race.players["p1"] = outcome.entry
    assert game.status == r.Status.PLAYING  # undo is allowed: not stuck yet
    assert game.undo_only_since == START + 5 and outcome.entry.undo_only_since == START + 5
    everyone = {"p1", "p2"}
    assert r.presence_plan(race, everyone, START + 14.9) == {}
    plan = r.presence_plan(race, everyone, START + 15)
    assert plan == {"p1": "stuck"}
    change = r.presence_change(race, plan, {"p1": game}, START + 15)
    assert change is not None and change.games[0].status == r.Status.STUCK
    assert change.players[0].status == r.Status.STUCK
    # an undo before the grace is over leaves the position offering more again
    undone = r.apply_action(race, game, "undo", actions=["+"] * 5, now=START + 12)
    assert undone.game.undo_only_since is None
    # without undo such a position is stuck at once, as before
    race2, games2 = _running(players=1, undo=False, seed=seed)
    g = games2["p1"]
    for k in range(5):
        g = r.apply_action(race2, g, "move", move="+", now=START + 1 + k).game
    assert g.status == r.Status.STUCK and g.undo_only_since is None


def _stuck_after_deals(seed: str) -> bool:
    board = Board.deal("spider4", seed)
    for _ in range(board.deals_left()):
        board.push(Move.from_text("+"))
    return board.is_stuck()


def test_an_action_proves_the_player_present() -> None:
    race, games = _running()
    race = _apply(race, r.presence_change(race, {"p1": "away"}, {}, START + 1))
    outcome = r.apply_action(race, games["p1"], "move", move="+", now=START + 2)
    assert outcome.entry.away_since is None
    [(_, event)] = [e for e in outcome.events]
    assert isinstance(event, Progress) and event.player.connected


def test_nothing_is_decided_once_the_time_is_up_or_the_race_is_not_running() -> None:
    race, _ = _running()
    assert race.ends_at is not None
    assert r.presence_plan(race, set(), race.ends_at) == {}
    assert r.presence_plan(replace(race, state=r.RaceState.FINISHED), set(), START + 1) == {}


def test_the_away_grace_option_and_its_bounds() -> None:
    limits = r.Limits(away_grace=45)
    assert r.RaceOptions.from_request(CreateRace(req=1), limits).away_grace == 45
    assert r.RaceOptions.from_request(CreateRace(req=1, away_grace=5), limits).away_grace == 5
    for bad in (0, -1, limits.max_away_grace + 1):
        with pytest.raises(InvalidMessage, match="away_grace"):
            r.RaceOptions.from_request(CreateRace(req=1, away_grace=bad), limits)


def test_a_ghost_is_never_away_nor_abandoned() -> None:
    race, _ = _running(players=2, grace=10)
    ghost = replace(race.players["p2"], ghost=True)
    race = replace(race, players={**race.players, "p2": ghost})
    # a ghost holds no connection: long past the grace it is neither away nor out
    assert r.presence_plan(race, {"p1"}, START + 1) == {}
    assert r.presence_plan(race, {"p1"}, START + 100) == {}
    # the live player without a claim still is
    assert r.presence_plan(race, set(), START + 1) == {"p1": "away"}


# -- absence adds up ------------------------------------------------------------------------


def _spell(race: r.Race, pid: str, start: float, length: float) -> r.Race:
    """``pid`` away at ``start`` and back ``length`` seconds later, as the sweeps see it."""
    others = set(race.players) - {pid}
    assert r.presence_plan(race, others, start) == {pid: "away"}
    race = _apply(race, r.presence_change(race, {pid: "away"}, {}, start))
    assert r.presence_plan(race, others | {pid}, start + length) == {pid: "back"}
    return _apply(race, r.presence_change(race, {pid: "back"}, {}, start + length))


def test_absence_in_short_spells_adds_up_to_abandoned() -> None:
    race, games = _running(grace=10)
    everyone = {"p1", "p2", "p3"}
    # three spells of 3 s, each well within the grace, with time present between them
    for k in range(3):
        race = _spell(race, "p3", START + 10 * k, 3.0)
    assert race.players["p3"].away_total == 9.0 and race.players["p3"].status == "playing"
    assert r.presence_plan(race, everyone, START + 100) == {}  # present: nothing is due
    # away again: out once the spells reach the grace (1 s more), not a whole grace later
    race = _apply(race, r.presence_change(race, {"p3": "away"}, {}, START + 50))
    assert r.presence_plan(race, everyone - {"p3"}, START + 50.9) == {}
    assert r.presence_plan(race, everyone - {"p3"}, START + 51) == {"p3": "abandoned"}
    # coming back after that is too late: out all the same
    assert r.presence_plan(race, everyone, START + 52) == {"p3": "abandoned"}
    change = r.presence_change(race, {"p3": "abandoned"}, games, START + 52)
    assert change is not None and change.games[0].status == r.Status.ABANDONED
    # back just before it: plays on, with the grace all but spent
    race = _apply(race, r.presence_change(race, {"p3": "back"}, {}, START + 50.5))
    assert race.players["p3"].away_total == 9.5 and race.players["p3"].away_since is None


def test_the_back_event_tells_the_time_away_in_all() -> None:
    race, _ = _running(grace=60)
    race = _spell(race, "p2", START + 1, 2.5)
    race = _apply(race, r.presence_change(race, {"p2": "away"}, {}, START + 10))
    change = r.presence_change(race, {"p2": "back"}, {}, START + 14)
    assert _events(change) == [Back(race="ABCDE", version=0, player="p2", away=4.0, total=6.5)]


def test_an_action_ends_a_spell_away_and_counts_it() -> None:
    race, games = _running(grace=10)
    race = _apply(race, r.presence_change(race, {"p1": "away"}, {}, START + 1))
    outcome = r.apply_action(race, games["p1"], "move", move="+", now=START + 7)
    assert outcome.entry.away_since is None and outcome.entry.away_total == 6.0
    race.players["p1"] = outcome.entry
    # another spell of 4 s reaches the grace: out, though each spell was within it
    race = _apply(race, r.presence_change(race, {"p1": "away"}, {}, START + 20))
    assert r.presence_plan(race, {"p2", "p3"}, START + 23.9) == {}
    assert r.presence_plan(race, {"p2", "p3"}, START + 24) == {"p1": "abandoned"}
    # a player present whose spells reached the grace already (an action ended the last
    # one) is out at once
    over = replace(race.players["p1"], away_since=None, away_total=10.0)
    race = replace(race, players={**race.players, "p1": over})
    assert r.presence_plan(race, {"p1", "p2", "p3"}, START + 25) == {"p1": "abandoned"}


# -- idle -----------------------------------------------------------------------------------


def test_the_start_gives_everyone_the_idle_deadline() -> None:
    race, _ = _running(idle=30)
    assert race.options.idle_limit == 30
    for entry in race.players.values():
        assert entry.idle_at == START + 30 and entry.info().idle_at == START + 30
    assert r.next_idle(race) == START + 30
    # the started event carries it, and the race's info the limit
    options = r.RaceOptions.from_request(CreateRace(req=1, idle_limit=45), r.Limits())
    change = r.create_race(code="ABCDE", options=options, creator="p1", name="one", now=START)
    race2 = replace(change.race, version=1)
    race2 = _apply(race2, r.set_ready(race2, "p1", True, START))
    race2 = replace(race2, starts_at=START + 3)
    started = r.start(race2, START + 3)
    [(_, event)] = started.events
    assert isinstance(event, Started) and event.idle_at == START + 48
    assert r.race_info(started.race).idle_limit == 45


def test_no_action_for_the_idle_limit_is_out_as_idle_and_ranked_with_the_forfeits() -> None:
    race, games = _running(grace=60, idle=30)
    everyone = {"p1", "p2", "p3"}
    # p1 deals at 10 s and 35 s: each action moves their deadline on
    outcome = r.apply_action(race, games["p1"], "move", move="+", now=START + 10)
    assert outcome.entry.idle_at == START + 40
    [(_, progress)] = outcome.events
    assert isinstance(progress, Progress) and progress.player.idle_at == START + 40
    games["p1"], race.players["p1"] = outcome.game, outcome.entry
    assert r.presence_plan(race, everyone, START + 29.9) == {}
    # p2 and p3 made no action in 30 s: out as idle, connected or not (p3 is away)
    race = _apply(race, r.presence_change(race, {"p3": "away"}, {}, START + 20))
    plan = r.presence_plan(race, everyone - {"p3"}, START + 30)
    assert plan == {"p2": "idle", "p3": "idle"}
    change = r.presence_change(race, plan, games, START + 30)
    assert change is not None
    assert {g.player: (g.status, g.time) for g in change.games} == {
        "p2": ("idle", 30.0),
        "p3": ("idle", 30.0),
    }
    statuses = [e.player.status for e in _events(change) if isinstance(e, Progress)]
    assert statuses == ["idle", "idle"]
    assert all(e.info().idle_at is None for e in change.players)  # no deadline once out
    race = _apply(race, change)
    assert r.next_idle(race) == START + 40  # only p1's is left
    assert r.presence_plan(race, everyone, START + 35) == {}
    outcome = r.apply_action(race, games["p1"], "move", move="+", now=START + 35)
    race.players["p1"] = outcome.entry
    assert r.presence_plan(race, everyone, START + 64.9) == {}  # p1 acts: never idle
    # the ranking: p1, still playing, above the forfeits, whatever their progress
    race.players["p2"] = replace(race.players["p2"], turned_up=5)
    results = r.rank(race.players.values())
    assert [x.player for x in results][0] == "p1"
    assert {x.status for x in results[1:]} == {"idle"}
    assert (
        r.standing(race.players["p2"])[0]
        == r.standing(replace(race.players["p2"], status=r.Status.RESIGNED))[0]
    )


def test_the_first_end_due_wins_and_a_ghost_is_never_idle() -> None:
    seed = next(s for s in (f"stuck{n}" for n in range(100, 400)) if _stuck_after_deals(s))
    race, games = _running(players=2, grace=10, seed=seed, idle=30)
    game = games["p1"]
    for k in range(5):  # only undo is left from 25 s on: stuck at 35 s, idle at 54 s
        outcome = r.apply_action(race, game, "move", move="+", now=START + 20 + k)
        game, race.players["p1"] = outcome.game, outcome.entry
    assert r.presence_plan(race, {"p1", "p2"}, START + 40) == {"p1": "stuck", "p2": "idle"}
    # on a tie, stuck (not a forfeit) wins
    tied = replace(race.players["p1"], idle_at=START + 35)
    race = replace(race, players={**race.players, "p1": tied})
    assert r.presence_plan(race, {"p1", "p2"}, START + 35)["p1"] == "stuck"
    # a ghost never is
    ghost = replace(race.players["p2"], ghost=True)
    race = replace(race, players={**race.players, "p2": ghost})
    assert "p2" not in r.presence_plan(race, {"p1"}, START + 100)
    assert ghost.info().idle_at is None


def test_the_idle_limit_option_its_bounds_and_the_rated_one() -> None:
    limits = r.Limits(idle_limit=200, rated_idle_limit=90)
    assert r.RaceOptions.from_request(CreateRace(req=1), limits).idle_limit == 200
    assert r.RaceOptions.from_request(CreateRace(req=1, idle_limit=45), limits).idle_limit == 45
    for bad in (0, -5, limits.min_idle_limit - 1, limits.max_idle_limit + 1):
        with pytest.raises(InvalidMessage, match="idle_limit: between 30 and 3600"):
            r.RaceOptions.from_request(CreateRace(req=1, idle_limit=bad), limits)
    # a rated race has the fixed one: asked for or not, never another
    terms = {"public": True, "time_limit": 900, "countdown": 3}  # a rated spider4 race's
    assert (
        r.RaceOptions.from_request(CreateRace(req=1, rated=True, **terms), limits).idle_limit == 90
    )
    rated = CreateRace(req=1, rated=True, idle_limit=90, **terms)
    assert r.RaceOptions.from_request(rated, limits).idle_limit == 90
    with pytest.raises(InvalidMessage, match="idle_limit: a rated race's is 90 seconds"):
        r.RaceOptions.from_request(CreateRace(req=1, rated=True, idle_limit=300, **terms), limits)
