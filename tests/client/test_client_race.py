"""The client against real server nodes (real Redis, real sockets): races, views, errors."""

from __future__ import annotations

import asyncio

import pytest

from spider_client import (
    Client,
    GameOver,
    GreedyBot,
    IllegalMove,
    MalformedMove,
    NotFound,
    NotInRace,
    RandomBot,
    UndoNotAllowed,
    ViewChanged,
    WrongState,
    play_race,
)
from spider_client import protocol as p
from spider_engine import Board
from tests.client.client_helpers import FAST, Collector, server_game, server_view


async def test_race_end_to_end_with_views_checked_after_every_ack(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **FAST)
    seed = "client-e2e"
    async with (
        await Client.connect(node.url, name="greedy") as a,
        await Client.connect(node.url, name="random") as b,
        await Client.connect(node.url, name="watcher") as watcher,
    ):
        code = await a.create_race(variant="spider1", seed=seed, countdown=0, live_boards=True)
        assert a.code == code and a.role == "player" and a.race is not None
        await watcher.join(code, "spectator")
        seen = Collector(watcher)
        await b.join(code)
        random_task = asyncio.create_task(play_race(b, RandomBot(1), max_actions=60))

        await a.ready()
        await a.wait_until(lambda c: c.view is not None, timeout=20)
        full = Board.deal("spider1", seed)
        assert a.view is not None and a.view.text() == full.view_text()
        assert a.view.text() == await server_view(node, code, a.player)
        bot = GreedyBot()
        for _ in range(400):
            move = bot(a.view)
            if move is None:
                ack = await a.resign()
            else:
                ack = await a.move(move)
                full.push_text(move)
            # after every ack: the client's view is the server's view of this player
            assert a.view.text() == ack.view == await server_view(node, code, a.player)
            assert a.view.text() == full.view_text()
            assert a.legal_moves() == a.view.legal_moves.texts()
            if ack.status != "playing":
                break
        else:
            await a.resign()
        await random_task
        finished = await seen.wait_for(p.Finished)
        await a.wait_until(lambda c: c.finished, timeout=20)

    assert {r.player for r in finished.results} == {a.player, b.player}
    assert [r.rank for r in finished.results] == [1, 2]
    assert a.race is not None and a.race.results == finished.results
    # the spectator saw live boards, the players' progress, and the revealed seed
    assert seen.of(p.BoardShown) and seen.of(p.Progress)
    assert finished.seed == seed
    replayed = Board.deal("spider1", finished.seed)
    for action in finished.replays[a.player]:
        if action not in ("resign", "undo"):
            replayed.push_text(action)
    assert replayed.text() == finished.boards[a.player]
    assert replayed.view_text() == a.view.text()


