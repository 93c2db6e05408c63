"""The stalled-spectator experiment: spectators that never read, backlogged on the
server, watching their races in some slices of the measured time and away in the others;
the slice rule, and the server's gauges that show it followed the plan."""

from __future__ import annotations

import asyncio
import socket
import urllib.request
from collections.abc import Iterable, Sequence
from typing import Any
from urllib.parse import urlsplit

from spider_client import Client
from spider_client import protocol as p

from .tools import process_cpu

__all__ = [
    "STALLED_SLICE_S",
    "stalled_plan",
    "stalled_side",
    "StalledRun",
    "StalledSpectator",
    "stalled_spectator",
    "metrics_url",
    "gauges",
]

STALLED_SLICE_S = 2.0
"""With stalled spectators, about how long a slice of the measured time lasts."""


def stalled_plan(seconds: float) -> tuple[int, ...]:
    """The slices of a measured time of ``seconds``: 1 where the stalled spectators watch
    their races, 0 where they are away; away, watching, watching, away, again and again
    (a multiple of four slices, eight at least, of about :data:`STALLED_SLICE_S`): the
    machine's speed, which drifts and comes in spells of a few seconds, weighs on both
    sides alike."""
    fours = max(2, round(seconds / (4 * STALLED_SLICE_S)))
    return (0, 1, 1, 0) * fours


