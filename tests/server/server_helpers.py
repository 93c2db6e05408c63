"""A bare websocket client for server tests: protocol frames over a real connection.

Every frame received is kept (``frames``), so a test can scan all of them afterwards.
``expect`` waits for the first unconsumed message that matches; others stay queued.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Callable
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from spider_client import protocol as p

TIMEOUT = 10.0
EVENT_TYPES = frozenset(
    {
        "player_joined",
        "player_left",
        "player_ready",
        "countdown",
        "started",
        "progress",
        "board",
        "finished",
    }
)


class Client:
    """One connection, decoded with the protocol module."""

    def __init__(self, ws: ClientConnection, *, label: str = "") -> None:
        self.ws = ws
        self.label = label
        self.frames: list[bytes] = []
        self._unread: collections.deque[Any] = collections.deque()
        self.inbox: list[Any] = []
        self.received: list[Any] = []
        self.welcome: p.Welcome | None = None
        self._req = 0

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        name: str | None = "tester",
        token: str | None = None,
        hello: bool = True,
        together: bool = True,
        label: str = "",
    ) -> Client:
        ws = await connect(url, max_size=None, open_timeout=TIMEOUT)
        client = cls(ws, label=label or (name or ""))
        if hello:
            await client.send(p.Hello(name=name, token=token, together=together))
            client.welcome = await client.expect("welcome")
        return client

    @property
    def player(self) -> str:
        assert self.welcome is not None
        return self.welcome.player

    @property
    def token(self) -> str:
        assert self.welcome is not None
        return self.welcome.token

    def next_req(self) -> int:
        self._req += 1
        return self._req

    async def send(self, message: object) -> None:
        await self.ws.send(p.encode(message))

    async def send_raw(self, data: bytes | str) -> None:
        await self.ws.send(data)

    async def send_map(self, fields: dict[str, Any]) -> None:
        await self.ws.send(msgpack.packb(fields, use_bin_type=True))

    async def _read(self, timeout: float) -> Any:
        if not self._unread:
            async with asyncio.timeout(timeout):
                frame = await self.ws.recv()
            assert isinstance(frame, bytes), frame
            self.frames.append(frame)
            self._unread.extend(p.decode_all(frame))  # a frame may hold several events
        message = self._unread.popleft()
        self.received.append(message)
        return message

    async def expect(
        self,
        kind: str | tuple[str, ...],
        where: Callable[[Any], bool] | None = None,
        *,
        timeout: float = TIMEOUT,
    ) -> Any:
        """The first message of type ``kind`` (matching ``where``), waiting for it."""
        kinds = (kind,) if isinstance(kind, str) else kind

        def fits(m: Any) -> bool:
            return m.type in kinds and (where is None or where(m))

        for i, m in enumerate(self.inbox):
            if fits(m):
                return self.inbox.pop(i)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(
                    f"{self.label}: no {kinds} in time; queued: {[m.type for m in self.inbox]}"
                )
            m = await self._read(left)
            if fits(m):
                return m
            self.inbox.append(m)

    async def request(
        self,
        message: Any,
        kinds: tuple[str, ...] = ("joined", "done", "error"),
        timeout: float = TIMEOUT,
    ) -> Any:
        """Send a message with a ``req`` and wait for its reply (``timeout`` seconds)."""
        if getattr(message, "req", None) is None or message.req == 0:
            message.req = self.next_req()
        await self.send(message)
        return await self.expect(
            kinds, lambda m: getattr(m, "req", None) == message.req, timeout=timeout
        )

    async def create(self, **options: Any) -> p.Joined:
        reply = await self.request(p.CreateRace(req=0, **options))
        assert reply.type == "joined", reply
        return reply  # type: ignore[no-any-return]

    async def join(self, code: str, role: str = "player", since: int | None = None) -> p.Joined:
        reply = await self.request(p.Join(req=0, code=code, role=role, since=since))  # type: ignore[arg-type]
        assert reply.type == "joined", reply
        return reply  # type: ignore[no-any-return]

    async def ready(self, code: str, ready: bool = True) -> None:
        reply = await self.request(p.Ready(req=0, code=code, ready=ready))
        assert reply.type == "done", reply

    async def move(self, code: str, seq: int, move: str) -> Any:
        """Send a move; the ack or error for this seq."""
        await self.send(p.MoveAction(code=code, seq=seq, move=move))
        return await self.expect(("ack", "error"), lambda m: m.seq == seq)

    async def drain(self, timeout: float = 0.2) -> list[Any]:
        """Read whatever arrives within ``timeout`` (into the inbox); returns it."""
        got = []
        with contextlib.suppress(TimeoutError, ConnectionClosed):
            while True:
                m = await self._read(timeout)
                self.inbox.append(m)
                got.append(m)
        return got

    def events(self, kind: str | None = None) -> list[Any]:
        """Every race event received so far (consumed or not), in order."""
        return [
            m for m in self.received if m.type in EVENT_TYPES and (kind is None or m.type == kind)
        ]

    async def close(self) -> None:
        await self.ws.close()

    async def closed_with(self, timeout: float = TIMEOUT) -> int | None:
        """Wait until the server closes the connection; its close code."""
        with contextlib.suppress(ConnectionClosed, TimeoutError):
            async with asyncio.timeout(timeout):
                while True:
                    frame = await self.ws.recv()
                    if isinstance(frame, bytes):
                        self.frames.append(frame)
        await self.ws.wait_closed()
        return self.ws.close_code


async def start_race(
    url: str, *, players: int = 2, spectators: int = 0, **options: Any
) -> tuple[str, list[Client], list[Client]]:
    """Connect players (the first creates) and spectators, ready everyone, wait for each
    player's deal (the ack with seq 0)."""
    options.setdefault("countdown", 0)
    options.setdefault("variant", "spider1")
    clients = [await Client.connect(url, name=f"player{i + 1}") for i in range(players)]
    joined = await clients[0].create(**options)
    code = joined.race.code
    for c in clients[1:]:
        await c.join(code)
    watchers = [await Client.connect(url, name=f"watcher{i + 1}") for i in range(spectators)]
    for w in watchers:
        await w.join(code, role="spectator")
    for c in clients:
        await c.ready(code)
    for c in clients:
        await c.expect("ack", lambda m: m.seq == 0)
    return code, clients, watchers


