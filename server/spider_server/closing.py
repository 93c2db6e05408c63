"""Closing with deadlines: each step of a node's shutdown is awaited for a bounded time, so
that a task that will not end, or a link that will not close, never holds the node open."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import Any

__all__ = ["bounded"]

log = logging.getLogger(__name__)


async def bounded(step: Awaitable[Any], seconds: float = 10.0) -> None:
    """Await one step of closing for at most ``seconds``: past it the step is cancelled
    and left behind with a warning; its errors are logged, never raised."""
    try:
        async with asyncio.timeout(seconds):
            await step
    except TimeoutError:
        log.warning("closing: a step did not end within %.0f s; left behind", seconds)
    except Exception:
        log.exception("closing: a step failed")