def stalled_side(
    t: float, start: float, slice_s: float, guard: float, plan: Sequence[int]
) -> int | None:
    """The side of a move sent at ``t`` (1: the stalled spectators watch, 0: they are
    away) in the measured time from ``start``, cut into slices of ``slice_s`` seconds
    (``plan``); None outside it, and within ``guard`` seconds of a join or a leave: such
    a move may reach the server on the other side of it."""
    offset = t - start
    if slice_s <= 0 or offset < 0:
        return None
    index = int(offset // slice_s)
    if index >= len(plan):
        return None
    edge = round(offset / slice_s)  # the slice edge nearest to the move
    toggled = 0 < edge < len(plan) and plan[edge] != plan[edge - 1]
    if toggled and abs(offset - edge * slice_s) < guard:
        return None
    return plan[index]


def metrics_url(ws_url: str) -> str:
    """The ``/metrics`` address of the server at a websocket URL."""
    parts = urlsplit(ws_url)
    scheme = "https" if parts.scheme == "wss" else "http"
    return f"{scheme}://{parts.netloc}/metrics"


def gauges(url: str) -> dict[str, int] | None:
    """From the server's ``/metrics`` (at ``url``): ``backlogged`` connections, the
    ``frames`` queued for them and the ``spectators`` subscribed; None when it does not
    say."""
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            text = r.read().decode()
    except OSError:
        return None
    names = {
        "spider_backlogged_connections": "backlogged",
        "spider_backlog_frames": "frames",
        'spider_subscriptions{role="spectator"}': "spectators",
    }
    found: dict[str, int] = {}
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name in names:
            found[names[name]] = int(float(value))
    return found if len(found) == len(names) else None


class StalledSpectator:
    """A spectator that never reads: a raw socket with a small receive buffer, after a
    websocket handshake and ``hello``. It still sends (``join``, ``leave``); the server's
    replies and the race's events pile up unread, in the kernel's buffers and then in the
    server's queue for it."""

    def __init__(self, sock: socket.socket, proto: Any) -> None:
        self.sock = sock
        self.proto = proto
        self.req = 0

    async def send(self, *messages: object) -> None:
        for message in messages:
            self.proto.send_binary(p.encode(message))
        loop = asyncio.get_running_loop()
        for data in self.proto.data_to_send():
            await loop.sock_sendall(self.sock, data)

    async def join(self, code: str, *, since: int | None = None) -> None:
        self.req += 1
        await self.send(p.Join(req=self.req, code=code, role="spectator", since=since))

    async def leave(self, code: str) -> None:
        self.req += 1
        await self.send(p.Leave(req=self.req, code=code))

    def close(self) -> None:
        self.sock.close()


async def stalled_spectator(url: str, code: str) -> StalledSpectator:
    """A :class:`StalledSpectator` that has said ``hello`` and joined ``code``."""
    from websockets.client import ClientProtocol
    from websockets.protocol import State
    from websockets.uri import parse_uri

    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    uri = parse_uri(url)
    loop = asyncio.get_running_loop()
    await loop.sock_connect(sock, (uri.host, uri.port))
    proto = ClientProtocol(uri)
    proto.send_request(proto.connect())
    for data in proto.data_to_send():
        await loop.sock_sendall(sock, data)
    while proto.state is State.CONNECTING:
        chunk = await loop.sock_recv(sock, 65536)
        if not chunk:
            raise RuntimeError("the server closed the stalled spectator")
        proto.receive_data(chunk)
    if proto.state is not State.OPEN:
        raise RuntimeError(f"handshake failed: {proto.handshake_exc}")
    stalled = StalledSpectator(sock, proto)
    await stalled.send(p.Hello(name="stalled"))
    await stalled.join(code)
    return stalled


class StalledRun:
    """The stalled spectators' part of a run.

    :meth:`stall`: each asks for its race again and again (with every event since the
    start), unread, until the server's ``/metrics`` counts them all among the connections
    whose frames wait for their reader; then they leave their races. :meth:`run`: the
    measured time is cut into the slices of :func:`stalled_plan`; at each change they
    join or leave their races; in the middle of every slice the server's gauges are read
    (on both sides alike), to check that the server follows the plan (spectators
    subscribed: the others, plus the stalled ones while they watch) and holds frames for
    them; the server process's CPU time is read at every slice's edge (with the bench's
    own server)."""

    def __init__(
        self,
        quiet: Sequence[StalledSpectator],
        codes: Sequence[str],
        metrics_url: str,
        server_pid: int | None,
    ) -> None:
        self.quiet = quiet
        self.codes = codes
        self.metrics_url = metrics_url
        self.server_pid = server_pid
        self.plan: tuple[int, ...] = ()
        self.slice_s = 0.0
        self.guard = 0.0
        self.start = 0.0
        self.others_backlogged = 0
        """Connections backlogged on the server before the stalled spectators were."""
        self.away: int | None = None
        """Spectators subscribed on the server once the stalled ones left their races."""
        self.backlogged_at_start: int | None = None
        self.backlogged_watching: int | None = None
        self.backlog_frames: int | None = None
        self.checks = [0, 0]
        """Slices where the server's subscriptions were as planned, slices looked at."""
        self.late = 0.0
        """The latest a join or leave was sent after its time (seconds)."""
        self.cpu = [0.0, 0.0]
        """The server's CPU seconds in the slices of each side (away, watching)."""
        self.cpu_known = server_pid is not None
        self.moves = [0, 0]
        """Moves sent in the slices of each side (every race)."""

    def race(self, i: int) -> str:
        return self.codes[i % len(self.codes)]

    def players(self, bots: Sequence[Client]) -> set[str]:
        """The bots of the races a stalled spectator joins."""
        races = {self.race(i) for i in range(len(self.quiet))}
        return {c.player for c in bots if c.player and c.code in races}

    async def gauges(self) -> dict[str, int] | None:
        """The server's gauges (:func:`gauges`), read in a thread."""
        return await asyncio.to_thread(gauges, self.metrics_url)

    async def stall(self) -> None:
        """Backlog the stalled spectators on the server (200 tries at most), then take
        them away from their races (see the class)."""
        # The others' readers may lag on a busy machine, for longer than a few looks: the
        # fewest of up to 100 looks (about two seconds), stopping at the first that finds
        # none backlogged, is what they hold on their own (a count taken while they lagged
        # would hide the stalled spectators' own backlog below).
        counts: list[int] = []
        for _ in range(100):
            look = await self.gauges()
            if look is not None:
                counts.append(look["backlogged"])
                if look["backlogged"] == 0:
                    break
            await asyncio.sleep(0.02)
        self.others_backlogged = min(counts, default=0)
        for _ in range(200):
            for i, w in enumerate(self.quiet):
                for _ in range(20):
                    await w.join(self.race(i), since=0)
            await asyncio.sleep(0.05)
            now = await self.gauges()
            if now is None:
                break
            self.backlogged_at_start = now["backlogged"] - self.others_backlogged
            if self.backlogged_at_start >= len(self.quiet):
                break
        await self._send_all(join=False)
        await asyncio.sleep(0.2)
        after = await self.gauges()
        self.away = None if after is None else after["spectators"]

    async def _send_all(self, join: bool) -> None:
        for i, w in enumerate(self.quiet):
            await (w.join(self.race(i)) if join else w.leave(self.race(i)))

    def side(self, t: float) -> int | None:
        """The side of a move sent at ``t`` (:func:`stalled_side`, with the guard)."""
        return stalled_side(t, self.start, self.slice_s, self.guard, self.plan)

    def count_moves(self, times: Iterable[float]) -> None:
        """Count the moves sent at ``times`` on their slices' sides (no guard)."""
        for t in times:
            side = stalled_side(t, self.start, self.slice_s, 0.0, self.plan)
            if side is not None:
                self.moves[side] += 1

    async def run(self, start: float, seconds: float) -> None:
        """The measured time of ``seconds`` from loop time ``start``, slice by slice (see
        the class); returns at its end."""
        loop = asyncio.get_running_loop()
        self.plan = plan = stalled_plan(seconds)
        self.start, self.slice_s = start, seconds / len(plan)
        self.guard = min(0.1, self.slice_s / 5)

        async def at(when: float) -> None:
            await asyncio.sleep(max(0.0, when - loop.time()))

        seen: list[int] = []
        before: float | None = None
        for index in range(len(plan) + 1):  # every slice's edge, the last one's end too
            edge = start + index * self.slice_s
            await at(edge)
            now = process_cpu(self.server_pid)
            if index:
                if before is None or now is None:
                    self.cpu_known = False
                else:
                    self.cpu[plan[index - 1]] += now - before
            before = now
            if index == len(plan):
                break
            side = plan[index]
            if index and side != plan[index - 1]:
                self.late = max(self.late, loop.time() - edge)
                await self._send_all(join=bool(side))
            await at(edge + self.slice_s / 2)
            shown = await self.gauges()
            if shown is not None:
                self.checks[1] += 1
                if self.away is not None:
                    want = self.away + side * len(self.quiet)
                    self.checks[0] += shown["spectators"] == want
                if side:
                    seen.append(shown["backlogged"] - self.others_backlogged)
                    self.backlog_frames = shown["frames"]
        self.backlogged_watching = min(seen) if seen else None

    def trustworthy(self) -> bool:
        """Whether the server held frames for every stalled spectator and followed the
        plan in every slice."""
        k = len(self.quiet)
        return (
            (self.backlogged_at_start or 0) >= k
            and (self.backlogged_watching or 0) >= k
            and self.checks[0] == self.checks[1] == len(self.plan)
        )
