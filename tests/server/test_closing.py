"""A node's shutdown never hangs on one step: ``closing.bounded`` gives each a deadline."""

from __future__ import annotations

import asyncio
import logging

from spider_server.closing import between_turns, bounded


async def test_a_step_that_never_ends_is_left_behind_at_its_deadline(caplog) -> None:
    never = asyncio.get_running_loop().create_future()
    with caplog.at_level(logging.WARNING, logger="spider_server.closing"):
        await asyncio.wait_for(bounded(never, seconds=0.05), 10)
    assert never.cancelled()
    assert "did not end" in caplog.text


async def test_a_step_that_fails_is_logged_not_raised(caplog) -> None:
    async def fails() -> None:
        raise RuntimeError("broken link")

    with caplog.at_level(logging.ERROR, logger="spider_server.closing"):
        await bounded(fails())
    assert "broken link" in caplog.text


async def test_a_step_that_ends_is_awaited() -> None:
    done: list[int] = []

    async def ends() -> None:
        await asyncio.sleep(0)
        done.append(1)

    await bounded(ends())
    assert done == [1]


async def test_a_loop_whose_cancel_was_lost_ends_at_its_next_turn() -> None:
    """A cancel taken by a library's timeout for its own (the loop goes on as if the call
    had answered) still ends a loop that waits with ``between_turns``."""
    turns = 0
    lost = asyncio.Event()

    async def loop() -> None:
        nonlocal turns
        while True:
            turns += 1
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:  # lost: the turn ends as if it had answered
                lost.set()
            await between_turns(0.01)

    task = asyncio.get_running_loop().create_task(loop())
    await asyncio.sleep(0)  # in its first turn
    task.cancel()
    await asyncio.wait_for(lost.wait(), 10)
    done, _ = await asyncio.wait([task], timeout=10)
    assert task in done and task.cancelled()
    assert turns == 1


async def test_the_lobby_loop_ends_when_a_turn_lost_its_cancel(redis_server, server_node) -> None:
    """The quick-match loop (a turn every ``match_turn``) ends on a cancel that one of its
    turns swallowed, instead of turning on until the node's closing leaves it behind."""
    node = (await server_node(redis_server.url, match_turn=0.01)).node
    lobby = node.lobby
    lost = asyncio.Event()
    turns = 0

    async def turn() -> None:
        nonlocal turns
        turns += 1
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            lost.set()

    lobby.turn = turn  # type: ignore[method-assign]
    task = asyncio.get_running_loop().create_task(lobby.run())
    while turns == 0:  # the node's own loop may take the first turn: ours then waits its own
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)
    task.cancel()
    done, _ = await asyncio.wait([task], timeout=10)
    assert lost.is_set()  # the turn swallowed it
    assert task in done and task.cancelled()
