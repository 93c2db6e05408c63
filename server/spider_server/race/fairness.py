"""Fairness anyone can check: the secret seed, its salt and commitment, and when a finished
race reveals them."""

from __future__ import annotations

import datetime
import hashlib
import secrets

from .model import Race, RaceState

__all__ = ["commitment", "day_end", "new_salt", "new_seed", "revealed"]


def new_seed() -> str:
    """A random secret seed: 32 hex digits (128 bits)."""
    return secrets.token_hex(16)


def new_salt() -> str:
    """A random salt: 64 hex digits (32 bytes)."""
    return secrets.token_hex(32)


def commitment(seed: str, salt: str) -> str:
    """``SHA-256(bytes.fromhex(salt) + seed.encode("utf-8"))``, lower-case hex."""
    return hashlib.sha256(bytes.fromhex(salt) + seed.encode("utf-8")).hexdigest()


def revealed(race: Race, now: float | None) -> bool:
    """Whether the deal (seed, salt, replays, final boards) of a finished race is public:
    at once for a race, after its day (UTC) for a daily race."""
    if race.state is not RaceState.FINISHED:
        return False
    if not race.options.daily:
        return True
    return now is not None and now >= day_end(race.options.daily)


def day_end(day: str) -> float:
    """The end of a UTC day ``YYYY-MM-DD``, in seconds since the epoch."""
    start = datetime.datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=datetime.UTC)
    return (start + datetime.timedelta(days=1)).timestamp()
