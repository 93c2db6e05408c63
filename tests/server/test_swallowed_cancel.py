"""A loop that goes on after a Redis error ends when its task is cancelled, even when the
cancel reached a call as that call's own error (``raise_if_cancelled``); a node's close
names a task that would not end (``closing.ended``)."""

from __future__ import annotations

import asyncio
import logging
from types import SimpleNamespace

import pytest
from redis.exceptions import TimeoutError as RedisTimeoutError

from spider_server.closing import ended
from spider_server.errors import Unavailable
from spider_server.fanout.hub import Hub
from spider_server.runners.archiver import Archiver
from spider_server.runners.rebuild import Rebuild
from spider_server.runners.seeds import Seeds
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


@pytest.mark.parametrize("error", [Unavailable("read timed out"), ConnectionResetError("reset")])
async def test_the_archive_loop_ends_on_its_cancel_when_a_step_swallows_it(error) -> None:
    """The node's archive loop: a cancel that reached a step's Redis or database call as
    that call's own error (Unavailable, or any other) still ends it."""
    archiver = Archiver.__new__(Archiver)  # only run() and its step are used here
    archiver.settings = SimpleNamespace(sweep_interval=3600.0)
    calls: list[int] = []
    archiver.step = _swallowing(error, calls)
    await _ends_on_cancel(archiver.run(), calls)


class _RanOn(BaseException):
    """Raised by a swallowing call called again: a loop that ran on after its cancel ends
    there (no ``except Exception`` of a loop stops it)."""


def _swallowing(error: BaseException, calls: list[int]):
    """A call that turns a cancel into ``error``, counting its calls in ``calls``."""

    async def call(*_args: object, **_kwargs: object) -> None:
        calls.append(1)
        if len(calls) > 1:
            raise _RanOn
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise error from None

    return call


async def _ends_on_cancel(loop, calls: list[int]) -> None:
    """Run ``loop``, cancel it once it is inside its first call, and check that it ends
    there (cancelled, no second call)."""
    task = asyncio.create_task(loop)
    while not calls:
        await asyncio.sleep(0)
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=2)
    if not done:  # waiting between turns: a cancel now, outside the call, ends it
        task.cancel()
        await asyncio.wait({task}, timeout=2)
        pytest.fail("the loop ran on after its cancel")
    assert task.cancelled(), f"the loop ended otherwise: {task.exception()!r}"
    assert calls == [1]


@pytest.mark.parametrize("error", [Unavailable("read timed out"), RuntimeError("odd")])
async def test_the_ratings_rebuild_loop_ends_on_its_cancel(error) -> None:
    rebuild = Rebuild.__new__(Rebuild)  # only run() and its step are used here
    rebuild.archiver = SimpleNamespace(archive=object())
    rebuild.settings = SimpleNamespace(sweep_interval=3600.0)
    calls: list[int] = []
    rebuild.step = _swallowing(error, calls)
    await _ends_on_cancel(rebuild.run(), calls)


@pytest.mark.parametrize("error", [Unavailable("read timed out"), RuntimeError("odd")])
async def test_the_seed_prover_loop_ends_on_its_cancel(error) -> None:
    seeds = Seeds.__new__(Seeds)  # only run() and its round are used here
    seeds.closed = False
    seeds.settings = SimpleNamespace(pool_interval=3600.0)
    seeds.wake = asyncio.Event()
    seeds.wake.set()  # a round at once
    calls: list[int] = []
    seeds.round = _swallowing(error, calls)
    await _ends_on_cancel(seeds.run(), calls)


async def test_the_pubsub_listener_ends_on_its_cancel_while_connecting() -> None:
    hub = Hub.__new__(Hub)  # only _listen() and its connect are used here
    hub._pubsub = None
    calls: list[int] = []
    hub._connect = _swallowing(RedisTimeoutError("Timeout connecting"), calls)
    await _ends_on_cancel(hub._listen(), calls)


async def test_the_pubsub_listener_ends_on_its_cancel_while_reading(monkeypatch) -> None:
    class _PubSub:
        async def aclose(self) -> None:
            return None

    hub = Hub.__new__(Hub)
    hub._pubsub = _PubSub()
    calls: list[int] = []
    monkeypatch.setattr(
        "spider_server.fanout.hub.read_message",
        _swallowing(RedisTimeoutError("Timeout reading"), calls),
    )
    hub._connect = _swallowing(RedisTimeoutError("Timeout connecting"), calls)
    await _ends_on_cancel(hub._listen(), calls)
