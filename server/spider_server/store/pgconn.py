"""PostgreSQL asked one question at start: does it let the node in, and which is it?

The node's start checks the database of ``--database`` with :func:`not_answering`, and the
embedded PostgreSQL's start waits on :func:`verdict` (from a thread of its own when the
caller is synchronous: :func:`verdict_now`). The archive's store (:mod:`.archive`) is the
only other module that speaks to the database.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

import asyncpg

__all__ = ["Verdict", "not_answering", "verdict", "verdict_now"]


@dataclass(frozen=True)
class Verdict:
    """What a database said to one connection: ``answers`` (``said`` is its version, e.g.
    ``18.6``), ``starting`` (it is starting up or shutting down), ``refuses`` (a wrong
    user, password or database: ``said`` is why), or ``silent`` (nothing answers, or not
    in time: ``said`` is why). ``said`` never holds the URL's password."""

    state: Literal["answers", "starting", "refuses", "silent"]
    said: str


async def verdict(url: str, *, timeout: float = 5.0) -> Verdict:
    """Connect to ``url`` once (within ``timeout`` seconds) and ask its version."""
    try:
        connection = await asyncio.wait_for(asyncpg.connect(url, timeout=timeout), timeout)
        try:
            version = await connection.fetchval("SHOW server_version")
        finally:
            await connection.close()
    except asyncpg.CannotConnectNowError as e:
        return Verdict("starting", _one_line(e, url))
    except asyncpg.PostgresError as e:
        return Verdict("refuses", _one_line(e, url))
    except (OSError, asyncpg.InterfaceError) as e:  # TimeoutError is an OSError
        return Verdict("silent", _one_line(e, url))
    return Verdict("answers", str(version))


def verdict_now(url: str, *, timeout: float = 5.0) -> Verdict:
    """:func:`verdict` for synchronous code, on an event loop of its own in a thread of its
    own (so that it may be called from inside a running loop too)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(verdict(url, timeout=timeout))).result()


async def not_answering(url: str, *, timeout: float = 10.0) -> str | None:
    """Why the database at ``url`` cannot serve the node, checked once: None when it lets
    the node in (or is starting up), else one line, ``does not answer (<why>)`` or
    ``refuses the node (<why>)``, without the password."""
    found = await verdict(url, timeout=timeout)
    if found.state == "refuses":
        return f"refuses the node ({found.said})"
    if found.state == "silent":
        return f"does not answer ({found.said})"
    return None


def _one_line(error: BaseException, url: str) -> str:
    said = " ".join(str(error).split()).rstrip(".") or type(error).__name__
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    return said.replace(password, "***") if password else said
