"""What a move costs, counted, not timed: held to the budget in ``move_budget.json``.

Two players of one race on a real node and a real Valkey make the same seeded moves every
run, one at a time. Around them the test reads, from Valkey, what the node's commit link
(its own connection, named ``commits:<node>``: nothing else goes on it) cost: commands run
(``tot-cmds`` in ``CLIENT LIST``, the script's own calls included), bytes sent to Valkey and
bytes back; and, in the node, how many times the server's code encoded msgpack. Counts
like these move only when the code does, so a change that makes a move dearer fails here
on any machine, busy or not; what the change bought is then written into the budget with
the commit that pays for it (``spider-race bench server`` tells the time it costs).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgpack
import pytest

from spider_server.store.redisconn import connect
from tests.server.server_helpers import Player, start_race

BUDGET = json.loads((Path(__file__).with_name("move_budget.json")).read_text())
"""The committed budget of one move (see the file's ``why``)."""

MOVES = 12
"""Moves each of the two players makes while counted (after one each first)."""


def _link_stats(client_list: str, name: str) -> dict[str, int]:
    """The counters of the connection named ``name`` in a ``CLIENT LIST`` reply."""
    lines = [line for line in client_list.splitlines() if f" name={name} " in f" {line} "]
    assert len(lines) == 1, f"connections named {name}: {lines}"
    fields = dict(re.findall(r"([\w-]+)=(\S*)", lines[0]))
    return {k: int(fields[k]) for k in ("tot-cmds", "tot-net-in", "tot-net-out")}


class _Encodes:
    """Counts ``msgpack.packb`` calls made on the server's behalf: with the server's code on
    the stack (the protocol's encoder included; not the test's clients, which run in the
    same process). Those made by the node's background work (``background``: its loops and
    the tasks it spawned) are counted apart: the sweep's turn comes every half second, so
    whether it falls inside the moves depends on the machine's speed, not on the code."""

    def __init__(self, background: Callable[[], set[asyncio.Task[Any]]]) -> None:
        self.count = 0
        self.apart: Counter[str] = Counter()
        self._background = background
        self._packb = msgpack.packb

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_globals.get("__name__", "").startswith("spider_server."):
                task = asyncio.current_task()
                if task is not None and task in self._background():
                    self.apart[task.get_coro().__qualname__] += 1  # type: ignore[union-attr]
                else:
                    self.count += 1
                break
            frame = frame.f_back
        return self._packb(*args, **kwargs)


async def _encode_in_background() -> None:
    from spider_server.store.codec import pack_payload

    pack_payload({"background": True})


@pytest.mark.parametrize("layout", [1, 2])
async def test_a_move_costs_no_more_than_its_budget(
    redis_server, server_node, monkeypatch: pytest.MonkeyPatch, layout: int
) -> None:
    """Each layout of a player's keys (``store_layout``) against its own budget."""
    budget = {**BUDGET, **BUDGET.get(f"layout_{layout}", {})}
    node = await server_node(redis_server.url, store_layout=layout)
    code, clients, _ = await start_race(node.url, players=2, seed="7")
    players = [
        Player(c, code, next(m for m in c.received if m.type == "ack").view, seed=i)
        for i, c in enumerate(clients)
    ]
    for player in players:  # the script cached, the keys of each player's moves known
        await player.step()
    redis = connect(redis_server.url)
    link = f"commits:{node.node.settings.node}"
    encodes = _Encodes(lambda: {*node.node._loops, *node.node._tasks})
    try:
        before = _link_stats((await redis.execute_command("CLIENT", "LIST")).decode(), link)
        monkeypatch.setattr(msgpack, "packb", encodes)
        for i in range(MOVES):
            if i == MOVES // 2:  # background work that encodes, as the sweep's can
                node.node.spawn(_encode_in_background())
            for player in players:
                await player.step()
        monkeypatch.undo()
        after = _link_stats((await redis.execute_command("CLIENT", "LIST")).decode(), link)
    finally:
        await redis.aclose()
    moves = MOVES * len(players)
    spent = {
        "commands": (after["tot-cmds"] - before["tot-cmds"]) / moves,
        "bytes_to_redis": (after["tot-net-in"] - before["tot-net-in"]) / moves,
        "bytes_from_redis": (after["tot-net-out"] - before["tot-net-out"]) / moves,
        "encodes": encodes.count / moves,
    }
    print("a move's cost:", json.dumps(spent), "; background encodes apart:", dict(encodes.apart))
    assert spent["commands"] > 1, spent  # the script ran, and its calls were counted
    assert encodes.count > 0, spent
    assert encodes.apart.get(_encode_in_background.__qualname__) == 1, encodes.apart
    over = {k: (v, budget[k]) for k, v in spent.items() if v > budget[k]}
    assert not over, f"a move costs more than its budget (measured, budget): {over}; all: {spent}"
