"""The two layouts of a player's keys (``SPIDER_RACE_STORE_LAYOUT``): layout 2 writes each
action's race time into the action's entry and no copy of the undo depth; every node reads
both, and a game written by nodes of each layout in turn (an upgrade going through the
nodes one by one) reads whole.

Real Valkey; the node's commit link with no spacing and hand-made races, then real nodes."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from spider_server.race import Game, UndoBase
from spider_server.settings import Settings
from spider_server.store import keys
from spider_server.store.codec import game_fields
from spider_server.store.commits import CommitLink, action_keys
from spider_server.store.races import RaceStore, timed_actions
from spider_server.store.redisconn import connect
from tests.server.server_helpers import Client, Player, start_race

from .test_action_batch import RUNNING, _action, _setup
from .test_ghosts import OPTIONS, verify


def test_actions_and_times_are_read_from_either_layout() -> None:
    assert timed_actions([b"a1b", b"c1d"], [b"10", b"20"]) == (["a1b", "c1d"], [10, 20])
    assert timed_actions([b"a1b 10", b"undo 20"], []) == (["a1b", "undo"], [10, 20])
    # layout 1's entries first, their times apart; then layout 2's
    mixed = timed_actions([b"a1b", b"+ 20", b"c1d 30"], [b"10"])
    assert mixed == (["a1b", "+", "c1d"], [10, 20, 30])
    # a time missing (a race from before they were kept), or one too many: no times
    assert timed_actions([b"a1b", b"c1d 30"], []) == (["a1b", "c1d"], None)
    assert timed_actions([b"a1b"], [b"10", b"20"]) == (["a1b"], None)


async def _games(redis: Any) -> None:
    """The hand-made race running, its players' games whole (as a race's start writes them)."""
    await _setup(redis)
    for pid in ("p1", "p2"):
        game = Game(player=pid, seq=3, position="pos")
        await redis.hset(keys.game(RUNNING, pid), mapping=game_fields(game))


async def test_a_game_written_in_both_layouts_reads_whole(redis_server: Any) -> None:
    redis = connect(redis_server.url)
    links = {n: CommitLink(redis, Settings(commit_spacing=0, store_layout=n)) for n in (1, 2)}
    races = RaceStore(redis, Settings(), links[2])
    try:
        await _games(redis)
        # p1 acts on a node of layout 1, then on one of layout 2 (which also undoes the
        # move the first made); p2 on layout 2 only
        for layout, pid, seq, move in (
            (1, "p1", 3, "a1b"),
            (1, "p1", 4, "c1d"),
            (2, "p1", 5, "undo"),
            (2, "p1", 6, "e1f"),
            (2, "p2", 3, "g1h"),
        ):
            link = links[layout]
            reply = await link._run_action_script(
                action_keys(RUNNING, pid, layout), _action(pid, seq, move)
            )
            assert reply[0] == 1, reply
        actions = await redis.lrange(keys.actions(RUNNING, "p1"), 0, -1)
        assert actions == [b"a1b", b"c1d", b"undo 6000", b"e1f 7000"]
        assert await redis.lrange(keys.times(RUNNING, "p1"), 0, -1) == [b"4000", b"5000"]
        assert await redis.lrange(keys.stack(RUNNING, "p1"), 0, -1) == [b"a1b", b"e1f"]
        # layout 2 keeps no time list and no copy of the depth
        assert await redis.lrange(keys.actions(RUNNING, "p2"), 0, -1) == [b"g1h 4000"]
        assert not await redis.exists(keys.times(RUNNING, "p2"), keys.marks(RUNNING, "p2"))
        assert await redis.hget(keys.marks(RUNNING, "p1"), "n") == b"2"  # layout 1's last

        race: Any = SimpleNamespace(code=RUNNING, players={"p1": None, "p2": None})
        games, replays, times = await races.load_timed_games(race)
        assert replays == {"p1": ["a1b", "c1d", "undo", "e1f"], "p2": ["g1h"]}
        assert times == {"p1": [4000, 5000, 6000, 7000], "p2": [4000]}
        assert games["p1"].seq == 7 and games["p2"].seq == 4
        assert await races.load_actions(RUNNING, "p1") == ["a1b", "c1d", "undo", "e1f"]
        assert await races.load_undo(RUNNING, "p1") == UndoBase(2, None, ["a1b"])
    finally:
        for link in links.values():
            await link.aclose()
        await redis.aclose()


async def test_back_to_layout_one_midway_its_keys_get_the_race_ttl(redis_server: Any) -> None:
    """A game layout 2 began and layout 1 goes on with (a node going back): the times and
    marks layout 1 makes then, past the first action, get the race's TTL."""
    redis = connect(redis_server.url)
    links = {n: CommitLink(redis, Settings(commit_spacing=0, store_layout=n)) for n in (2, 1)}
    races = RaceStore(redis, Settings(), links[1])
    try:
        await _games(redis)
        for layout, seq, move in ((2, 3, "a1b"), (1, 4, "c1d")):
            reply = await links[layout]._run_action_script(
                action_keys(RUNNING, "p1", layout), _action("p1", seq, move)
            )
            assert reply[0] == 1, reply
        for key in (keys.times(RUNNING, "p1"), keys.marks(RUNNING, "p1")):
            assert 0 < await redis.ttl(key) <= Settings().race_ttl, key
        race: Any = SimpleNamespace(code=RUNNING, players={"p1": None})
        _, replays, times = await races.load_timed_games(race)
        assert replays == {"p1": ["a1b", "c1d"]} and times == {"p1": [4000, 5000]}
    finally:
        for link in links.values():
            await link.aclose()
        await redis.aclose()


