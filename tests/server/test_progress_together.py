"""A player gets the others' progress at most once per ``progress_interval``: what comes
sooner is held and sent together (the latest of each player, in version order, one frame);
a spectator gets every event at once. Real nodes, Redis and websockets."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack

from tests.server.server_helpers import Client, Player, start_race


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
    # a mover's own progress never comes after an ack it is older than
    for racer in racers[:2]:
        acked = 0
        for m in racer.client.received:
            if m.type == "ack" and m.code == racer.code:
                acked = max(acked, m.moves)
            elif m.type == "progress" and m.player.player == racer.client.player:
                assert m.player.moves >= acked, (m.player.moves, acked)
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


async def test_progress_held_for_a_race_a_player_leaves_is_not_sent(
    redis_server, server_node
) -> None:
    from spider_client import protocol as p

    node = await server_node(redis_server.url, progress_interval=0.3)
    code, clients, _ = await start_race(node.url, players=3)
    a, b, c = clients
    racers = [Player(x, code, next(m.view for m in x.received if m.type == "ack")) for x in (a, b)]
    for _ in range(4):
        await asyncio.gather(*(r.step() for r in racers))
    # the third player leaves (resigning) while progress may be held for it
    reply = await c.request(p.Leave(req=0, code=code))
    assert reply.type == "done"
    left_at = len(c.received)
    await c.drain(0.8)  # past the interval: anything held would have gone out by now
    late = [m for m in c.received[left_at:] if getattr(m, "race", None) == code]
    assert late == []
    # the others go on getting progress
    await racers[0].step()
    await b.expect("progress", lambda m: m.player.player == a.player and m.player.moves == 5)


async def test_a_client_that_does_not_take_arrays_gets_one_frame_per_event(
    redis_server, server_node
) -> None:
    """A player whose client did not say ``together`` in hello gets held progress one
    frame each: the same events (the latest of each player, in version order), no array."""
    node = await server_node(redis_server.url, progress_interval=0.3)
    a = await Client.connect(node.url, name="a")
    b = await Client.connect(node.url, name="b")
    plain = await Client.connect(node.url, name="plain", together=False)
    code = (await a.create(countdown=0, variant="spider1")).race.code
    for c in (b, plain):
        await c.join(code)
    for c in (a, b, plain):
        await c.ready(code)
    views = [(await c.expect("ack", lambda m: m.seq == 0)).view for c in (a, b, plain)]
    racers = [
        Player(c, code, view, seed=i)
        for i, (c, view) in enumerate(zip((a, b), views[:2], strict=True))
    ]
    for _ in range(6):
        await asyncio.gather(*(r.step() for r in racers))
    await plain.drain(0.8)  # past the interval: what was held has gone out
    await asyncio.gather(a.drain(0.1), b.drain(0.1))
    assert not _arrays(plain)
    assert _arrays(a) or _arrays(b)  # the clients that take arrays got some
    versions = _versions(plain)
    assert versions == sorted(set(versions))
    last = {m.player.player: m.player.moves for m in plain.events("progress")}
    for racer in racers:
        assert last[racer.client.player] == racer.acks[-1].moves
    assert len(plain.events("progress")) < 12  # held ones were replaced by later ones


async def test_progress_held_goes_out_with_the_player_s_own_ack(redis_server, server_node) -> None:
    """A player's ack takes the others' progress held for them along (before it, in its
    write), however long the interval: an ack is a write anyway."""
    node = await server_node(redis_server.url, progress_interval=60)
    code, (a, b), _ = await start_race(node.url, players=2)
    mover, other = (
        Player(c, code, next(m.view for m in c.received if m.type == "ack"), seed=i)
        for i, c in enumerate((a, b))
    )
    await mover.step()  # the first progress goes out at once
    await b.expect("progress", lambda m: m.player.player == a.player and m.player.moves == 1)
    await mover.step()  # the second comes within the interval: held
    await other.step()
    got = b.received
    ack_at = next(i for i, m in enumerate(got) if m.type == "ack" and m.seq == other.seq)
    second = [
        i
        for i, m in enumerate(got)
        if m.type == "progress" and m.player.player == a.player and m.player.moves == 2
    ]
    assert second and second[0] < ack_at, (second, ack_at)
