"""The two rules every storage call follows: a Redis error is :class:`~..errors.Unavailable`
to the caller, and a check-and-set that lost is decided again, a bounded number of times."""

from __future__ import annotations

from collections.abc import Iterator
from types import TracebackType

from redis.exceptions import RedisError

from ..errors import Unavailable

__all__ = ["CAS_TRIES", "as_unavailable", "cas_tries"]

CAS_TRIES = 50
"""How many times one request decides and commits a check-and-set again after losing it
(:class:`~..errors.Conflict`). A check-and-set loses only to another writer of the same
race or game at the same moment, so a loss or two is normal under load; losing this many
times in a row is a storm, and the request is answered ``unavailable`` (nothing changed)."""


def cas_tries(message: str = "too much contention; try again") -> Iterator[int]:
    """The tries of a check-and-set: ``for _ in cas_tries(): ... commit; break`` (or
    return), ``continue`` on :class:`~..errors.Conflict`. After :data:`CAS_TRIES` tries,
    :class:`~..errors.Unavailable` with ``message``. One generator a request, no more
    than the ``range`` it replaces (the move path uses it too)."""
    yield from range(CAS_TRIES)
    raise Unavailable(message)


class _AsUnavailable:
    """``with as_unavailable:`` turns a :class:`redis.exceptions.RedisError` raised inside
    into :class:`~..errors.Unavailable` (``storage: <what Redis said>``). One shared
    object, no allocation per use (the move path goes through it)."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if isinstance(error, RedisError):
            raise Unavailable(f"storage: {error}") from None


as_unavailable = _AsUnavailable()
