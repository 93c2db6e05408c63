"""The terminal UI's marks of presence: a player away, back, abandoned."""

from __future__ import annotations

from typing import Any

from spider_client import RaceMirror
from spider_client import protocol as p
from spider_race.tui.app import _presence_line
from spider_race.tui.progress import render_players


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
    assert _presence_line(client, away) == "bob is away (out as abandoned after 45 s away)"
    assert mirror.race is not None
    lines = render_players(mirror.race, sets=8, cards=44, me="p1").plain.splitlines()
    assert "(away)" in lines[1] and "(away)" not in lines[0]
    back = p.Back(race="K7QX2", version=7, player="p2", away=12.4)
    mirror.take(back)
    assert _presence_line(client, back) == "bob is back after 12 s away"
    assert "(away)" not in render_players(mirror.race, sets=8, cards=44, me="p1").plain
    gone = p.PlayerInfo(player="p2", name="bob", status="abandoned", connected=False)
    mirror.take(p.Progress(race="K7QX2", version=8, player=gone))
    text = render_players(mirror.race, sets=8, cards=44, me="p1").plain
    assert "abandoned" in text and "(away)" in text
