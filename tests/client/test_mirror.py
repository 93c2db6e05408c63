"""The race mirror without any I/O: the server's messages in, the race and the view out."""

from __future__ import annotations

import pytest

from spider_client import RaceMirror, ViewChanged
from spider_client import protocol as p
from spider_engine import Board, Move

CODE = "K7QX2"
DEAL = Board.deal("spider1", "mirror")
VIEW0 = DEAL.view_text()
_after = DEAL.copy()
_after.push(Move.from_text(_after.legal_moves.texts()[1]))
VIEW1 = _after.view_text()


def race(state: str = "open", version: int = 3, **changes: object) -> p.RaceInfo:
    info = p.RaceInfo(
        code=CODE,
        variant="spider1",
        state=state,
        version=version,
        creator="p1",
        max_players=4,
        time_limit=600,
        undo=True,
        live_boards=False,
        countdown=3,
        players=[p.PlayerInfo("p1", "ada"), p.PlayerInfo("p2", "bob")],
    )
    for name, value in changes.items():
        setattr(info, name, value)
    return info


def joined(info: p.RaceInfo | None = None, **fields: object) -> p.Joined:
    return p.Joined(req=1, role="player", race=info or race(), **fields)  # type: ignore[arg-type]


def mirror_in(info: p.RaceInfo | None = None, **fields: object) -> RaceMirror:
    mirror = RaceMirror(player="p1")
    mirror.take(joined(info, **fields))
    return mirror


def ack(seq: int, view: str = VIEW1, code: str = CODE) -> p.Ack:
    return p.Ack(code=code, seq=seq, move="a1e", view=view, status="playing", moves=seq, score=499)


def test_joined_sets_the_race_and_the_view() -> None:
    mirror = RaceMirror(player="p1")
    out = mirror.take(joined(race("running", 5), view=VIEW0, seq=2))
    assert out == [ViewChanged(view=VIEW0, seq=2)]
    assert (mirror.code, mirror.role, mirror.version, mirror.seq) == (CODE, "player", 5, 2)
    assert mirror.race is not None and mirror.race.state == "running"
    assert mirror.view_text == VIEW0
    assert mirror.view is not None and mirror.view.text() == VIEW0
    assert mirror.legal_moves() == Board.from_text(VIEW0).legal_moves.texts()
    assert mirror.me is not None and mirror.me.name == "ada" and mirror.status == "waiting"
    # the same view again: nothing new to tell
    assert mirror.take(joined(race("running", 5), view=VIEW0, seq=2)) == []


def test_before_anything_there_is_no_race() -> None:
    mirror = RaceMirror()
    assert mirror.race is None and mirror.me is None and mirror.status is None
    assert mirror.view is None and mirror.legal_moves() == [] and not mirror.finished
    assert mirror.take(p.Done(req=1)) == []
    assert mirror.take(p.Welcome("p1", "ada", "t", "n1", 0.0)) == []


def test_joined_of_another_race_forgets_the_one_held() -> None:
    mirror = mirror_in(race("running", 9), view=VIEW0, seq=4, boards={"p2": VIEW0})
    other = race("open", 2, code="ZZZZZ")
    out = mirror.take(joined(other))
    assert out == []
    assert (mirror.code, mirror.seq, mirror.version) == ("ZZZZZ", 0, 2)
    assert mirror.view is None and mirror.boards == {}


def test_joined_events_after_since_are_given_and_only_the_newer_ones_applied() -> None:
    mirror = mirror_in(race("open", 3))
    started = p.Started(CODE, 5, started_at=10.0, ends_at=70.0, commitment="c")
    events = [
        p.fields_of(p.PlayerReady(CODE, 3, player="p2", ready=True)),  # seen already
        p.fields_of(p.BoardShown(CODE, 4, player="p2", view=VIEW0)),  # in the snapshot
        {"type": "no_such_event", "version": 5},  # left out
        p.fields_of(started),  # newer than the snapshot
    ]
    snapshot = race("countdown", 4, boards=None)
    out = mirror.take(joined(snapshot, events=events, boards={"p1": VIEW1}))
    assert [e.type for e in out] == ["board", "started"]
    assert mirror.version == 5 and mirror.race is snapshot
    # the board in the snapshot's range is kept, the start is applied
    assert mirror.boards == {"p1": VIEW1, "p2": VIEW0}
    assert snapshot.state == "running" and snapshot.commitment == "c"
    assert snapshot.version == 5


