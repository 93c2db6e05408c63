"""What the accounts keep for a moment in Redis, shared by every node: the passkeys'
challenges, the e-mailed links, and how many mails were asked for.

A challenge and a link are taken once (``GETDEL``: a second use finds nothing) and each
carries the time it ends on the node's clock (``until``), checked when it is taken, so
that a test moves it on with its clock; Redis forgets it :data:`GRACE` seconds after that
anyway. Keys (each expires)::

    webauthn:<challenge>          string  JSON of what the challenge was made for: its
                                          kind (signup, signin, add), until, and the
                                          kind's fields; challenge: base64url
    maillink:<digest>             string  JSON of an e-mailed link: kind (verify, reset),
                                          account, email, until; digest: SHA-256 of the
                                          link's token (the token itself is never kept)
    mails:to:<digest>:<hour>      string  mails sent to one address that hour of the
                                          clock; digest: SHA-256 of the address's key
    mails:from:<network>:<hour>   string  mails asked for from one network that hour
    challenges:<network>:<hour>   string  passkey challenges made for one network that
                                          hour (at most :data:`CHALLENGES_AN_HOUR`)

A mail is counted for its address and for the network that asked for it, whether the
address is known or not, before anything is looked up.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis

from ..limits import address_key
from .guard import as_unavailable

__all__ = ["CHALLENGES_AN_HOUR", "GRACE", "MAILS_WINDOW", "AccountLinks"]

GRACE = 60
"""Seconds Redis keeps a challenge or a link past its end (it is refused by then)."""
MAILS_WINDOW = 3600
CHALLENGES_AN_HOUR = 600
"""Passkey challenges made an hour for one network (each is kept a few minutes in Redis):
far above what people signing in from one address ask for."""

_MAIL = """
local to = tonumber(redis.call('GET', KEYS[1]) or '0')
local from = tonumber(redis.call('GET', KEYS[2]) or '0')
if to >= tonumber(ARGV[1]) or from >= tonumber(ARGV[2]) then
  return 0
end
redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return 1
"""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class AccountLinks:
    """Challenges, links and mail counts in Redis (every method raises Unavailable when it
    does not answer). ``mails_to``: mails an hour to one address; ``mails_from``: mails an
    hour asked for from one network; ``challenges``: passkey challenges an hour for one
    network."""

    def __init__(
        self,
        redis: Redis,
        clock: Callable[[], float],
        *,
        mails_to: int,
        mails_from: int,
        challenges: int = CHALLENGES_AN_HOUR,
    ) -> None:
        self.redis = redis
        self.clock = clock
        self.mails_to = mails_to
        self.mails_from = mails_from
        self.challenges = challenges
        self._mail = redis.register_script(_MAIL)

    async def _put(self, key: str, value: dict[str, Any], lifetime: float) -> None:
        value = {**value, "until": self.clock() + lifetime}
        with as_unavailable:
            await self.redis.set(key, json.dumps(value), ex=math.ceil(lifetime) + GRACE)

    async def _take(self, key: str) -> dict[str, Any] | None:
        with as_unavailable:
            raw = await self.redis.getdel(key)
        if raw is None:
            return None
        value: dict[str, Any] = json.loads(raw)
        if float(value["until"]) <= self.clock():
            return None
        return value

    # -- the passkeys' challenges -----------------------------------------------------------

    async def put_challenge(self, challenge: str, value: dict[str, Any], lifetime: float) -> None:
        """Keep ``value`` for ``challenge`` (base64url) for ``lifetime`` seconds."""
        await self._put(f"webauthn:{challenge}", value, lifetime)

    async def challenge_wait(self, address: str) -> int | None:
        """Count a challenge made for ``address``; None when it may be made, else the
        seconds (whole, at least 1) before its network's hour is over."""
        now = self.clock()
        window = int(now // MAILS_WINDOW)
        key = f"challenges:{address_key(address)}:{window}"
        with as_unavailable:
            async with self.redis.pipeline(transaction=True) as pipe:
                pipe.incr(key)
                pipe.expire(key, 2 * MAILS_WINDOW)
                made, _ = await pipe.execute()
        if int(made) <= self.challenges:
            return None
        return max(1, math.ceil((window + 1) * MAILS_WINDOW - now))

    async def take_challenge(self, challenge: str) -> dict[str, Any] | None:
        """What ``challenge`` was made for, once: None when it was never made, was taken
        already, or has ended."""
        if not challenge or len(challenge) > 200:
            return None
        return await self._take(f"webauthn:{challenge}")

    # -- the e-mailed links -----------------------------------------------------------------

    async def put_link(self, token: str, value: dict[str, Any], lifetime: float) -> None:
        """Keep ``value`` for a link's ``token`` for ``lifetime`` seconds."""
        await self._put(f"maillink:{_digest(token)}", value, lifetime)

    async def take_link(self, token: str) -> dict[str, Any] | None:
        """What a link's ``token`` was made for, once (None: unknown, used or ended)."""
        if not token or len(token) > 200:
            return None
        return await self._take(f"maillink:{_digest(token)}")

    async def forget_account(self, account: int) -> int:
        """Drop the e-mailed links still waiting for ``account`` (a deleted one: each holds
        its address); how many. It scans the links' keys (SCAN, never KEYS): deletions are
        rare, and the links few and short-lived."""
        dropped = 0
        with as_unavailable:
            async for key in self.redis.scan_iter(match="maillink:*", count=1000):
                raw = await self.redis.get(key)
                try:
                    value = json.loads(raw) if raw is not None else None
                except ValueError:
                    continue
                if isinstance(value, dict) and value.get("account") == account:
                    dropped += int(await self.redis.delete(key))
        return dropped

    async def mail_wait(self, email_key: str, address: str) -> int | None:
        """Count a mail to ``email_key`` asked for from ``address``; None when it may be
        sent, else the seconds (whole, at least 1) before either's hour is over (and it
        is not counted)."""
        now = self.clock()
        window = int(now // MAILS_WINDOW)
        keys = [
            f"mails:to:{_digest(email_key)}:{window}",
            f"mails:from:{address_key(address)}:{window}",
        ]
        with as_unavailable:
            allowed = await self._mail(
                keys=keys, args=[self.mails_to, self.mails_from, 2 * MAILS_WINDOW]
            )
        if int(allowed):
            return None
        return max(1, math.ceil((window + 1) * MAILS_WINDOW - now))
