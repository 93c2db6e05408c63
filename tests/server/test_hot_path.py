"""The hot path of a move, where it was made cheaper without changing what it does.

- The node that commits an action dispatches its events at once (the mover's ack and
  progress leave together), when they follow what it dispatched (else they wait for those
  before them); a copy from the channel is then skipped, so every subscriber gets each
  event once, in order.
- Commands are packed by hiredis: the same bytes as redis-py's own packer."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest

from spider_server.fanout.hub import EventFrame, Hub, Subscription
from spider_server.store import keys
from spider_server.store.redisconn import connect


class Recorder:
    """A subscriber's connection side that keeps what it is sent."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []

    def send_event(self, event: EventFrame) -> None:
        self.frames.append(msgpack.unpackb(event.frame, raw=False))

    def send_progress(self, event: EventFrame) -> None:
        self.send_event(event)

    def deal_out(self, code: str) -> None:
        pass


def _progress(moves: int) -> bytes:
    info = {"player": "p1", "name": "a", "status": "playing", "moves": moves}
    return msgpack.packb({"type": "progress", "race": "ABCDE", "player": info})


async def _watched(hub: Hub, seen: int) -> tuple[Recorder, Subscription]:
    await hub.watch("ABCDE")
    rec = Recorder()
    sub = Subscription(hub, rec, "ABCDE", "spectator", seen)
    hub.add(sub, state="running", starts_at=None, ends_at=None, statuses={})
    return rec, sub


async def test_committed_events_that_follow_are_dispatched_once(hub) -> None:
    rec, _ = await _watched(hub, 5)
    hub.committed("ABCDE", 7, [("all", _progress(1)), ("spectators", _progress(2))])
    assert [(f["version"], f["player"]["moves"]) for f in rec.frames] == [(6, 1), (7, 2)]
    # the channel brings the same events afterwards: skipped
    hub._on_message(b"{race:ABCDE}", b"6:all:" + _progress(1))
    hub._on_message(b"{race:ABCDE}", b"7:spectators:" + _progress(2))
    assert [f["version"] for f in rec.frames] == [6, 7]
    assert hub.watches["ABCDE"].seen == 7


async def test_committed_events_after_a_gap_wait_for_those_before_them(hub) -> None:
    rec, _ = await _watched(hub, 4)
    # version 5 (another node's) is not heard yet: nothing is sent out of order
    hub.committed("ABCDE", 7, [("all", _progress(1)), ("all", _progress(2))])
    assert rec.frames == []
    assert hub.watches["ABCDE"].seen == 4
    for version, moves in ((5, 9), (6, 1), (7, 2)):
        hub._on_message(b"{race:ABCDE}", f"{version}:all:".encode() + _progress(moves))
    assert [(f["version"], f["player"]["moves"]) for f in rec.frames] == [(5, 9), (6, 1), (7, 2)]


async def test_committed_events_of_a_race_not_watched_here_are_ignored(hub) -> None:
    hub.committed("ZZZZZ", 3, [("all", _progress(1))])
    assert "ZZZZZ" not in hub.watches


