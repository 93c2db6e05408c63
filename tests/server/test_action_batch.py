"""Players' actions committed together: one script call applies them in order, each with
its own check-and-set and its own answer, as if each were a call of its own.

Real Valkey, the node's commit link with no spacing (the actions asked for in one turn of
the event loop go in one write, counted by the link's ``writes``), hand-made races: one
running with two players, one that is not running."""

from __future__ import annotations

import asyncio
from typing import Any

from spider_server.settings import Settings
from spider_server.store import keys
from spider_server.store.commits import ACTIONS_A_CALL, CommitLink, action_keys
from spider_server.store.redisconn import connect

RUNNING, ENDED = "BATCH", "ENDED"


def _action(pid: str, seq: int, move: str) -> list[str | bytes]:
    """Action ``seq + 1`` of ``pid``, decided on seq ``seq``: one event, its race time, the
    game's new seq and position."""
    return [
        str(seq),
        pid,
        move,
        f"ack {pid} {seq + 1}".encode(),
        f"entry {pid} {seq + 1}".encode(),
        "1",
        "all",
        f"moved {pid} {seq + 1}".encode(),
        str(1000 * (seq + 1)),
        "seq",
        str(seq + 1),
        "position",
        f"pos {pid} {seq + 1}",
    ]


def _text(reply: Any) -> list[Any]:
    return [x.decode() if isinstance(x, bytes) else x for x in reply]


async def _setup(redis: Any) -> None:
    await redis.hset(keys.meta(RUNNING), mapping={"state": "running", "version": "5"})
    await redis.hset(keys.meta(ENDED), mapping={"state": "finished", "version": "9"})
    for pid in ("p1", "p2"):
        await redis.hset(keys.game(RUNNING, pid), mapping={"seq": "3", "status": "playing"})
    await redis.hset(keys.game(ENDED, "p3"), mapping={"seq": "0", "status": "playing"})


async def test_actions_in_one_call_are_each_checked_and_answered(redis_server: Any) -> None:
    redis = connect(redis_server.url)
    link = CommitLink(redis, Settings(commit_spacing=0))
    try:
        await _setup(redis)
        asked = [
            (action_keys(RUNNING, "p1"), _action("p1", 3, "a1b")),
            (action_keys(RUNNING, "p2"), _action("p2", 2, "c1d")),  # stale: p2 is at seq 3
            (action_keys(RUNNING, "p1"), _action("p1", 4, "undo")),
            (action_keys(ENDED, "p3"), _action("p3", 0, "e1f")),  # that race does not run
            (action_keys(RUNNING, "p2"), _action("p2", 3, "g1h")),
        ]
        pending = [link._run_action_script(k, a) for k, a in asked]
        replies = [_text(r) for r in await asyncio.gather(*pending)]
        assert link.writes == 1  # one turn: one write, one script call
        assert replies == [[1, 6], [0, "seq", 3], [1, 7], [0, "state"], [1, 8]]

        # the race's version is written once, at its last event; the stream holds each
        assert await redis.hget(keys.meta(RUNNING), "version") == b"8"
        stream = await redis.xrange(keys.events(RUNNING))
        assert [(i.decode(), f[b"d"].decode()) for i, f in stream] == [
            ("6-0", "moved p1 4"),
            ("7-0", "moved p1 5"),
            ("8-0", "moved p2 4"),
        ]
        # each applied action's writes; the stale one and the ended race's wrote nothing
        assert await redis.lrange(keys.actions(RUNNING, "p1"), 0, -1) == [b"a1b", b"undo"]
        assert await redis.lrange(keys.times(RUNNING, "p1"), 0, -1) == [b"4000", b"5000"]
        assert await redis.llen(keys.stack(RUNNING, "p1")) == 0  # a move, then its undo
        # the depth kept in marks too (the release before reads it during an upgrade)
        assert await redis.hget(keys.marks(RUNNING, "p1"), "n") == b"0"
        assert await redis.hget(keys.marks(RUNNING, "p2"), "n") == b"1"
        assert await redis.hgetall(keys.acks(RUNNING, "p1")) == {
            b"4": b"ack p1 4",
            b"5": b"ack p1 5",
        }
        assert await redis.lrange(keys.actions(RUNNING, "p2"), 0, -1) == [b"g1h"]
        assert await redis.lrange(keys.stack(RUNNING, "p2"), 0, -1) == [b"g1h"]
        assert await redis.hget(keys.players(RUNNING), "p2") == b"entry p2 4"
        assert await redis.hmget(keys.game(RUNNING, "p2"), "seq", "position") == [
            b"4",
            b"pos p2 4",
        ]
        assert await redis.hget(keys.meta(ENDED), "version") == b"9"
        assert not await redis.exists(keys.actions(ENDED, "p3"), keys.events(ENDED))
    finally:
        await link.aclose()
        await redis.aclose()


async def test_a_batch_larger_than_a_call_is_split_in_order(redis_server: Any) -> None:
    """More actions than one call takes: several calls in the one write, in order (one
    player's actions in a row, each on the seq the one before it left)."""
    redis = connect(redis_server.url)
    link = CommitLink(redis, Settings(commit_spacing=0))
    try:
        await _setup(redis)
        count = ACTIONS_A_CALL + 3
        key_list = action_keys(RUNNING, "p1")
        pending = [
            link._run_action_script(key_list, _action("p1", 3 + i, "a1b")) for i in range(count)
        ]
        replies = [_text(r) for r in await asyncio.gather(*pending)]
        assert link.writes == 1
        assert replies == [[1, 6 + i] for i in range(count)]
        assert await redis.hget(keys.game(RUNNING, "p1"), "seq") == str(3 + count).encode()
        assert await redis.llen(keys.stack(RUNNING, "p1")) == count
        assert await redis.hget(keys.marks(RUNNING, "p1"), "n") == str(count).encode()
        # a mark at every multiple of UNDO_MARK reached, with the position there
        depth = keys.UNDO_MARK
        assert await redis.hget(keys.marks(RUNNING, "p1"), str(depth)) == (
            f"pos p1 {3 + depth}".encode()
        )
    finally:
        await link.aclose()
        await redis.aclose()