def test_a_shown_board_in_the_snapshot_does_not_replace_one_held() -> None:
    mirror = mirror_in(race("running", 3))
    shown = p.fields_of(p.BoardShown(CODE, 4, player="p2", view=VIEW0))
    mirror.take(joined(race("running", 4), boards={"p2": VIEW1}, events=[shown]))
    assert mirror.boards == {"p2": VIEW1}


def test_joined_behind_the_seq_held_keeps_the_view() -> None:
    mirror = mirror_in(race("running", 5), view=VIEW0, seq=0)
    mirror.take(ack(1))
    assert mirror.take(joined(race("running", 5), view=VIEW0, seq=0)) == []
    assert (mirror.seq, mirror.view_text) == (1, VIEW1)


def test_events_of_another_race_or_seen_already_change_nothing() -> None:
    mirror = mirror_in(race("open", 3))
    assert mirror.take(p.Countdown("ZZZZZ", 9, starts_at=1.0)) == []
    assert mirror.take(p.Countdown(CODE, 3, starts_at=1.0)) == []
    assert mirror.race is not None and mirror.race.state == "open" and mirror.version == 3
    event = p.Countdown(CODE, 4, starts_at=1.0)
    assert mirror.take(event) == [event]
    assert mirror.version == 4 and mirror.race.version == 4


def test_player_joined_and_progress_replace_or_add_a_line() -> None:
    mirror = mirror_in()
    carol = p.PlayerInfo("p3", "carol")
    mirror.take(p.PlayerJoined(CODE, 4, player=carol))
    moved = p.PlayerInfo("p1", "ada", status="playing", moves=7, score=493)
    mirror.take(p.Progress(CODE, 5, player=moved))
    assert mirror.race is not None
    assert [i.player for i in mirror.race.players] == ["p1", "p2", "p3"]
    assert mirror.me is moved and mirror.race.players[2] is carol


@pytest.mark.parametrize(
    ("state", "players", "left"), [("open", ["p1"], None), ("running", ["p1", "p2"], "p2")]
)
def test_player_left(state: str, players: list[str], left: str | None) -> None:
    mirror = mirror_in(race(state))
    mirror.take(p.PlayerLeft(CODE, 4, player="p2"))
    assert mirror.race is not None
    assert [i.player for i in mirror.race.players] == players
    if left is not None:
        info = mirror.race.players[1]
        assert (info.status, info.connected) == ("left", False)


def test_ready_and_not_ready_during_a_countdown_reopens_the_race() -> None:
    mirror = mirror_in()
    mirror.take(p.PlayerReady(CODE, 4, player="p2", ready=True))
    mirror.take(p.Countdown(CODE, 5, starts_at=12.5))
    assert mirror.race is not None and mirror.race.players[1].ready
    assert (mirror.race.state, mirror.race.starts_at) == ("countdown", 12.5)
    mirror.take(p.PlayerReady(CODE, 6, player="p2", ready=False))
    assert not mirror.race.players[1].ready
    assert (mirror.race.state, mirror.race.starts_at) == ("open", None)


def test_started_runs_the_race_and_its_waiting_players() -> None:
    info = race("countdown")
    info.players[1].status = "left"
    mirror = mirror_in(info)
    mirror.take(p.Started(CODE, 4, started_at=10.0, ends_at=610.0, commitment="abc"))
    assert (info.state, info.starts_at, info.ends_at, info.commitment) == (
        "running",
        10.0,
        610.0,
        "abc",
    )
    assert [i.status for i in info.players] == ["playing", "left"]


def test_board_and_prepared() -> None:
    info = race(preparing=True)
    mirror = mirror_in(info, boards={"p2": VIEW0})
    mirror.take(p.BoardShown(CODE, 4, player="p2", view=VIEW1))
    assert mirror.boards == {"p2": VIEW1}  # a live board replaces the one held
    mirror.take(p.Prepared(CODE, 5, commitment="c0ffee"))
    assert (info.preparing, info.commitment) == (False, "c0ffee")


