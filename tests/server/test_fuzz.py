"""Hostile input: a fuzzer sends thousands of random and mutated frames from many
connections at once while a scripted race runs beside it on the same node."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from typing import Any

import msgpack
from websockets.exceptions import ConnectionClosed

from spider_client import protocol as p
from spider_engine import Board
from tests.server.server_helpers import Client, start_race

CONNECTIONS = 24
FRAMES_PER_CONNECTION = 150
POLICY_CLOSES = {1002, 1008, 1009}
CLIENT_TYPES = ["hello", "create_race", "join", "leave", "ready", "move", "undo", "resign"]


def _junk(rng: random.Random, depth: int = 0) -> Any:
    """A random msgpack value: scalars of every kind, huge numbers, nested containers."""
    roll = rng.random()
    if depth > 3 or roll < 0.5:
        return rng.choice(
            [
                rng.randint(-(2**63), 2**64 - 1),
                2**64 - 1,
                -(2**63),
                0,
                -1,
                rng.random() * 1e308,
                float("inf"),
                float("nan"),
                True,
                None,
                "",
                "x" * rng.randint(1, 300),
                "\u0000\ud7ff\U0001f0a1",
                bytes(rng.randbytes(rng.randint(0, 40))),
            ]
        )
    if roll < 0.75:
        return [_junk(rng, depth + 1) for _ in range(rng.randint(0, 5))]
    return {
        rng.choice(["type", "req", "code", "seq", "move", str(rng.random())]): _junk(rng, depth + 1)
        for _ in range(rng.randint(0, 5))
    }


def _frame(rng: random.Random, code: str) -> tuple[str, bytes | str]:
    """One hostile frame and its kind."""
    kind = rng.choice(
        ["bytes", "shape", "fields", "huge", "deep", "oversized", "mutated", "text", "spoof"]
    )
    if kind == "bytes":
        return kind, rng.randbytes(rng.randint(0, 200))
    if kind == "shape":
        return kind, msgpack.packb(_junk(rng))
    if kind == "fields":  # a known type with fields of random kinds
        fields = {k: _junk(rng, 2) for k in ("req", "code", "seq", "move", "role", "since")}
        fields["type"] = rng.choice(CLIENT_TYPES[1:])
        return kind, msgpack.packb(fields)
    if kind == "huge":
        fields = {"type": "move", "code": code, "seq": rng.choice([2**64 - 1, -(2**63)])}
        fields["move"] = "a1b"
        if rng.random() < 0.5:
            fields = {"type": "join", "req": 2**64 - 1, "code": code, "since": 2**64 - 1}
        return kind, msgpack.packb(fields)
    if kind == "deep":
        depth = rng.randint(100, 3000)
        if rng.random() < 0.5:
            return kind, b"\x91" * depth + b"\xc0"
        inner = b"\x81\xa1a" * min(depth, 1300) + b"\xc0"
        return kind, b"\x82\xa4type\xa4join\xa4code" + inner
    if kind == "oversized":
        return kind, msgpack.packb({"type": "move", "code": code, "seq": 1, "move": "x" * 5000})
    if kind == "mutated":
        data = bytearray(p.encode(p.MoveAction(code=code, seq=rng.randint(1, 9), move="f1c")))
        for _ in range(rng.randint(1, 4)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return kind, bytes(data)
    if kind == "text":
        return kind, "".join(chr(rng.randint(32, 0x2FFF)) for _ in range(rng.randint(0, 50)))
    # a well-formed action in someone else's race: this connection is not its player
    return kind, p.encode(p.MoveAction(code=code, seq=1, move="f1c"))


async def _fuzz(url: str, code: str, seed: int, tally: Counter[str]) -> None:
    rng = random.Random(seed)
    client = await Client.connect(url, name=f"fuzz{seed}")
    for _ in range(FRAMES_PER_CONNECTION):
        kind, frame = _frame(rng, code)
        try:
            await client.send_raw(frame)
            reply = await client.expect(("error", "joined", "done", "ack"), timeout=10)
        except ConnectionClosed:
            reply = None
        if reply is None or client.ws.close_code is not None:
            closed = await client.closed_with()
            assert closed in POLICY_CLOSES, (kind, frame[:60], closed)
            tally["closed"] += 1
            client = await Client.connect(url, name=f"fuzz{seed}")
            continue
        tally["frames"] += 1
        if reply.type == "error":
            tally[reply.error] += 1
        else:  # well-formed after all (a mutation, or a create_race with its defaults)
            assert kind in ("mutated", "fields"), (kind, frame[:60], reply)
            tally["accepted"] += 1
    await client.close()


async def test_fuzzer_beside_a_scripted_race(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, rate=100000.0, burst=100000)
    seed = "fuzz-race"
    code, (a, b), (w,) = await start_race(
        node.url, players=2, spectators=1, variant="spider2", seed=seed, undo=True
    )
    tally: Counter[str] = Counter()
    fuzzers = asyncio.gather(*(_fuzz(node.url, code, n, tally) for n in range(CONNECTIONS)))

    async def scripted(client: Client, rng_seed: int) -> int:
        board = Board.deal("spider2", seed)
        rng = random.Random(rng_seed)
        for n in range(1, 41):
            moves = board.legal_moves.texts()
            move = rng.choice([m for m in moves if m != "+"] or moves)
            ack = await client.move(code, n, move)
            assert ack.type == "ack", ack
            board.push_text(move)
            assert (ack.seq, ack.move, ack.view) == (n, move, board.view_text())
            await asyncio.sleep(0)
        return n

    done = await asyncio.gather(scripted(a, 1), scripted(b, 2))
    await fuzzers
    assert done == [40, 40]
    total = tally["frames"] + tally["closed"]
    assert total == CONNECTIONS * FRAMES_PER_CONNECTION, tally
    assert tally["bad_frame"] > 500 and tally["invalid"] > 100 and tally["not_a_player"] > 50
    assert tally["closed"] > 0 and "internal" not in tally, tally
    # the node still serves, and the spectator saw every scripted move
    for c, moves in ((a, 40), (b, 40)):
        await w.expect(
            "progress", lambda m, c=c, n=moves: m.player.player == c.player and m.player.moves == n
        )
    fresh = await Client.connect(node.url, name="after")
    assert (await fresh.join(code, role="spectator")).race.state == "running"
