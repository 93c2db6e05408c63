"""The terminal UI's marks of presence: a player away, back (with their time away in all),
abandoned, idle; and the warning before the player is out for making no move."""

from __future__ import annotations

from typing import Any

from spider_client import RaceMirror
from spider_client import protocol as p
from spider_race.tui.app import _presence_line
from spider_race.tui.progress import IDLE_WARNING, STATUS_STYLES, idle_warning, render_players


def _race() -> p.RaceInfo:
    players = [
        p.PlayerInfo(player="p1", name="alice", ready=True, status="playing"),
        p.PlayerInfo(player="p2", name="bob", ready=True, status="playing"),
    ]
    return p.RaceInfo(
        code="K7QX2",
        variant="spider4",
        state="running",
        version=5,
        creator="p1",
        max_players=2,
        time_limit=600,
        undo=True,
        live_boards=False,
        countdown=0,
        players=players,
        away_grace=45,
    )


class _Client:
    """What the message line reads of a client: its race."""

    def __init__(self, race: p.RaceInfo) -> None:
        self.race = race


def test_away_back_and_abandoned_are_shown() -> None:
    mirror = RaceMirror(player="p1")
    mirror.take(p.Joined(req=1, role="player", race=_race()))
    client: Any = _Client(mirror.race)  # type: ignore[arg-type]
    away = p.Away(race="K7QX2", version=6, player="p2", since=1000.0)
    assert mirror.take(away) == [away]
    assert _presence_line(client, away) == "bob is away (out as abandoned after 45 s away in all)"
    assert mirror.race is not None
    lines = render_players(mirror.race, sets=8, cards=44, me="p1").plain.splitlines()
    assert "(away)" in lines[1] and "(away)" not in lines[0]
    back = p.Back(race="K7QX2", version=7, player="p2", away=12.4)
    mirror.take(back)
    assert _presence_line(client, back) == "bob is back after 12 s away"
    again = p.Back(race="K7QX2", version=8, player="p2", away=7.6, total=20.0)
    assert _presence_line(client, again) == "bob is back after 8 s away (20 of 45 s away spent)"
    assert "(away)" not in render_players(mirror.race, sets=8, cards=44, me="p1").plain
    gone = p.PlayerInfo(player="p2", name="bob", status="abandoned", connected=False)
    mirror.take(p.Progress(race="K7QX2", version=9, player=gone))
    text = render_players(mirror.race, sets=8, cards=44, me="p1").plain
    assert "abandoned" in text and "(away)" in text


def test_an_idle_player_is_shown_and_warned_in_the_last_seconds() -> None:
    race = _race()
    me = race.players[0]
    me.idle_at = 1030.0
    # the warning shows only in the last IDLE_WARNING seconds, counting down
    assert idle_warning(race, me, 1030.0 - IDLE_WARNING - 0.5) == ""
    assert (
        idle_warning(race, me, 1030.0 - IDLE_WARNING)
        == f"move within {IDLE_WARNING} s or you are out"
    )
    assert idle_warning(race, me, 1026.2) == "move within 4 s or you are out"
    assert idle_warning(race, me, 1031.0) == "move within 0 s or you are out"
    # none without a deadline, once the game is over, or when the race does not run
    assert idle_warning(race, None, 1029.0) == ""
    me.idle_at = None
    assert idle_warning(race, me, 1029.0) == ""
    me.idle_at, me.status = 1030.0, "idle"
    assert idle_warning(race, me, 1029.0) == ""
    me.status, race.state = "playing", "finished"
    assert idle_warning(race, me, 1029.0) == ""
    # an idle player's line says so, in the forfeits' colour
    out = p.PlayerInfo(player="p2", name="bob", status="idle")
    race.players[1] = out
    line = render_players(race, sets=8, cards=44, me="p1")
    assert "idle" in line.plain.splitlines()[1]
    assert STATUS_STYLES["idle"] == STATUS_STYLES["abandoned"]