async def test_layout_two_keeps_marks_with_the_race_ttl(redis_server: Any) -> None:
    """Layout 2 makes a player's marks at their first mark (layout 1 made them at the
    first action, with the depth's copy): they get the race's TTL there."""
    redis = connect(redis_server.url)
    link = CommitLink(redis, Settings(commit_spacing=0, store_layout=2))
    try:
        await _setup(redis)
        await redis.hset(keys.game(RUNNING, "p1"), "seq", "70")  # no TTL refresh due (seq 64)
        count = keys.UNDO_MARK + 2
        key_list = action_keys(RUNNING, "p1", 2)
        pending = [
            link._run_action_script(key_list, _action("p1", 70 + i, "a1b")) for i in range(count)
        ]
        replies = await asyncio.gather(*pending)
        assert [r[0] for r in replies] == [1] * count
        marks = await redis.hgetall(keys.marks(RUNNING, "p1"))
        assert marks == {str(keys.UNDO_MARK).encode(): f"pos p1 {70 + keys.UNDO_MARK}".encode()}
        assert 0 < await redis.ttl(keys.marks(RUNNING, "p1")) <= Settings().race_ttl
    finally:
        await link.aclose()
        await redis.aclose()


async def _alone(url: str) -> Player:
    """A player in a race of their own on ``url``, dealt."""
    code, (a,), _ = await start_race(url, players=1, **OPTIONS)
    return Player(a, code, next(m for m in a.received if m.type == "ack").view, seed=5)


async def test_an_upgrade_midway_through_a_race(redis_server: Any, server_node: Any) -> None:
    """A player's moves on a node of layout 1, then, reconnected, on one of layout 2 (an
    undo of the first node's move among them): the finished race has every action and its
    time, in order, and checks."""
    old = await server_node(redis_server.url, store_layout=1)
    new = await server_node(redis_server.url, store_layout=2)
    pa = await _alone(old.url)
    a, code = pa.client, pa.code
    for _ in range(3):
        await pa.step()
    token, seq = a.token, pa.seq
    await a.close()
    again = await Client.connect(new.url, token=token, name=None)
    pa = Player(again, code, (await again.join(code)).view, seed=6)
    pa.seq = seq
    assert (await pa.undo()).type == "ack"  # the stack the first node wrote
    for _ in range(3):
        await pa.step()
    await pa.resign()
    finished = await again.expect("finished")
    player = again.player
    assert len(finished.replays[player]) == 8 and finished.replays[player][3] == "undo"
    times = finished.replay_times[player]
    assert len(times) == 8 and times == sorted(times)
    result = verify(finished)
    assert result.returncode == 0, result.stdout + result.stderr
    stored = await new.node.redis.lrange(keys.actions(code, player), 0, -1)
    assert [b" " in entry for entry in stored] == [False] * 3 + [True] * 5


async def test_a_move_that_would_forge_a_time_is_refused(
    redis_server: Any, server_node: Any
) -> None:
    """Layout 2 keeps a time after a space in the action's entry: a move with a space in it
    (or any other text that is not a move) is refused before anything is written."""
    node = await server_node(redis_server.url, store_layout=2)
    pa = await _alone(node.url)
    a, code = pa.client, pa.code
    await pa.step()
    legal = pa.pick()
    assert legal is not None
    for forged in (f"{legal} 0", f"{legal} ", "undo 5", f"{legal}\t1"):
        reply = await a.move(code, pa.seq + 1, forged)
        assert reply.type == "error", (forged, reply)
    stored = await node.node.redis.lrange(keys.actions(code, a.player), 0, -1)
    assert len(stored) == 1 and stored[0].decode().split(" ")[0] == pa.acks[0].move
    await pa.step(legal)  # the game goes on from where it was
    assert pa.seq == 2