def test_finished_sets_results_reveals_and_statuses_but_not_times() -> None:
    info = race("running")
    mirror = mirror_in(info, boards={"p2": VIEW0})
    results = [
        p.Result(1, "p1", "ada", "won", 42.5, 8, 120, 1290),
        p.Result(2, "p2", "bob", "resigned", None, 0, 3, 497),
    ]
    finished = p.Finished(
        CODE,
        4,
        results=results,
        seed="s",
        salt="salt",
        commitment="c",
        replays={"p1": ["a1e"], "p2": ["resign"]},
        boards={"p1": VIEW1, "p2": VIEW1},
    )
    assert mirror.take(finished) == [finished]
    assert mirror.finished and info.results is results
    assert (info.seed, info.salt, info.commitment) == ("s", "salt", "c")
    assert info.replays == {"p1": ["a1e"], "p2": ["resign"]}
    assert [i.status for i in info.players] == ["won", "resigned"]
    assert [i.time for i in info.players] == [None, None]
    assert mirror.boards == {"p1": VIEW1, "p2": VIEW1}


def test_an_ack_sets_the_view_and_the_players_progress() -> None:
    mirror = mirror_in(race("running"), view=VIEW0, seq=0)
    a = ack(1)
    assert mirror.take(a) == [a, ViewChanged(view=VIEW1, seq=1)]
    assert (mirror.seq, mirror.view_text) == (1, VIEW1)
    assert mirror.view is not None and mirror.view.text() == VIEW1
    me = mirror.me
    assert me is not None and (me.status, me.moves, me.score) == ("playing", 1, 499)


@pytest.mark.parametrize("late", [ack(0, VIEW0), ack(5, VIEW0, code="ZZZZZ")])
def test_an_ack_behind_or_of_another_race_is_only_given_back(late: p.Ack) -> None:
    mirror = mirror_in(race("running"), view=VIEW0, seq=0)
    mirror.take(ack(1))
    assert mirror.take(late) == [late]
    assert (mirror.seq, mirror.view_text) == (1, VIEW1)
    assert mirror.me is not None and mirror.me.moves == 1


def test_forget_race() -> None:
    mirror = mirror_in(race("running", 7), view=VIEW0, seq=3, boards={"p2": VIEW0})
    mirror.forget_race()
    assert (mirror.code, mirror.role, mirror.race, mirror.view) == (None, None, None, None)
    assert (mirror.seq, mirror.version, mirror.boards) == (0, 0, {})
    assert mirror.player == "p1"


def test_messages_decoded_from_frames() -> None:
    """The wire's way in: frames decoded by the protocol, then taken in order."""
    mirror = RaceMirror(player="p1")
    frames = [
        p.encode(joined(race("countdown", 3))),
        p.pack(
            [
                p.Started(CODE, 4, started_at=1.0, ends_at=2.0, commitment="c"),
                p.Progress(CODE, 5, player=p.PlayerInfo("p2", "bob", status="playing", moves=1)),
            ]
        ),
        p.encode(p.Ack(CODE, 0, "", VIEW0, "playing", 0, 500)),
    ]
    given = [e for frame in frames for m in p.decode_all(frame) for e in mirror.take(m)]
    assert [e.type for e in given] == ["started", "progress", "ack", "view"]
    assert mirror.race is not None and mirror.race.players[1].moves == 1
    assert mirror.view_text == VIEW0 and mirror.version == 5


def test_a_snapshot_older_than_the_race_held_is_not_taken() -> None:
    """A move to the race's URL: the old connection's events run ahead of the new one's
    snapshot; the held race stays, and the events the reply carries after it apply."""
    mirror = mirror_in(race("countdown", version=9))
    started = p.Started(CODE, 10, started_at=10.0, ends_at=610.0, commitment="abc")
    assert mirror.take(started) == [started]  # on the old connection
    out = mirror.take(joined(race("countdown", version=9)))  # the new one's, older
    assert out == [] and mirror.race is not None
    assert (mirror.race.state, mirror.version) == ("running", 10)
    again = p.Started(CODE, 10, started_at=10.0, ends_at=610.0, commitment="abc")
    assert mirror.take(again) == []  # the new connection's copy: seen already
    mirror.take(p.PlayerReady(CODE, 11, player="p2", ready=True))
    assert mirror.version == 11
