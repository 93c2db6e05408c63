"""The load: senders on a schedule (or flat out), what they measured, and the timed
phase shared by the players and the baseline (a warm-up, then the measured time)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from websockets.exceptions import ConnectionClosed

from spider_client import SpiderClientError
from spider_client.errors import ConnectionLost, GameOver

from .meter import CpuMeter

if TYPE_CHECKING:
    from .solverload import SolverLoad
    from .stalled import StalledRun

__all__ = ["Send", "Tally", "Timing", "send_loop", "drive"]

Send = Callable[[int], Awaitable[None]]
"""A sender's ``send(k)``: send message ``k`` and return when it is answered."""


@dataclass
class Tally:
    """What a run measured."""

    acks: list[float] = field(default_factory=list)
    due: list[float] = field(default_factory=list)
    """The due time (loop time) of each measured ack of :attr:`acks`, in the same order."""
    events: list[float] = field(default_factory=list)
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)
    moves: int = 0
    warmup_moves: int = 0
    """Moves acked during the warm-up (sent, committed, not measured)."""
    started: float = 0.0
    ended: float = 0.0
    events_by_side: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))
    """With stalled spectators: deliveries of moves sent while they were away from their
    races, and while they watched."""
    stalled: StalledRun | None = None
    """With stalled spectators: what their part of the run saw."""
    solver: SolverLoad | None = None
    """With hint spam or pool refills: what that part of the run saw."""
    middle: float = 0.0
    """With them: the loop time they started (acks due before it are the quiet side)."""

    def error(self, what: str) -> None:
        self.errors += 1
        self.error_kinds[what] = self.error_kinds.get(what, 0) + 1

    @property
    def seconds(self) -> float:
        return max(self.ended - self.started, 1e-9)


@dataclass(frozen=True)
class Timing:
    """The timed phase in loop time: sending starts at ``t0``, the measured time at
    ``measure`` (after the warm-up) and ends at ``end``."""

    t0: float
    measure: float
    end: float

    @classmethod
    def from_now(cls, warmup: float, seconds: float) -> Timing:
        """Sending starts in 0.2 s, then ``warmup`` seconds, then ``seconds`` measured."""
        t0 = asyncio.get_running_loop().time() + 0.2
        measure = t0 + warmup
        return cls(t0, measure, measure + seconds)


def _schedule_start(index: int, count: int, rate: float | None, t0: float) -> float:
    """When a sender's first message is due: senders spread evenly over one period."""
    if rate is None:
        return t0
    return t0 + (index / max(count, 1)) / rate


async def send_loop(
    index: int, count: int, rate: float | None, timing: Timing, send: Send, tally: Tally
) -> None:
    """One sender (``index`` of ``count``): message k is due at its schedule (``rate`` a
    second from ``timing.t0``, or at once with ``rate`` None) until ``timing.end``;
    ``send(k)`` returns when it is answered. Only messages due from ``timing.measure``
    (the end of the warm-up) are measured; the ack time is counted from the due time. A
    lost connection or a finished game ends the sender; other errors are counted."""
    loop = asyncio.get_running_loop()
    due = _schedule_start(index, count, rate, timing.t0)
    k = 0
    while True:
        now = loop.time()
        if rate is None:
            due = now
        if due >= timing.end or now >= timing.end:
            return
        if due > now:
            await asyncio.sleep(due - now)
        try:
            await send(k)
        except (SpiderClientError, ConnectionClosed) as e:
            tally.error(type(e).__name__)
            if isinstance(e, (ConnectionLost, GameOver, ConnectionClosed)):
                return
        else:
            k += 1
            if due < timing.measure:
                tally.warmup_moves += 1
            else:
                tally.acks.append(loop.time() - due)
                tally.due.append(due)
                tally.moves += 1
                tally.ended = max(tally.ended, loop.time())
        if rate is not None:
            due += 1 / rate


async def _metered(meter: CpuMeter | None, at: float) -> None:
    """Start ``meter`` at loop time ``at`` (when the warm-up ends)."""
    if meter is not None:
        await asyncio.sleep(max(0.0, at - asyncio.get_running_loop().time()))
        await meter.begin()


async def drive(
    sends: Sequence[Send],
    rate: float | None,
    timing: Timing,
    tally: Tally,
    *,
    meter: CpuMeter | None,
    alongside: Iterable[Awaitable[None]] = (),
) -> None:
    """Run every sender (:func:`send_loop`) through the warm-up and the measured time,
    with ``alongside`` (other work of the same time); ``meter`` starts when the measured
    time does and ends when the last sender has."""
    tally.started = tally.ended = timing.measure
    await asyncio.gather(
        _metered(meter, timing.measure),
        *alongside,
        *(send_loop(i, len(sends), rate, timing, send, tally) for i, send in enumerate(sends)),
    )
    if meter is not None:
        await meter.end()
