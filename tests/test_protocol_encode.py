"""The protocol's encoder: the same maps as :func:`dataclasses.asdict`, and frames that
decode back to the message."""

from __future__ import annotations

import typing
from dataclasses import asdict
from typing import Any

import msgpack
import pytest

from spider_client import protocol as p

RESULT = p.Result(
    rank=1, player="p1", name="Ann", status="won", time=12.5, runs=8, moves=140, score=1200, hints=2
)
PLAYER = p.PlayerInfo(player="p1", name="Ann", ready=True, moves=3, turned_up=1, runs=0)
RACE = p.RaceInfo(
    code="ABCD",
    variant="myrmex+blind",
    state="finished",
    version=41,
    creator="p1",
    max_players=4,
    time_limit=600,
    undo=True,
    live_boards=False,
    countdown=3,
    players=[PLAYER, p.PlayerInfo(player="p2", name="Bo")],
    results=[RESULT],
    replays={"p1": ["a1b", "+", "undo"]},
    seed="s",
    salt="00ff",
)

MESSAGES: list[Any] = [
    p.Hello(name="Ann"),
    p.MoveAction(code="ABCD", seq=7, move="d1j"),
    p.Ack(code="ABCD", seq=7, move="d1j", view="a view", status="playing", moves=7, score=493),
    p.Progress(race="ABCD", version=3, player=PLAYER),
    p.Finished(
        race="ABCD",
        version=41,
        results=[RESULT],
        seed=None,
        salt=None,
        commitment="c0ffee",
        replays=None,
        boards={"p1": "x"},
    ),
    p.Joined(
        req=2,
        role="spectator",
        race=RACE,
        boards={"p1": "v"},
        events=[{"type": "progress", "version": 2}],
    ),
    p.Error(error="illegal_move", message="no", req=None, seq=3, race="ABCD"),
]


def _lists(value: Any) -> Any:
    """asdict keeps tuples; msgpack writes both as arrays."""
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_frames_are_the_packed_asdict(message: Any) -> None:
    assert p.encode(message) == msgpack.packb(asdict(message), use_bin_type=True)


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_frames_decode_back(message: Any) -> None:
    frame = p.encode(message)
    assert msgpack.unpackb(frame, raw=False) == _lists(asdict(message))
    if message.type in p.SERVER_TYPES:
        assert p.decode(frame) == message


def test_fields_of_is_a_new_map() -> None:
    """Changing the map leaves the message as it was."""
    mapped = p.fields_of(RACE)
    assert mapped == {f: getattr(RACE, f) for f in mapped} and "players" in mapped
    mapped["players"] = []
    mapped.pop("replays")
    assert len(RACE.players) == 2
    assert RACE.replays == {"p1": ["a1b", "+", "undo"]}


def test_the_lists_of_messages_agree_with_the_unions() -> None:
    assert set(typing.get_args(p.RaceEvent)) == set(p.EVENT_CLASSES)
    assert set(typing.get_args(p.ClientMessage)) == set(p.CLIENT_TYPES.values())


def test_a_frame_of_events_sent_together_is_read_item_by_item() -> None:
    import msgpack

    info = {"player": "p1", "name": "a", "status": "playing", "moves": 2}
    progress = {"type": "progress", "race": "K7QX2", "version": 5, "player": info}
    newer = {**progress, "version": 7, "player": {**info, "moves": 3}}
    unknown = {"type": "from_the_future", "race": "K7QX2", "version": 6}
    got = p.decode_all(msgpack.packb([progress, unknown, newer]))
    assert [(m.version, m.player.moves) for m in got] == [(5, 2), (7, 3)]
    assert all(isinstance(m, p.Progress) for m in got)
    # one message in a frame: as before, and an unknown one is an error
    assert [m.version for m in p.decode_all(msgpack.packb(progress))] == [5]
    with pytest.raises(ValueError):
        p.decode_all(msgpack.packb(unknown))
