"""Several nodes, one Redis: the same races, the same events in the same order."""

from __future__ import annotations

import asyncio

from redis import Redis

from spider_client import protocol as p
from tests.server.server_helpers import Client, Player


async def _race_across(node1, node2, *, spectators: int = 1, **options):
    a = await Client.connect(node1.url, name="alice")
    b = await Client.connect(node2.url, name="bob")
    joined = await a.create(countdown=0, variant="spider1", **options)
    code = joined.race.code
    await b.join(code)
    watchers = []
    for i in range(spectators):
        w = await Client.connect((node1, node2)[i % 2].url, name=f"w{i}")
        await w.join(code, role="spectator")
        watchers.append(w)
    await a.ready(code)
    await b.ready(code)
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=1)
    pb = Player(b, code, (await b.expect("ack", lambda m: m.seq == 0)).view, seed=2)
    return code, pa, pb, watchers


def _progress_of(event: object) -> tuple[str, int] | None:
    info = getattr(event, "player", None)
    if getattr(event, "type", None) != "progress" or info is None:
        return None
    return info.player, info.moves


async def test_players_on_two_nodes_see_one_order(redis_server, server_node) -> None:
    node1 = await server_node(redis_server.url)
    node2 = await server_node(redis_server.url)
    code, pa, pb, watchers = await _race_across(node1, node2, spectators=2)
    # moves from both nodes interleaved and at once
    for _ in range(5):
        await asyncio.gather(pa.step(), pb.step())
    await pa.undo()
    await asyncio.gather(pa.resign(), pb.resign())
    everyone = [pa.client, pb.client, *watchers]
    finals = [await c.expect("finished") for c in everyone]
    assert len({f.version for f in finals}) == 1
    orders = [[(m.version, m.type, _progress_of(m)) for m in c.events()] for c in everyone]
    # from the start on, the spectators saw exactly the same events in the same order; the
    # players saw the same events in the same order, but where several progress events
    # came close together they may have got only the latest of each player
    starts = [[e[:2] for e in o].index(next(e[:2] for e in o if e[1] == "started")) for o in orders]
    tails = [o[s:] for o, s in zip(orders, starts, strict=True)]
    spectated = tails[2]
    assert tails[3] == spectated
    assert [v for v, _, _ in spectated] == list(range(spectated[0][0], finals[0].version + 1))
    for tail in tails[:2]:
        assert set(tail) <= set(spectated)
        assert [v for v, _, _ in tail] == sorted({v for v, _, _ in tail})
        assert [e for e in tail if e[1] != "progress"] == [
            e for e in spectated if e[1] not in ("progress", "board")
        ]
        for racer in (pa, pb):  # the last progress of each player reached every player
            of = [e[2] for e in spectated if e[2] is not None and e[2][0] == racer.client.player]
            assert of and of[-1] in [e[2] for e in tail]


async def test_same_move_sent_to_both_nodes_at_once_is_applied_once(
    redis_server, server_node
) -> None:
    node1 = await server_node(redis_server.url)
    node2 = await server_node(redis_server.url)
    code, pa, pb, _ = await _race_across(node1, node2, spectators=0)
    await pa.step()
    # the same player on node 2 too, by token
    twin = await Client.connect(node2.url, token=pa.client.token)
    assert twin.player == pa.client.player
    joined = await twin.join(code)
    assert joined.seq == 1
    move = pa.pick()
    msg = p.MoveAction(code=code, seq=2, move=move)
    await asyncio.gather(pa.client.send(msg), twin.send(msg))
    first, second = await asyncio.gather(
        pa.client.expect(("ack", "error"), lambda m: m.seq == 2),
        twin.expect(("ack", "error"), lambda m: m.seq == 2),
    )
    assert first.type == second.type == "ack", (first, second)
    assert (first.view, first.move, first.seq, first.moves, first.score) == (
        second.view,
        second.move,
        second.seq,
        second.moves,
        second.score,
    )
    assert sorted([first.duplicate, second.duplicate]) == [False, True]
    r = Redis.from_url(redis_server.url)
    assert int(r.hget(f"{{race:{code}}}:game:{pa.client.player}", "seq")) == 2
    assert r.llen(f"{{race:{code}}}:actions:{pa.client.player}") == 2
    # everyone saw exactly one progress for that action
    for c in (pa.client, pb.client):
        await c.expect(
            "progress", lambda m: m.player.player == pa.client.player and m.player.moves == 2
        )
    await pb.client.drain(0.3)
    assert (
        len(
            [
                m
                for m in pb.client.events("progress")
                if m.player.player == pa.client.player and m.player.moves == 2
            ]
        )
        == 1
    )
    r.close()


async def test_events_missed_by_a_dropped_subscription_are_filled_in(
    redis_server, server_node
) -> None:
    node1 = await server_node(redis_server.url)
    node2 = await server_node(redis_server.url)
    code, pa, pb, watchers = await _race_across(node1, node2, spectators=2)
    r = Redis.from_url(redis_server.url)
    # cut every node's pub/sub connection; events published meanwhile are lost on the channel
    r.execute_command("CLIENT", "KILL", "TYPE", "pubsub")
    for _ in range(4):
        await pa.step()
        await pb.step()
    version = int(r.hget(f"{{race:{code}}}:meta", "version"))
    for c in (pa.client, pb.client, *watchers):
        await c.expect(("progress",), lambda m: m.version == version)
        versions = [m.version for m in c.events()]
        assert versions == sorted(set(versions))
    for w in watchers:
        seen = [m.version for m in w.events()]
        assert seen == list(range(seen[0], version + 1))
    r.close()