class Player:
    """A client playing one race: keeps its view and seq, picks legal moves at random."""

    def __init__(self, client: Client, code: str, view: str, *, seed: int = 0) -> None:
        import random

        self.client = client
        self.code = code
        self.view = view
        self.seq = 0
        self.rng = random.Random(seed)
        self.acks: list[Any] = []

    def pick(self) -> str | None:
        from spider_engine import Board

        moves = Board.from_text(self.view).legal_moves.texts()
        if not moves:
            return None
        plain = [m for m in moves if m != "+"]
        return (
            self.rng.choice(plain) if plain and self.rng.random() < 0.85 else self.rng.choice(moves)
        )

    async def step(self, move: str | None = None) -> Any:
        """One move (a random legal one by default); the ack."""
        move = move or self.pick()
        assert move is not None, "no legal move"
        ack = await self.client.move(self.code, self.seq + 1, move)
        assert ack.type == "ack", ack
        self._took(ack)
        return ack

    async def undo(self) -> Any:
        await self.client.send(p.Undo(code=self.code, seq=self.seq + 1))
        ack = await self.client.expect(("ack", "error"), lambda m: m.seq == self.seq + 1)
        if ack.type == "ack":
            self._took(ack)
        return ack

    async def resign(self) -> Any:
        await self.client.send(p.Resign(code=self.code, seq=self.seq + 1))
        ack = await self.client.expect(("ack", "error"), lambda m: m.seq == self.seq + 1)
        if ack.type == "ack":
            self._took(ack)
        return ack

    def _took(self, ack: Any) -> None:
        self.seq = ack.seq
        self.view = ack.view
        self.acks.append(ack)
