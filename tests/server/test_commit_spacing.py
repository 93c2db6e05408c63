"""Players' actions written to Redis at most once every ``commit_spacing``: an action that
comes sooner after the last write waits for the next, with whatever else came meanwhile;
one that comes after a quiet spell, or after a write of its own player's actions alone, is
written in the same turn of the event loop.

Counted on a real Valkey through the node's commit link (its ``writes``), never timed: a
timer never fires early, and a batch that a stalled machine split is tried again."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from spider_server.errors import ConfigError
from spider_server.settings import Settings
from spider_server.store.commits import CommitLink
from spider_server.store.redisconn import connect

SPACING = 0.1
"""The spacing under test, in seconds (the setting's largest)."""

KEYS = [f"{{spacing}}:k{i}" for i in range(10)]


def action(player: str = "p") -> list[str | bytes]:
    """The arguments of an action of ``player`` on a race that does not exist: the script
    answers ``{0, 'state'}`` and writes nothing, which is all a count of writes needs."""
    return ["0", player, "f1c", b"", b"", "0", "0"]


async def _link(url: str) -> tuple[Any, CommitLink]:
    redis = connect(url)
    return redis, CommitLink(redis, Settings(commit_spacing=SPACING))


def _reply(reply: Any) -> list[Any]:
    return [x.decode() if isinstance(x, bytes) else x for x in reply]


async def test_actions_that_come_within_the_spacing_share_one_write(redis_server: Any) -> None:
    redis, link = await _link(redis_server.url)
    try:
        assert _reply(await link._run_action_script(KEYS, action("p"))) == [0, "state"]
        assert link.writes == 1
        for _ in range(5):  # a machine stalled past the spacing between two turns: again
            before = link.writes
            first = link._run_action_script(KEYS, action("q"))
            await asyncio.sleep(0)  # another turn of the event loop
            second = link._run_action_script(KEYS, action("r"))
            replies = await asyncio.gather(first, second)
            assert [_reply(r) for r in replies] == [[0, "state"], [0, "state"]]
            if link.writes == before + 1:
                break
        assert link.writes == before + 1, "two actions within the spacing took two writes"
    finally:
        await redis.aclose()


async def test_an_action_after_a_quiet_spell_is_written_at_once(redis_server: Any) -> None:
    redis, link = await _link(redis_server.url)
    try:
        await link._run_action_script(KEYS, action("p"))
        await asyncio.sleep(SPACING * 1.5)  # the loop's clock moves past the spacing
        pending = link._run_action_script(KEYS, action("q"))
        await asyncio.sleep(0)  # one turn: the write is made in it, no timer waited for
        assert link.writes == 2
        assert _reply(await pending) == [0, "state"]
    finally:
        await redis.aclose()


async def test_no_spacing_writes_each_turn_s_actions_at_once(redis_server: Any) -> None:
    redis = connect(redis_server.url)
    link = CommitLink(redis, Settings(commit_spacing=0))
    try:
        for n in range(1, 4):
            pending = link._run_action_script(KEYS, action(f"p{n}"))
            await asyncio.sleep(0)
            assert link.writes == n
            await pending
    finally:
        await redis.aclose()


async def test_a_player_acting_alone_is_not_held_back_by_their_own_writes(
    redis_server: Any,
) -> None:
    """A lone bot moving as fast as its acks come is written at once each time; another
    player's action after that write waits for the spacing like any."""
    redis, link = await _link(redis_server.url)
    try:
        for n in range(1, 4):
            pending = link._run_action_script(KEYS, action("bot"))
            await asyncio.sleep(0)  # one turn: written in it
            assert link.writes == n
            await pending
        for _ in range(5):  # a machine stalled past the spacing: again
            before = link.writes
            await link._run_action_script(KEYS, action("bot"))
            other = link._run_action_script(KEYS, action("someone"))
            await asyncio.sleep(0)
            if link.writes == before + 1:  # the other's action waits for the next write
                break
        assert link.writes == before + 1
        await other
        assert link.writes == before + 2
    finally:
        await redis.aclose()


def test_the_spacing_is_a_setting_with_a_range() -> None:
    assert Settings.from_env({"SPIDER_RACE_COMMIT_SPACING": "0.01"}).commit_spacing == 0.01
    assert Settings().commit_spacing == 0.01
    with pytest.raises(ConfigError, match="COMMIT_SPACING|commit_spacing"):
        Settings.from_env({"SPIDER_RACE_COMMIT_SPACING": "5"})
