"""Small tools of the server bench: limits, percentiles, figures' formats, ``/proc``
readings, bounded concurrency, the bench's clients and its garbage collector."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import resource
import socket
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from spider_client import Client

__all__ = [
    "raise_open_files",
    "percentile",
    "ms",
    "ms_per",
    "or_na",
    "shares",
    "free_port",
    "rss_mb",
    "process_cpu",
    "bounded",
    "close_all",
    "connect_client",
    "collector_paused",
]

T = TypeVar("T")
A = TypeVar("A")


def raise_open_files(want: int) -> int:
    """Raise this process's soft limit of open files towards ``want`` (up to the hard
    limit); children inherit it. Returns the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        return target
    return soft


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values`` (nearest rank); NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def ms(value: float) -> str:
    """Seconds as milliseconds with two decimals; ``n/a`` for NaN."""
    return "n/a" if value != value else f"{value * 1000:.2f}"


def ms_per(spent: float | None, count: int) -> str:
    """CPU seconds ``spent`` as milliseconds per one of ``count`` (three decimals);
    ``n/a`` when unknown or when there is none."""
    return "n/a" if spent is None or not count else f"{spent * 1000 / count:.3f}"


def or_na(value: object, spec: str = "") -> str:
    """``value`` formatted with ``spec``; ``n/a`` for None."""
    return "n/a" if value is None else format(value, spec)


def shares(total: int, parts: int) -> list[int]:
    """``total`` cut into ``parts`` shares as even as can be, the larger ones first."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def free_port() -> int:
    """A TCP port free on the loopback interface now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float | None:
    """A process's resident memory in MiB (Linux), None when unknown."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def process_cpu(pid: int | None) -> float | None:
    """A process's CPU seconds so far (user + system; Linux), None when unknown (or with
    no ``pid``)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


async def bounded(
    items: Sequence[A], work: Callable[[A], Awaitable[T]], *, concurrency: int
) -> list[T | Exception]:
    """``work(item)`` for every item, at most ``concurrency`` at a time; the results (or
    the exceptions raised) in order."""
    out: list[T | Exception] = [RuntimeError("not run")] * len(items)
    index = iter(range(len(items)))

    async def worker() -> None:
        for i in index:
            try:
                out[i] = await work(items[i])
            except Exception as e:
                out[i] = e

    await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(items))))))
    return out


class _Closable(Protocol):
    def close(self) -> Awaitable[Any]: ...


async def close_all(things: Sequence[_Closable]) -> None:
    """Close every client or connection, 500 at a time (a failure is ignored)."""
    await bounded(things, lambda c: c.close(), concurrency=500)


def connect_client(url: str, name: str, **options: Any) -> Awaitable[Client]:
    """A client of the bench (:meth:`spider_client.Client.connect` as ``name``): it tries
    to reconnect for 30 s and waits up to 120 s for an answer, as a loaded server may take
    long; ``options`` are more of the client's options."""
    return Client.connect(url, name=name, reconnect_timeout=30.0, request_timeout=120.0, **options)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """The bench's own cyclic garbage collector off while it measures: the load it makes
    must not stall (a collection here holds every bot's acks, which the figures would
    blame on the server). What start-up made is frozen out of later collections; the
    server's own collections still count, and are in its ``/metrics``."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()