async def test_the_sweep_makes_frames_only_of_events_not_dispatched_meanwhile(
    hub, redis_server, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sweep finds the race's version ahead of what was dispatched here and reads the
    stream; this node's own commits dispatch 5 and 6 while that read is on its way. Each
    event goes out once, and only 7 is made into a frame from what the sweep read."""
    redis = connect(redis_server.url)
    try:
        for version, moves in ((5, 9), (6, 1), (7, 2)):
            await redis.xadd(
                keys.events("ABCDE"),
                {"v": str(version), "a": "all", "d": _progress(moves)},
                id=f"{version}-0",
            )
        await redis.hset(keys.meta("ABCDE"), "version", "7")
    finally:
        await redis.aclose()
    rec, _ = await _watched(hub, 4)
    read = hub.store.races.events_after

    async def read_while_committed(code: str, since: int, upto: int | None = None) -> Any:
        stored = await read(code, since, upto)
        hub.committed("ABCDE", 6, [("all", _progress(9)), ("all", _progress(1))])
        return stored

    made: list[int] = []
    stored_frame = EventFrame.stored

    def counted(version: int, audience: str, data: bytes) -> EventFrame:
        made.append(version)
        return stored_frame(version, audience, data)

    monkeypatch.setattr(hub.store.races, "events_after", read_while_committed)
    monkeypatch.setattr(EventFrame, "stored", counted)
    await hub.sweep()
    assert [(f["version"], f["player"]["moves"]) for f in rec.frames] == [(5, 9), (6, 1), (7, 2)]
    assert made == [5, 6, 7], made  # 5 and 6 by the commits, 7 by the sweep; none twice
    assert hub.watches["ABCDE"].seen == 7


@pytest.mark.parametrize(
    "args",
    [
        ("EVALSHA", "a" * 40, 2, "{race:ABCDE}:meta", "{race:ABCDE}:players", "12", b"\x00\xff"),
        ("SET", "name", "Zoë ♠"),
        ("INCRBY", "n", -7),
        ("SET", "x", 1.5),  # a float: packed as before
        ("CONFIG GET", "maxmemory"),  # words in the command: packed as before
        ("SET", "x", memoryview(b"abc")),
    ],
)
def test_commands_are_packed_as_the_python_packer_packs_them(args) -> None:
    from redis.asyncio.connection import Connection

    from spider_server.store.redisconn import FastConnection

    assert b"".join(FastConnection().pack_command(*args)) == b"".join(
        Connection().pack_command(*args)
    )


async def test_the_fast_packer_talks_to_a_real_redis(redis_server) -> None:
    redis = connect(redis_server.url)
    try:
        await redis.set("name", "Zoë ♠")
        assert (await redis.get("name")).decode() == "Zoë ♠"
        assert await redis.incrby("n", -7) == -7
    finally:
        await redis.aclose()


async def test_messages_that_arrive_together_are_all_taken_in_order(hub, redis_server) -> None:
    """Hundreds of events published at once: the listener takes every one from the
    channel, in order, without a catch-up from the stream (nothing was missed)."""
    rec, _ = await _watched(hub, 0)
    await hub.start()
    fetched: list[tuple[str, int]] = []
    real_fetch = hub.fetch

    async def fetch(code: str, after: int):  # records catch-ups, then does them
        fetched.append((code, after))
        return await real_fetch(code, after)

    hub.fetch = fetch
    publisher = connect(redis_server.url)
    try:
        for _ in range(100):  # until the hub's subscription is in place
            if (await publisher.pubsub_numsub(keys.channel("ABCDE")))[0][1] == 1:
                break
            await asyncio.sleep(0.02)
        async with publisher.pipeline(transaction=False) as pipe:
            for version in range(1, 501):
                pipe.publish(keys.channel("ABCDE"), f"{version}:all:".encode() + _progress(version))
            await pipe.execute()
        for _ in range(200):
            if len(rec.frames) == 500:
                break
            await asyncio.sleep(0.02)
    finally:
        await publisher.aclose()
    assert [f["version"] for f in rec.frames] == list(range(1, 501))
    assert [f["player"]["moves"] for f in rec.frames] == list(range(1, 501))
    assert fetched == []


@pytest.mark.parametrize(
    "fields",
    [
        {"type": "progress", "race": "K7QX2", "player": {"player": "p1", "moves": 3}},
        {"type": "finished", "race": "K7QX2", **{f"f{i}": i for i in range(20)}},  # big map
        {"type": "odd", "race": "K7QX2", "version": 1},  # a stored version is replaced
    ],
)
def test_an_event_is_stamped_with_its_version(fields) -> None:
    from spider_server.transport import stamp

    frame, stamped = stamp(4242, msgpack.packb(fields))
    assert stamped == {**fields, "version": 4242}
    assert msgpack.unpackb(frame, raw=False) == stamped


def test_a_players_entry_after_an_action_keeps_every_other_field() -> None:
    """The entry is built field by field on the hot path: it must equal the entry with
    the game's counts replaced, whatever fields an entry has."""
    import dataclasses

    from spider_server.race import Entry, Game, _entry_of

    values: dict[str, Any] = {
        "player": "p1", "name": "ada", "order": 3, "ready": True, "status": "playing",
        "moves": 4, "turned_up": 2, "runs": 1, "deals_left": 3, "score": 496, "time": None,
        "hints": 2, "suited": 7, "raised_at": 3.25, "away_since": 1000.5, "bot": True, "ghost": True,
        "undo_only_since": None, "away_total": 12.5, "idle_at": 1180.0, "dodged": True,
        "guest": True,
    }  # fmt: skip
    assert {f.name for f in dataclasses.fields(Entry)} == set(values)
    entry = Entry(**values)
    game = Game(
        player="p1", seq=9, position="x", status="won", moves=9, turned_up=5, runs=8,
        deals_left=0, score=1391, time=12.5, down0=44, suited=96, raised_at=12.5,
        undo_only_since=1010.0,
    )  # fmt: skip
    counts = (
        "status", "moves", "turned_up", "runs", "deals_left", "score", "time", "suited",
        "raised_at", "undo_only_since",
    )  # fmt: skip
    assert _entry_of(entry, game) == dataclasses.replace(
        entry, **{name: getattr(game, name) for name in counts}
    )


def test_an_entry_kept_in_redis_reads_back_the_same_with_or_without_its_flags() -> None:
    """The seldom-set flags are left out of the stored entry while False (a move writes its
    player's entry): read back, the entry is the same, flags set or not."""
    import dataclasses

    from spider_server.race import Entry
    from spider_server.store.codec import RARE_FLAGS, entry_bytes, entry_from

    plain = Entry(player="p1", name="ada", order=1)
    flagged = dataclasses.replace(plain, **dict.fromkeys(RARE_FLAGS, True))
    for entry in (plain, flagged):
        assert entry_from(entry_bytes(entry)) == entry
    assert len(entry_bytes(plain)) < len(entry_bytes(flagged))
    assert all(name.encode() not in entry_bytes(plain) for name in RARE_FLAGS)
