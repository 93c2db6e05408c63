"""CPU time of the timed phase: the server's, Redis's and the bench's own."""

from __future__ import annotations

import contextlib
import resource
from collections.abc import Sequence
from typing import Any

from .tools import ms_per, process_cpu

__all__ = ["CpuMeter"]


class CpuMeter:
    """CPU seconds spent during the timed phase by the server process, by Redis (its
    ``INFO cpu``) and by this process (the bots), for CPU time per move.

    Used as ``async with CpuMeter(…) as meter``; :meth:`begin` and :meth:`end` bound the
    timed phase; a reading that is unknown (no server pid, no Redis, a process gone)
    leaves its figure unknown."""

    def __init__(self, server_pid: int | None, redis_url: str | None) -> None:
        self.server_pid = server_pid
        self.start: dict[str, float | None] = {}
        self.spent: dict[str, float | None] = {}
        self.redis_url = redis_url
        self.redis: Any = None
        self.others: list[int] = []
        """The bench's worker processes, counted with the bots."""

    def also(self, pids: Sequence[int]) -> None:
        """Count these processes' CPU time with the bots'."""
        self.others += pids

    async def __aenter__(self) -> CpuMeter:
        """Connect to Redis now, before the measured time: the first import and connection
        would hold this process's loop for tens of milliseconds just as it starts."""
        if self.redis_url is not None:
            from spider_server.store.redisconn import connect

            self.redis = connect(self.redis_url)
            with contextlib.suppress(Exception):
                await self.redis.ping()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.redis is not None:
            with contextlib.suppress(Exception):
                await self.redis.aclose()
            self.redis = None

    async def _redis_cpu(self) -> float | None:
        if self.redis is None:
            return None
        try:
            info = await self.redis.info("cpu")
            if "used_cpu_user" not in info:  # a cluster: the sum over its masters
                info = {
                    k: sum(float(v.get(k, 0)) for v in info.values() if isinstance(v, dict))
                    for k in ("used_cpu_user", "used_cpu_sys")
                }
            return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
        except Exception:
            return None

    async def _now(self) -> dict[str, float | None]:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        bots: float | None = usage.ru_utime + usage.ru_stime
        for pid in self.others:
            cpu = process_cpu(pid)
            bots = None if bots is None or cpu is None else bots + cpu
        return {
            "server": process_cpu(self.server_pid),
            "redis": await self._redis_cpu(),
            "bots": bots,
        }

    async def begin(self) -> None:
        """Read every CPU time now: the timed phase starts."""
        self.start = await self._now()

    async def end(self) -> None:
        """Read them again: what was spent since :meth:`begin`."""
        now = await self._now()
        for key, value in now.items():
            before = self.start.get(key)
            self.spent[key] = None if value is None or before is None else value - before

    def total_ms(self, moves: int) -> float | None:
        """CPU milliseconds per move of the server, Redis and the bots together."""
        spent = [self.spent.get(key) for key in ("server", "redis", "bots")]
        if not moves or any(v is None for v in spent):
            return None
        return sum(v for v in spent if v is not None) * 1000 / moves

    def pair_ms(self, moves: int) -> float | None:
        """CPU milliseconds per move of the server and Redis together (the bots left out)."""
        spent = [self.spent.get(key) for key in ("server", "redis")]
        if not moves or any(v is None for v in spent):
            return None
        return sum(v for v in spent if v is not None) * 1000 / moves

    def per_move_ms(self, key: str, moves: int) -> str:
        """CPU milliseconds per move of ``server``, ``redis`` or ``bots``, as printed."""
        return ms_per(self.spent.get(key), moves)
