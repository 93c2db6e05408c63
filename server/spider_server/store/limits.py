"""The rate limits every node shares, in Redis: one bucket a limit and a key (a client
address, or a player), and the mark of an address refused a new player.

Layout (each key is its address's or its player's hash tag, so that one script touches one
slot, on Redis Cluster too, and the limits of many addresses spread over the slots)::

    {limit:a:<address>}:<what>    string  the bucket of one of an address's limits
                                          (``new_player``, ``create``, ``wrong_join``,
                                          ``hint``, ``export``): the time, on the nodes'
                                          clock, at which it is full again (GCRA's
                                          theoretical arrival time); lives until then
    {limit:p:<player>}:<what>     string  the same of one of a player's limits
                                          (``player_create``, ``player_hint``)
    {limit:a:<address>}:refused   string  the time until which the address is refused new
                                          players (it was refused one); lives until then

``<address>`` is the limits' key of a client address (:func:`~..limits.address_key`: an
IPv4 address, or an IPv6 address's /64). A bucket of ``burst`` tokens refilled one every
``interval`` seconds is kept as the one time at which it is full again: a key that holds
nothing worth keeping is not there (it expires as the bucket fills), so idle addresses
cost no memory and nothing is ever cleared wholesale.

Time is the caller's (the node's clock, the deployment's time), passed to the script, never
Redis's: a test moves it as it moves the node's. Every method raises
:class:`~..errors.Unavailable` when Redis does not answer.
"""

from __future__ import annotations

from typing import Any, Literal

from redis.asyncio import Redis

from .codec import text
from .guard import as_unavailable

__all__ = ["SPEND", "LimitStore", "bucket", "refusal"]

SPEND = """
-- One token of a rate limit's bucket (GCRA) taken, asked about or given back, atomically.
-- KEYS: the bucket (the time at which it is full again, on the caller's clock), the mark
--       of a refusal (the bucket again: none is marked)
-- ARGV: now, interval (seconds a token takes to come back), burst (tokens held at most),
--       how ('take', 'ask' or 'give')
-- Returns 0 when the bucket had a token (taken; left; given back), else the milliseconds
-- until it has one: nothing is taken, and a refused take marks the refusal until then.
local now, interval, burst = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local full = tonumber(redis.call('GET', KEYS[1]) or '0')
if full < now then
  full = now
end
local function keep(at)
  if at <= now then
    redis.call('DEL', KEYS[1])
  else
    redis.call('SET', KEYS[1], string.format('%.6f', at), 'PX', math.ceil((at - now) * 1000))
  end
end
if ARGV[4] == 'give' then
  keep(full - interval)
  return 0
end
local wait = full + interval - burst * interval - now
if wait > 0.00001 then
  if ARGV[4] == 'take' and KEYS[2] ~= KEYS[1] then
    redis.call('SET', KEYS[2], string.format('%.6f', now + wait), 'PX', math.ceil(wait * 1000))
  end
  return math.ceil(wait * 1000)
end
if ARGV[4] == 'take' then
  keep(full + interval)
end
return 0
"""


def bucket(what: str, key: str, *, player: bool = False) -> str:
    """``{limit:a:<address>}:<what>``, or ``{limit:p:<player>}:<what>``."""
    return f"{{limit:{'p' if player else 'a'}:{key}}}:{what}"


def refusal(address: str) -> str:
    """``{limit:a:<address>}:refused``: until when the address is refused new players."""
    return f"{{limit:a:{address}}}:refused"


class LimitStore:
    """The shared buckets of the rate limits and the refusals' marks."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._spend: Any = None

    async def spend(
        self,
        what: str,
        key: str,
        *,
        player: bool = False,
        now: float,
        interval: float,
        burst: int,
        how: Literal["take", "ask", "give"],
        mark: bool = False,
    ) -> float:
        """One token of the bucket of limit ``what`` of ``key`` (an address's limits' key,
        or a player's with ``player``: :func:`bucket`): ``take`` one, ``ask`` whether one
        is there (nothing changes), ``give`` one back (taken by a request refused by
        another limit). 0.0 when there was one, else the seconds until there is (nothing
        taken; with ``mark``, a ``take`` refused marks the address refused until then:
        :func:`refusal`). One round trip."""
        if self._spend is None:
            self._spend = self.redis.register_script(SPEND)
        at = bucket(what, key, player=player)
        args = [repr(now), repr(interval), str(burst), how]
        with as_unavailable:
            waited = await self._spend(keys=[at, refusal(key) if mark else at], args=args)
        return int(waited) / 1000.0

    async def refused_until(self, address: str) -> float | None:
        """Until when (the nodes' clock) ``address`` is refused new players, as marked by
        a refused take; None when it is not marked. One round trip."""
        with as_unavailable:
            found = await self.redis.get(refusal(address))
        if not found:
            return None
        try:
            return float(text(found))
        except ValueError:
            return None
