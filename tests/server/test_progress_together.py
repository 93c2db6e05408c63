"""A player gets the others' progress at most once per ``progress_interval``: what comes
sooner is held and sent together (the latest of each player, in version order, one frame);
a spectator gets every event at once. Real nodes, Redis and websockets."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
from server_helpers import Client, Player, start_race


def _arrays(client: Client) -> list[list[dict[str, Any]]]:
    decoded = [msgpack.unpackb(f, raw=False) for f in client.frames]
    return [d for d in decoded if isinstance(d, list)]


def _versions(client: Client) -> list[int]:
    return [m.version for m in client.events()]


async def _play(url: str) -> tuple[list[Player], list[Client]]:
    """Three players and a spectator; two of the players move as fast as they can, then
    everyone resigns (the race finishes)."""
    code, clients, (watcher,) = await start_race(url, players=3, spectators=1)
    racers = [
        Player(c, code, next(m.view for m in c.received if m.type == "ack"), seed=i)
        for i, c in enumerate(clients)
    ]
    for _ in range(6):
        await asyncio.gather(racers[0].step(), racers[1].step())
    for racer in racers:
        await racer.resign()
    for c in [*clients, watcher]:
        await c.expect("finished")
    return racers, [*clients, watcher]


async def test_progress_that_comes_fast_reaches_a_player_together(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, progress_interval=0.3)
    racers, (a, b, c, watcher) = await _play(node.url)
    # the third player got the two others' progress together, in frames of progress only,
    # each in version order with one event per player
    together = _arrays(c)
    assert together, "no progress was sent together"
    for frame in together:
        assert all(m["type"] == "progress" for m in frame)
        versions = [m["version"] for m in frame]
        assert versions == sorted(set(versions))
        players = [m["player"]["player"] for m in frame]
        assert len(players) == len(set(players))
    # every player's events only move forward (held progress went out before `finished`)
    # and end with each mover's last progress: nothing a player keeps is lost
    for client in (a, b, c):
        versions = _versions(client)
        assert versions == sorted(set(versions))
        last = {m.player.player: m.player.moves for m in client.events("progress")}
        for racer in racers:
            assert last[racer.client.player] == racer.acks[-1].moves
    # fewer progress frames than progress events reached the third player
    assert len(c.events("progress")) < len(watcher.events("progress"))
    # the spectator got every event, one frame each
    assert not _arrays(watcher)
    versions = _versions(watcher)
    assert versions == list(range(versions[0], versions[-1] + 1))
    progress = [(m.player.player, m.player.moves) for m in watcher.events("progress")]
    for racer in racers[:2]:
        moves = [n for who, n in progress if who == racer.client.player]
        assert moves == [ack.moves for ack in racer.acks]


async def test_with_no_interval_every_progress_goes_at_once(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, progress_interval=0)
    _, (a, b, c, watcher) = await _play(node.url)
    for client in (a, b, c, watcher):
        assert not _arrays(client)
    seen = [(m.version, m.player.moves) for m in watcher.events("progress")]
    assert [(m.version, m.player.moves) for m in c.events("progress")] == seen
