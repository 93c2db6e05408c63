"""The order of a commit's two ways out, on a real node with real clients: the mover's ack
is sent before any of that commit's events reach the hub (the ack leaves before the mover's
own progress), and the hub receives each race's events in version order.

Two players make several moves at once, so that their commits interleave (the store sends
the actions committed in one turn of the event loop to Redis together), in rounds, and
before each round Redis forgets its scripts (as a restarted Redis has none): the actions
committed then are run again, by redis-py, on one of the client's pooled connections
rather than on the commits' own connection, and their replies may come after those of a
batch sent later. The store answers a batch's commits only once the batch sent before it
is answered, so the hub still gets the versions in order (before it did so, the hub got
the later version first about one run in eight). The two calls are
watched by wrapping them: each wrapper writes down the call and calls the original, so the
node behaves as it does without them. They are wrapped on their classes before the node
starts, so that a reference to the method taken when the node is built (the store's
``on_commit``, the session's ``out.send_ack``) is the wrapper too.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from spider_server.store.redisconn import connect
from tests.server.server_helpers import Player, start_race

ACK = ("spider_server.transport.writing", "Connection", "send_ack")
"""Where the mover's ack is sent: module, class, method (called with the ack's frame, the
(race, player) it is about, and the last version before the action's events)."""

HUB = ("spider_server.fanout.hub", "Hub", "committed")
"""Where a commit's events reach the hub: module, class, method (called with the race, the
last event's version, and the events)."""


def ack_of(arguments: dict[str, Any]) -> tuple[str, str, int]:
    """(race, player, the version of the action's first event) of a call of :data:`ACK`,
    from its arguments by name."""
    code, player = arguments["about"]
    return code, player, arguments["upto"] + 1


def commit_of(arguments: dict[str, Any]) -> tuple[str, int, int]:
    """(race, first version, last version) of a call of :data:`HUB`."""
    last = arguments["version"]
    return arguments["code"], last - len(arguments["events"]) + 1, last


MOVES = 4
"""Moves each of the two players makes in a round."""

ROUNDS = 3
"""Rounds of moves, each after Redis forgot its scripts."""


@dataclass(frozen=True)
class Call:
    kind: str
    """``ack`` or ``hub``."""
    code: str
    first: int
    last: int
    player: str = ""


def _wrap(
    monkeypatch: pytest.MonkeyPatch,
    where: tuple[str, str, str],
    note: Callable[[dict[str, Any]], None],
) -> None:
    """Wrap a method on its class: ``note`` gets the call's arguments by name, then the
    original runs with them."""
    module, cls_name, name = where
    cls = getattr(importlib.import_module(module), cls_name)
    original = getattr(cls, name)
    signature = inspect.signature(original)

    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        note(signature.bind(self, *args, **kwargs).arguments)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, wrapper)


def _last_of(player: Player) -> Callable[[Any], bool]:
    """Whether a message is ``player``'s progress after their last action."""
    moves = player.acks[-1].moves

    def fits(m: Any) -> bool:
        return bool(m.player.player == player.client.player and m.player.moves == moves)

    return fits


async def test_the_ack_goes_before_the_events_which_reach_the_hub_in_order(
    redis_server, server_node, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Call] = []

    def acked(arguments: dict[str, Any]) -> None:
        code, player, first = ack_of(arguments)
        calls.append(Call("ack", code, first, first, player))

    def committed(arguments: dict[str, Any]) -> None:
        calls.append(Call("hub", *commit_of(arguments)))

    _wrap(monkeypatch, ACK, acked)
    _wrap(monkeypatch, HUB, committed)
    node = await server_node(redis_server.url)
    code, clients, _ = await start_race(node.url, players=2, seed="1")  # closed with the node
    players = [
        Player(c, code, next(m for m in c.received if m.type == "ack").view, seed=i)
        for i, c in enumerate(clients)
    ]
    for player, other in ((players[0], players[1]), (players[1], players[0])):
        await player.step()  # alone: the action script is in Redis's cache from then on
        await other.client.expect("progress", _last_of(player))
    begun = len(calls)

    async def play(player: Player) -> None:
        for _ in range(MOVES):
            await player.step()

    redis = connect(redis_server.url)
    try:
        for _ in range(ROUNDS):
            await redis.script_flush()
            await asyncio.gather(*(play(pl) for pl in players))
            # each player has the other's last progress: every commit's events went out
            for me, other in ((players[0], players[1]), (players[1], players[0])):
                await me.client.expect("progress", _last_of(other))
    finally:
        await redis.aclose()

    moved = calls[begun:]
    listing = "\n".join(f"    {c}" for c in calls)
    acks = [c for c in moved if c.kind == "ack"]
    movers = sorted(pl.client.player for pl in players for _ in range(MOVES * ROUNDS))
    assert sorted(c.player for c in acks) == movers, listing
    assert all(c.code == code for c in acks), listing
    for i, call in enumerate(calls):
        if call.kind != "ack":
            continue
        theirs = [
            j
            for j, c in enumerate(calls)
            if c.kind == "hub" and c.code == call.code and c.first <= call.first <= c.last
        ]
        assert theirs, f"the events of {call} never reached the hub:\n{listing}"
        assert min(theirs) > i, (
            f"the events of {call} reached the hub before the ack was sent:\n{listing}"
        )
    reached: dict[str, int] = {}
    for call in calls:
        if call.kind != "hub":
            continue
        assert call.first > reached.get(call.code, 0), (
            f"the hub received {call} after version {reached[call.code]}:\n{listing}"
        )
        reached[call.code] = call.last
