"""The two rules every storage call follows: a Redis error is :class:`~..errors.Unavailable`
to the caller, and a check-and-set that lost is decided again, a bounded number of times.

:func:`check_and_set` is the server's one retry loop: it loads, asks a pure decision,
commits, and on :class:`~..errors.Conflict` (the check-and-set lost to another writer)
does it all again on what it loads afresh. It returns what was loaded, decided and
committed; what happens next (an ack, the events to the hub) is the caller's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, TypeVar

from redis.exceptions import RedisError

from ..errors import Conflict, Contended, Unavailable

__all__ = ["CAS_TRIES", "Attempt", "as_unavailable", "check_and_set"]

S = TypeVar("S")
D = TypeVar("D")
C = TypeVar("C")

CAS_TRIES = 50
"""How many times one request decides and commits a check-and-set again after losing it
(:class:`~..errors.Conflict`). A check-and-set loses only to another writer of the same
race or game at the same moment, so a loss or two is normal under load; losing this many
times in a row is a storm, and the request is answered ``unavailable`` (nothing changed)."""


@dataclass(slots=True)
class Attempt(Generic[S, D, C]):
    """The try of :func:`check_and_set` that ended it: what it loaded, what was decided
    (None: nothing to do) and what the commit returned (None when nothing was decided)."""

    loaded: S
    decision: D | None
    committed: C | None


async def check_and_set(
    load: Callable[[], Awaitable[S]],
    decide: Callable[[S], D | None],
    commit: Callable[[D], Awaitable[C]],
    *,
    busy: str = "too much contention; try again",
    tries: int = CAS_TRIES,
) -> Attempt[S, D, C]:
    """Load, decide, commit; again on what is loaded afresh when the commit's
    check-and-set lost (:class:`~..errors.Conflict`), at most ``tries`` times, then
    :class:`~..errors.Contended` (``unavailable`` to the client) with ``busy``. ``decide``
    is pure: None when there is nothing to commit (the attempt then has no commit), or a
    request error to refuse. Errors of ``load`` and ``commit`` other than Conflict go to
    the caller."""
    for _ in range(tries):
        loaded = await load()
        decision = decide(loaded)
        if decision is None:
            return Attempt(loaded, None, None)
        try:
            committed = await commit(decision)
        except Conflict:
            continue
        return Attempt(loaded, decision, committed)
    raise Contended(busy)


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
