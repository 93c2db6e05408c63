"""A clock that only the test moves: given to a node (``server_node(url, clock=clock)``),
it stands still until the test moves it on, so that a window of the node (the away grace,
the idle limit, a countdown, a time limit) passes exactly when the test says, however
slowly the machine runs, and no test waits for one or asserts on the machine's clock."""

from __future__ import annotations

import time

__all__ = ["TestClock"]


class TestClock:
    """Call it for the time now (seconds since the epoch: the machine's when it was made,
    plus every :meth:`move` since)."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self) -> None:
        self.now = round(time.time(), 3)

    def __call__(self) -> float:
        return self.now

    def move(self, seconds: float) -> None:
        """Move the clock ``seconds`` on (never back): what was due within them is due
        now, on the node's next look (a tick, a sweep, a connection's check)."""
        assert seconds >= 0, "a clock moves on, never back"
        self.now = round(self.now + seconds, 3)
