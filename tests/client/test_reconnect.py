"""Dropped connections: the client resumes, resends, and says so."""

from __future__ import annotations

import asyncio

import msgpack

from spider_client import Client, Disconnected, GreedyBot, Reconnected
from spider_client import protocol as p
from spider_engine import Board
from tests.client.client_helpers import FAST, Collector, server_game, server_view
from tests.client.proxy import CuttingProxy


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/")[0])


async def test_link_cut_after_a_move_is_resumed_and_the_move_applied_once(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **FAST)
    proxy = await CuttingProxy(_port(node.url), cut_at=4).start()
    seed = "cut-1"
    try:
        async with await Client.connect(proxy.url, name="ada") as client:
            seen = Collector(client)
            code = await client.create_race(variant="spider1", seed=seed, countdown=0)
            await client.ready()
            await client.wait_until(lambda c: c.view is not None, timeout=20)
            full = Board.deal("spider1", seed)
            bot = GreedyBot()
            acks: list[p.Ack] = []
            for n in range(1, 9):
                move = bot(client.view)
                assert move is not None
                ack = await client.move(move)  # the 4th comes back after a reconnect
                full.push_text(move)
                acks.append(ack)
                assert (ack.seq, ack.moves) == (n, n)
                assert client.view.text() == ack.view == full.view_text()
                assert client.view.text() == await server_view(node, code, client.player)

            # the link was cut once, just after the 4th move went through; the server had
            # applied it and its ack was lost on the way
            assert proxy.cuts == 1
            lost = [msgpack.unpackb(d) for d in proxy.dropped]
            assert any(m["type"] == "ack" and m["seq"] == 4 and not m["duplicate"] for m in lost)
            # the client resent it: the server answered with the same ack, marked duplicate
            assert acks[3].duplicate and acks[3].moves == 4
            assert not any(a.duplicate for i, a in enumerate(acks) if i != 3)
            # the program was told, in order
            kinds = [type(e) for e in seen.events]
            assert kinds.count(Disconnected) == 1 and kinds.count(Reconnected) == 1
            assert kinds.index(Disconnected) < kinds.index(Reconnected)
            disconnected = seen.of(Disconnected)[0]
            reconnected = seen.of(Reconnected)[0]
            assert disconnected.reconnecting and disconnected.code == 1006
            assert reconnected.resent == [4] and reconnected.since is not None
            assert client.reconnects == 1
            # Redis holds each move once: eight actions, seq 8
            game = await server_game(node, code, client.player)
            assert game.seq == 8
            actions = await node.node.store.races.load_actions(code, client.player)
            assert len(actions) == 8
    finally:
        await proxy.close()


async def test_view_matches_the_server_after_every_reconnect(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    proxy = await CuttingProxy(_port(node.url)).start()
    try:
        async with await Client.connect(proxy.url, name="ada") as client:
            seen = Collector(client)
            code = await client.create_race(variant="spider2", seed="r", countdown=0)
            await client.ready()
            await client.wait_until(lambda c: c.view is not None, timeout=20)
            bot = GreedyBot()
            for round_ in range(1, 4):
                for _ in range(3):
                    await client.move(bot(client.view))
                # cut every link (no move in flight); the client comes back by itself
                for writer in list(proxy._writers):
                    writer.transport.abort()
                await client.wait_until(lambda c, r=round_: c.reconnects == r, timeout=20)
                assert client.view.text() == await server_view(node, code, client.player)
                assert client.seq == 3 * round_
            assert len(seen.of(Reconnected)) == 3
    finally:
        await proxy.close()


async def test_client_moves_to_the_next_url_when_its_node_closes(redis_server, server_node) -> None:
    one = await server_node(redis_server.url, **FAST)
    two = await server_node(redis_server.url, **FAST)
    async with await Client.connect([one.url, two.url], name="ada") as client:
        seen = Collector(client)
        watcher = await Client.connect(two.url, name="watcher")
        code = await client.create_race(variant="spider1", seed="fo", countdown=0)
        await watcher.join(code, "spectator")
        await client.ready()
        await client.wait_until(lambda c: c.view is not None, timeout=20)
        assert client.node == "node1"
        bot = GreedyBot()
        for _ in range(5):
            await client.move(bot(client.view))
        await one.close()  # connections get 1012: the service restarts
        ack = await client.move(bot(client.view))
        assert ack.seq == 6 and not ack.duplicate
        assert client.node == "node2"
        reconnected = seen.of(Reconnected)[0]
        assert reconnected.url == two.url and reconnected.node == "node2"
        assert seen.of(Disconnected)[0].code == 1012
        assert client.view.text() == await server_view(two, code, client.player)
        await client.resign()
        await watcher.wait_until(lambda c: c.finished, timeout=20)
        await watcher.close()


async def test_an_action_with_no_answer_is_sent_again(redis_server, server_node) -> None:
    """The ack of move 3 is lost on a link that stays up: after ``resend_after`` the client
    sends the move again, the server answers with the same ack (a duplicate), and the move
    is applied once."""
    node = await server_node(redis_server.url, **FAST)
    proxy = await CuttingProxy(_port(node.url), lose_ack=3).start()
    try:
        async with await Client.connect(proxy.url, name="ada", resend_after=0.3) as client:
            code = await client.create_race(variant="spider1", seed="lost", countdown=0)
            await client.ready()
            await client.wait_until(lambda c: c.view is not None, timeout=20)
            bot = GreedyBot()
            async with asyncio.timeout(30):  # move 3 hangs if nothing is sent again
                acks = [await client.move(bot(client.view)) for _ in range(5)]
            assert [a.seq for a in acks] == [1, 2, 3, 4, 5]
            assert [a.duplicate for a in acks] == [False, False, True, False, False]
            assert proxy.lose_ack is None and len(proxy.dropped) == 1
            assert client.reconnects == 0
            game = await server_game(node, code, client.player)
            assert game.seq == 5
            assert len(await node.node.store.races.load_actions(code, client.player)) == 5
            assert client.view.text() == await server_view(node, code, client.player)
    finally:
        await proxy.close()


async def test_a_rejoin_answered_unavailable_is_tried_again(redis_server, server_node) -> None:
    """After a dropped link the server answers the client's rejoin with ``unavailable``
    twice (the proxy turns its ``joined`` into the error): the client counts each as a
    failed attempt, tries again, and is back in its race, its view the server's."""
    node = await server_node(redis_server.url, **FAST)
    proxy = await CuttingProxy(_port(node.url), refuse_rejoins=2).start()
    try:
        async with await Client.connect(proxy.url, name="ada", affinity=False) as client:
            code = await client.create_race(variant="spider1", seed="again", countdown=0)
            await client.ready()
            await client.wait_until(lambda c: c.view is not None, timeout=20)
            bot = GreedyBot()
            await client.move(bot(client.view))
            for writer in list(proxy._writers):
                writer.transport.abort()
            ack = await client.move(bot(client.view))  # waits for the reconnect
            assert ack.seq == 2 and not ack.duplicate
            assert proxy.refused == 2 and proxy.connections == 4
            assert client.reconnects == 1
            assert client.view.text() == await server_view(node, code, client.player)
    finally:
        await proxy.close()
