"""A session's handlers without sockets: frames in, frames out, on a real Redis.

The node is built but never started (nothing listens); its context gives the session the
store, the hub and the seed pool. What the session sends is read from a recording outbox.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest

from spider_client import protocol as p
from spider_engine import Board
from spider_server.errors import ConfigError
from spider_server.node import Node, check_libraries
from spider_server.session import HANDLERS, Session, State
from spider_server.settings import Settings
from spider_server.transport import CLOSE_POLICY, EventFrame


class Outbox:
    """Keeps every frame a session sends, decoded, in order."""

    together = False

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.closed: int | None = None

    def send(self, frame: bytes, wire: bytes | None = None) -> None:
        self.frames.append(msgpack.unpackb(frame, raw=False))

    def send_ack(self, frame: bytes, about: tuple[str, str], upto: int) -> None:
        self.send(frame)

    def send_snapshot(self, code: str, frame: bytes) -> None:
        self.send(frame)

    def unread(self, code: str) -> bool:
        return False

    def send_event(self, event: EventFrame) -> None:
        self.send(event.frame)

    def send_progress(self, event: EventFrame) -> None:
        self.send(event.frame)

    def drop_held(self, code: str) -> None:
        pass

    def close_soon(self, code: int, reason: str) -> None:
        self.closed = code

    def types(self) -> list[str]:
        return [f["type"] for f in self.frames]

    async def wait_for(self, test: Any, timeout: float = 5.0) -> dict[str, Any]:
        async with asyncio.timeout(timeout):
            while True:
                for frame in self.frames:
                    if test(frame):
                        return frame
                await asyncio.sleep(0.01)


@pytest.fixture
async def node(redis_server):
    settings = Settings(node="s", secret="session-tests", tick=0.02, progress_interval=0.0)
    node = Node(settings, redis_url=redis_server.url, secret=b"session-tests")
    yield node
    await node.close()


async def _session(node: Node, name: str = "ann") -> tuple[Session, Outbox]:
    out = Outbox()
    session = Session(node.context, out)
    await session.handle(p.encode(p.Hello(name=name)))
    assert out.types() == ["welcome"]
    return session, out


def test_every_client_message_has_a_handler() -> None:
    assert set(HANDLERS) == set(p.CLIENT_TYPES.values())


async def test_only_hello_is_taken_before_hello_and_only_once(node) -> None:
    out = Outbox()
    session = Session(node.context, out)
    assert session.state is State.AWAITING_HELLO
    await session.handle(p.encode(p.Join(req=1, code="ABCDE")))
    assert out.frames[-1]["type"] == "error" and out.frames[-1]["error"] == "protocol"
    assert session.state is State.AWAITING_HELLO
    await session.handle(p.encode(p.Hello(name="ann")))
    assert out.frames[-1]["type"] == "welcome" and out.frames[-1]["name"] == "ann"
    assert session.state is State.READY
    await session.handle(p.encode(p.Hello(name="bob")))
    assert out.frames[-1]["error"] == "protocol"
    assert session.identity is not None and session.identity.name == "ann"


async def test_read_timeouts_follow_the_state(node) -> None:
    s = node.settings
    out = Outbox()
    silent = Session(node.context, out)
    assert silent.read_timeout() == s.hello_timeout
    silent.timed_out()
    assert out.closed == CLOSE_POLICY and silent.state is State.CLOSING
    session, out = await _session(node)
    assert session.read_timeout() == s.idle_timeout
    await session.handle(p.encode(p.CreateRace(req=1, seed="5", countdown=0, max_players=2)))
    assert out.frames[-1]["type"] == "joined"
    assert session.read_timeout() is None  # in a race: no idle limit


async def test_a_move_is_acked_before_its_progress_and_a_resend_gets_the_same_ack(
    node,
) -> None:
    session, out = await _session(node)
    await session.handle(
        p.encode(p.CreateRace(req=1, seed="11", countdown=0, max_players=1, variant="spider1"))
    )
    code = out.frames[-1]["race"]["code"]
    await session.handle(p.encode(p.Ready(req=2, code=code)))
    deal = await out.wait_for(lambda f: f["type"] == "ack" and f["seq"] == 0)
    move = Board.from_text(deal["view"]).legal_moves.texts()[0]
    before = len(out.frames)
    await session.handle(p.encode(p.MoveAction(code=code, seq=1, move=move)))
    sent = out.frames[before:]
    assert [f["type"] for f in sent] == ["ack", "progress"]
    assert sent[0]["seq"] == 1 and sent[0]["move"] == move
    assert sent[1]["player"]["moves"] == sent[0]["moves"] == 1
    await session.handle(p.encode(p.MoveAction(code=code, seq=1, move=move)))
    again = out.frames[-1]
    assert again["type"] == "ack" and again["duplicate"] and again["view"] == sent[0]["view"]


async def test_a_hint_counts_for_everyone_in_the_race(node) -> None:
    session, out = await _session(node)
    await session.handle(
        p.encode(
            p.CreateRace(req=1, seed="3", countdown=0, max_players=1, variant="spider1", hints=True)
        )
    )
    code = out.frames[-1]["race"]["code"]
    await session.handle(p.encode(p.Ready(req=2, code=code)))
    await out.wait_for(lambda f: f["type"] == "ack" and f["seq"] == 0)
    await session.handle(p.encode(p.Hint(req=3, code=code)))
    reply = await out.wait_for(lambda f: f["type"] == "hint_reply")
    assert reply["req"] == 3
    progress = await out.wait_for(lambda f: f["type"] == "progress")
    assert progress["player"]["hints"] == 1
    race = await node.store.races.load_race(code)
    assert race is not None and race.players[session.player].hints == 1


async def test_a_node_refuses_to_start_on_libraries_without_what_it_reads(
    monkeypatch,
) -> None:
    check_libraries()  # the installed ones have it
    from redis.asyncio import connection

    monkeypatch.setattr(connection.Connection, "pack_commands", None)
    with pytest.raises(ConfigError, match=r"redis-py .* is not supported.*pack_commands"):
        check_libraries()
    monkeypatch.undo()
    from websockets.asyncio import connection as ws_connection

    real = ws_connection.Connection.connection_made

    def without_transport(self: Any, transport: Any) -> None:
        real(self, transport)
        del self.transport

    monkeypatch.setattr(ws_connection.Connection, "connection_made", without_transport)
    with pytest.raises(ConfigError, match=r"websockets .* is not supported.*transport"):
        check_libraries()
