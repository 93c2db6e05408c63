"""A node's shutdown never hangs on one step: ``closing.bounded`` gives each a deadline."""

from __future__ import annotations

import asyncio
import logging

from spider_server.closing import bounded


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
