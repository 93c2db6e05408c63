"""The node's background tasks: started by a :class:`Spawner`, and closed with deadlines:
each step of a node's shutdown is awaited for a bounded time, so that a task that will not
end, or a link that will not close, never holds the node open."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Coroutine, Sequence
from typing import Any, Protocol

from .store.redisconn import raise_if_cancelled

__all__ = ["CLOSE_STEP", "Spawner", "between_turns", "bounded", "ended", "stop"]

log = logging.getLogger(__name__)


class Spawner(Protocol):
    """Runs coroutines in the background (the node keeps them, and closes them with
    itself; once closed it runs none: None)."""

    def spawn(self, coro: Coroutine[object, object, object]) -> asyncio.Task[object] | None:
        """Run ``coro`` in the background; None (``coro`` closed, not run) once closed."""


CLOSE_STEP = 10.0
"""Seconds each step of closing may take."""


async def between_turns(seconds: float) -> None:
    """Sleep ``seconds`` between two turns of a background loop, then end the loop
    (CancelledError) if it was asked to stop and that cancel was lost on the way: a
    library's timeout that ends at the moment of the cancel can take it for its own and
    raise its timeout error instead, which the loop logs and survives; the task's count of
    cancels asked (``cancelling()``) still says so, and the loop ends here."""
    await asyncio.sleep(seconds)
    raise_if_cancelled()


async def bounded(step: Awaitable[Any], seconds: float = CLOSE_STEP) -> None:
    """Await one step of closing for at most ``seconds``: past it the step is cancelled
    and left behind with a warning; its errors are logged, never raised."""
    try:
        async with asyncio.timeout(seconds):
            await step
    except TimeoutError:
        log.warning("closing: %s did not end within %.0f s; left behind", _name(step), seconds)
    except Exception:
        log.exception("closing: %s failed", _name(step))


def _name(step: object) -> str:
    """The step as a log names it: its coroutine's name (``SolverWorkers.stop``)."""
    code = getattr(step, "cr_code", None)
    return getattr(code, "co_qualname", None) or type(step).__name__


async def ended(tasks: Sequence[asyncio.Task[Any]], seconds: float = CLOSE_STEP) -> None:
    """Wait at most ``seconds`` for cancelled ``tasks`` to end; each one still running then
    is left behind with a warning that names it. Their errors are read, never raised."""
    if not tasks:
        return
    done, pending = await asyncio.wait(tasks, timeout=seconds)
    for task in done:
        if not task.cancelled():
            task.exception()
    for task in pending:
        log.warning(
            "closing: %s did not end within %.0f s; left behind", _name(task.get_coro()), seconds
        )


async def stop(task: asyncio.Task[Any]) -> None:
    """Cancel ``task`` and wait for its end; its errors are read, never raised. A cancel of
    the caller while it waits goes on up (``await task`` in ``suppress(CancelledError)``
    would swallow it: the caller would end as if done while asked to cancel)."""
    task.cancel()
    await asyncio.wait([task])
    if not task.cancelled():
        task.exception()
