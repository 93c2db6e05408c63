"""A loop that goes on after a Redis error ends when its task is cancelled, even when the
cancel reached a call as that call's own error (``raise_if_cancelled``); a node's close
names a task that would not end (``closing.ended``)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from spider_server.closing import ended
from spider_server.errors import Unavailable
from spider_server.store.redisconn import raise_if_cancelled


async def _swallowing_call() -> None:
    """A call that turns a cancel into its own error, as a client's read timeout can."""
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        raise Unavailable("read timed out") from None


async def _loop(checks: bool, stop: list[bool] | None = None) -> None:
    while not stop:
        try:
            await _swallowing_call()
        except Unavailable:
            if checks:
                raise_if_cancelled()


async def test_a_loop_that_checks_ends_on_its_cancel() -> None:
    task = asyncio.create_task(_loop(checks=True))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 2)


async def test_a_loop_that_does_not_check_runs_on_and_is_named_when_left(caplog) -> None:
    stop: list[bool] = []
    task = asyncio.create_task(_loop(checks=False, stop=stop))
    await asyncio.sleep(0)
    task.cancel()
    with caplog.at_level(logging.WARNING, logger="spider_server.closing"):
        await ended([task], seconds=0.2)
    assert not task.done()  # the cancel was swallowed: it runs on
    assert "_loop did not end within 0 s; left behind" in caplog.text
    stop.append(True)  # end it for the test's own close
    task.cancel()
    await asyncio.wait_for(task, 2)
