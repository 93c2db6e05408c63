"""The accounts' limits, shared by every node in Redis: sign-in attempts that back off per
account and address together, and sign-ups per address an hour.

An address is counted as its network (:func:`network`): an IPv4 address alone, an IPv6
address by its /64 (one home or machine holds a whole /64). Keys (each expires)::

    signin:<digest>               hash    failures (count), until (the time before which
                                          no attempt is taken); digest: SHA-256 of the
                                          name's key and the network; lives SIGNIN_TTL
                                          after the last failure
    signups:<network>:<hour>      string  accounts made from the network in that hour of
                                          the clock (hour = time // 3600); lives 2 hours

A sign-in that fails for an (account, network) pair counts; from the
:data:`SIGNIN_FREE`-th failure on, the pair waits :data:`SIGNIN_FIRST_WAIT` seconds,
doubled at each further failure up to :data:`SIGNIN_MAX_WAIT`; a success forgets the
failures. Another network trying the same account is not slowed by them, so an attacker
cannot lock its owner out. Every time is the node's clock (passed to the scripts), so
tests move it on with theirs.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable

from redis.asyncio import Redis

from ..limits import address_key
from .guard import as_unavailable

__all__ = [
    "SIGNIN_FIRST_WAIT",
    "SIGNIN_FREE",
    "SIGNIN_MAX_WAIT",
    "AccountLimits",
]

SIGNIN_FREE = 5
"""Failed sign-ins of one account from one network before it waits."""
SIGNIN_FIRST_WAIT = 1.0
SIGNIN_MAX_WAIT = 900.0
SIGNIN_TTL = 24 * 3600
"""Seconds a pair's failures are kept after its last one."""
SIGNUPS_WINDOW = 3600

_FAILED = """
local n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local wait = 0
if n >= tonumber(ARGV[2]) then
  wait = math.min(tonumber(ARGV[3]) * 2 ^ (n - tonumber(ARGV[2])), tonumber(ARGV[4]))
  redis.call('HSET', KEYS[1], 'until', tostring(tonumber(ARGV[1]) + wait))
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
return tostring(wait)
"""


def _signin_key(name_key: str, address: str) -> str:
    digest = hashlib.sha256(f"{name_key}\n{address_key(address)}".encode()).hexdigest()[:32]
    return f"signin:{digest}"


class AccountLimits:
    """The accounts' limits in Redis (every method raises Unavailable when it does not
    answer)."""

    def __init__(self, redis: Redis, clock: Callable[[], float], *, signups: int) -> None:
        self.redis = redis
        self.clock = clock
        self.signups = signups
        """Accounts made from one network an hour."""
        self._failed = redis.register_script(_FAILED)

    async def signin_wait(self, name_key: str, address: str) -> int | None:
        """Seconds (whole, at least 1) before a sign-in to ``name_key`` from ``address``
        is taken; None: now."""
        with as_unavailable:
            until = await self.redis.hget(_signin_key(name_key, address), "until")
        if until is None:
            return None
        left = float(until) - self.clock()
        return max(1, math.ceil(left)) if left > 0 else None

    async def signin_failed(self, name_key: str, address: str) -> float:
        """Count a failed sign-in; the seconds the pair waits now (0: none)."""
        with as_unavailable:
            wait = await self._failed(
                keys=[_signin_key(name_key, address)],
                args=[self.clock(), SIGNIN_FREE, SIGNIN_FIRST_WAIT, SIGNIN_MAX_WAIT, SIGNIN_TTL],
            )
        return float(wait)

    async def signin_succeeded(self, name_key: str, address: str) -> None:
        """Forget the pair's failures."""
        with as_unavailable:
            await self.redis.delete(_signin_key(name_key, address))

    def _signups_key(self, address: str) -> tuple[str, float]:
        now = self.clock()
        window = int(now // SIGNUPS_WINDOW)
        return f"signups:{address_key(address)}:{window}", (window + 1) * SIGNUPS_WINDOW - now

    async def signup_wait(self, address: str) -> int | None:
        """Seconds before the network of ``address`` may make an account again (its
        hour's are used up); None: now."""
        key, left = self._signups_key(address)
        with as_unavailable:
            made = await self.redis.get(key)
        if made is not None and int(made) >= self.signups:
            return max(1, math.ceil(left))
        return None

    async def signed_up(self, address: str) -> None:
        """Count an account made from ``address``."""
        key, _ = self._signups_key(address)
        with as_unavailable:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                pipe.expire(key, 2 * SIGNUPS_WINDOW)
                await pipe.execute()