async def test_server_errors_arrive_as_typed_exceptions(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with await Client.connect(node.url, name="ada") as client:
        with pytest.raises(NotInRace):
            await client.move("a1b")
        with pytest.raises(NotFound):
            await client.join("ZZZZZ")
        code = await client.create_race(variant="spider1", seed="7", undo=False, countdown=0)
        with pytest.raises(WrongState):
            await client.move("a1b")  # not started
        await client.ready()
        await client.wait_until(lambda c: c.view is not None, timeout=20)
        with pytest.raises(IllegalMove):
            await client.move("a9b")
        with pytest.raises(MalformedMove):
            await client.move("a1")
        with pytest.raises(UndoNotAllowed):
            await client.undo()
        assert client.seq == 0  # nothing refused was counted
        move = client.legal_moves()[-1]
        ack = await client.move(move)
        assert (ack.seq, ack.moves, ack.move) == (1, 1, move)
        await client.resign()
        with pytest.raises(GameOver):
            await client.move(client.legal_moves()[0])
        game = await server_game(node, code, client.player)
        assert game.seq == 2


async def test_view_is_rebuilt_when_a_client_comes_back_with_its_token(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **FAST)
    first = await Client.connect(node.url, name="ada")
    code = await first.create_race(variant="spider2", seed="3", countdown=0)
    await first.ready()
    await first.wait_until(lambda c: c.view is not None, timeout=20)
    for _ in range(3):
        await first.move(GreedyBot()(first.view))
    token, view = first.token, first.view.text()
    await first.close()

    async with await Client.connect(node.url, token=token) as again:
        assert again.player == first.player
        joined = await again.join(code)
        assert joined.seq == 3
        assert again.view is not None and again.view.text() == view
        assert again.view.text() == await server_view(node, code, again.player)
        ack = await again.move(GreedyBot()(again.view))
        assert ack.seq == 4


async def test_a_fast_bot_keeps_going_under_the_default_rate_limit(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url)  # 20 messages a second, bursts of 40
    async with await Client.connect(node.url, name="hasty") as client:
        seen = Collector(client)
        code = await client.create_race(variant="spider1", seed="9", countdown=0)
        await client.ready()
        await client.wait_until(lambda c: c.view is not None, timeout=20)
        for _ in range(60):
            await client.move(RandomBot(2)(client.view))
        assert client.seq == 60
        assert (await server_game(node, code, client.player)).seq == 60
        assert client.view.text() == await server_view(node, code, client.player)
        assert any(e.error == "rate_limited" for e in seen.of(p.Error))
        assert client.send_interval > 0


async def test_view_changed_events_follow_the_view(redis_server, server_node) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with await Client.connect(node.url, name="ada") as client:
        seen = Collector(client)
        await client.create_race(variant="spider4", seed="1", countdown=0)
        await client.ready()
        await client.wait_until(lambda c: c.view is not None, timeout=20)
        await client.move("d1j")
        await client.undo()
        await asyncio.sleep(0)
        views = [e.view for e in seen.of(ViewChanged)]
        deal = Board.deal("spider4", "1")
        assert views[0] == deal.view_text()
        deal.push_text("d1j")
        assert views[-2] == deal.view_text()
        assert views[-1] == client.view.text()
        assert client.view.text() == Board.deal("spider4", "1").view_text()


async def test_an_action_whose_seq_was_taken_elsewhere_is_played_as_the_next(
    redis_server, server_node
) -> None:
    # two connections speak for one player; the second moves first with seq 1, so the
    # first's seq 1 gets the other move's ack back: it plays its own move as seq 2
    node = await server_node(redis_server.url, **FAST)
    async with await Client.connect(node.url, name="ada") as first:
        code = await first.create_race(variant="spider4", seed="1", countdown=0)
        await first.ready()
        await first.wait_until(lambda c: c.view is not None, timeout=20)
        async with await Client.connect(node.url, token=first.token) as second:
            await second.join(code)
            assert (await second.move("d1j")).seq == 1
        assert first.seq == 0  # it has not heard of it
        ack = await first.move("i1e")  # legal before and after d1j
        assert (ack.seq, ack.move, ack.moves) == (2, "i1e", 2)
        full = Board.deal("spider4", "1")
        full.push_text("d1j")
        full.push_text("i1e")
        assert first.view.text() == full.view_text() == await server_view(node, code, first.player)


async def test_a_client_that_never_reads_keeps_only_the_last_events(
    redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with await Client.connect(node.url, name="bot", max_unread=4) as a:
        await a.create_race(variant="spider1", seed="unread", countdown=0)
        await a.ready()
        await a.wait_until(lambda c: c.view is not None, timeout=20)
        acks = []
        for _ in range(6):
            move = GreedyBot()(a.view)
            assert move is not None
            acks.append(await a.move(move))
        # every ack came; the queue holds the newest four things it emitted, in order
        assert [x.seq for x in acks] == [1, 2, 3, 4, 5, 6]
        assert a.dropped_events > 0
        kept = []
        async for event in a.events():
            kept.append(event)
            if len(kept) == 4:
                break
        assert isinstance(kept[-1], (p.Ack, p.Progress, ViewChanged))
        last_seqs = [e.seq for e in kept if isinstance(e, (p.Ack, ViewChanged))]
        assert last_seqs and last_seqs[-1] == 6


async def test_progress_sent_together_updates_the_race_and_the_events(
    redis_server, server_node
) -> None:
    """The others' progress held by the server and sent in one frame: the client takes each
    event in order; its copy of the race has every player's latest counts."""
    node = await server_node(redis_server.url, progress_interval=0.3, **FAST)
    async with (
        await Client.connect(node.url, name="fast1") as a,
        await Client.connect(node.url, name="fast2") as b,
        await Client.connect(node.url, name="reader") as c,
    ):
        code = await a.create_race(variant="spider1", seed="together", countdown=0)
        await b.join(code)
        await c.join(code)
        seen = Collector(c)
        for x in (a, b, c):
            await x.ready()
        for x in (a, b, c):
            await x.wait_until(lambda y: y.view is not None, timeout=20)
        bots = {a: RandomBot(1), b: RandomBot(2)}
        for _ in range(8):
            for x, bot in bots.items():
                move = bot(x.view)
                assert move is not None
                await x.move(move)
        want = {x.player: x.me.moves for x in (a, b)}
        assert want[a.player] == want[b.player] == 8

        def caught_up(client: Client) -> bool:
            assert client.race is not None
            return {i.player: i.moves for i in client.race.players if i.player in want} == want

        await c.wait_until(caught_up, timeout=10)
        progress = [e for e in seen.events if isinstance(e, p.Progress)]
        versions = [e.version for e in progress]
        assert versions == sorted(set(versions))
        assert len(progress) < 16  # fewer than one a move: some came together
        assert {e.player.player: e.player.moves for e in progress} == want
