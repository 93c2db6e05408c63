"""Presence's rules without I/O (``race/presence.py``): away, back, a rejoin after a lost
connection, abandoned after the grace, stuck after the grace on a position offering only
undo; the ``away_grace`` option's bounds; and ``away_since`` in the entries' info."""

from __future__ import annotations

from dataclasses import replace

import pytest

from spider_client.protocol import Away, Back, CreateRace, Progress
from spider_engine import Board, Move
from spider_server import race as r
from spider_server.errors import InvalidMessage

START = 1000.0


def _running(
    players: int = 3, *, grace: int = 10, undo: bool = True, seed: str = "7"
) -> tuple[r.Race, dict[str, r.Game]]:
    options = r.RaceOptions.from_request(
        CreateRace(req=1, variant="spider4", countdown=0, undo=undo, away_grace=grace), r.Limits()
    )
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
    assert _events(change) == [Back(race="ABCDE", version=0, player="p2", away=3.5)]
    race = _apply(race, change)
    assert race.players["p2"].away_since is None and race.players["p2"].info().connected
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


def test_back_before_anyone_saw_the_grace_pass_plays_on() -> None:
    race, _ = _running(grace=10)
    race = _apply(race, r.presence_change(race, {"p3": "away"}, {}, START + 2))
    # the sweep comes late, but the player's claim is live again: back, not abandoned
    assert r.presence_plan(race, {"p1", "p2", "p3"}, START + 30) == {"p3": "back"}


def test_a_rejoin_after_a_lost_connection_is_away_and_back_together() -> None:
    race, _ = _running()
    everyone = {"p1", "p2", "p3"}
    assert r.presence_plan(race, everyone, START + 5, resumed="p1") == {"p1": "resumed"}
    change = r.presence_change(race, {"p1": "resumed"}, {}, START + 5, resumed_since=START + 3)
    assert _events(change) == [
        Away(race="ABCDE", version=0, player="p1", since=START + 3),
        Back(race="ABCDE", version=0, player="p1", away=2.0),
    ]
    assert _apply(race, change).players["p1"].away_since is None
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
