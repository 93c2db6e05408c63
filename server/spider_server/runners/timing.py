"""The event loop's own timings, for the metrics: the garbage collector's pauses
(``spider_gc_pause_seconds``) and how late a 100 ms timer fires
(``spider_loop_lag_seconds``)."""

from __future__ import annotations

import asyncio
import gc
import time

from ..metrics import Metrics

__all__ = ["LoopTimers"]


class LoopTimers:
    """Times the collector's pauses once :meth:`start` ed (until :meth:`stop`), and the
    loop's lag while :meth:`run` runs."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self._gc_started = 0.0

    def start(self) -> None:
        gc.callbacks.append(self._gc_timer)

    def stop(self) -> None:
        if self._gc_timer in gc.callbacks:
            gc.callbacks.remove(self._gc_timer)

    def _gc_timer(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter()
        elif self._gc_started:
            self.metrics.gc_seconds.observe(time.perf_counter() - self._gc_started)
            self._gc_started = 0.0

    async def run(self) -> None:
        """Measures how late a 100 ms timer fires, for as long as it runs."""
        loop = asyncio.get_running_loop()
        while True:
            due = loop.time() + 0.1
            await asyncio.sleep(0.1)
            self.metrics.loop_lag.observe(max(0.0, loop.time() - due))
