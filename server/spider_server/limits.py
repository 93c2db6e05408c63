"""Per-connection limits: a token bucket for the message rate."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["TokenBucket"]


class TokenBucket:
    """``rate`` tokens a second, at most ``burst`` kept; each message takes one.

    :meth:`take` is True when a token was there (and takes it), False when the message is
    over the rate. ``clock`` is injectable for tests; it defaults to ``time.monotonic``.
    """

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] | None = None
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self._clock = clock or time.monotonic
        self._last = self._clock()

    def _refill(self) -> None:
        now = self._clock()
        self.tokens = min(self.burst, self.tokens + (now - self._last) * self.rate)
        self._last = now

    def take(self) -> bool:
        self._refill()
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    @property
    def calm(self) -> bool:
        """Whether the bucket is at least half full (the sender keeps to the rate)."""
        self._refill()
        return self.tokens >= self.burst / 2
