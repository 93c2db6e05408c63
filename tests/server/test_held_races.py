"""Races nobody can hold (rules.md §7a), against a real node whose clock only the test
moves (:class:`~tests.server.clocks.TestClock`): nothing here waits for a window to pass,
nor asserts on the machine's clock.

- A player away in many short spells, each well within the grace, is out as ``abandoned``
  once the spells add up to it; each ``back`` tells everyone the time away in all.
- A connected player who never acts is out as ``idle`` when their deadline passes (the
  node's tick decides it: its presence sweeps are an hour apart here), and ranks with the
  forfeits; a player who acts is never idle, their deadline moving on with each action.
  People and bots alike. The deadline reaches every player first (``idle_at``), for the
  page and the terminal to warn them.
"""

from __future__ import annotations

from typing import Any

import pytest

from spider_client import Client, GameOver
from spider_client.protocol import Back, PlayerInfo
from tests.client.client_helpers import Collector
from tests.server.clocks import TestClock

HOUR_SWEEPS: dict[str, Any] = {"presence_ttl": 3600.0}
"""Presence sweeps 20 minutes apart: what the test sees decided comes from a connection's
end, a rejoin, or the node's tick, never from a sweep."""


async def _race(
    url: str, players: list[tuple[str, bool]], **options: Any
) -> tuple[str, list[Client]]:
    """A running race of ``players`` (name, bot), all on ``url``, with countdown 0: on a
    clock that stands still, it starts at the clock's time."""
    clients = [await Client.connect(url, name=name, bot=bot) for name, bot in players]
    options = {"variant": "spider4", "countdown": 0, "time_limit": 600, **options}
    code = await clients[0].create_race(max_players=len(clients), **options)
    for c in clients[1:]:
        await c.join(code)
    for c in clients:
        await c.ready()
    for c in clients:
        await c.wait_until(lambda c: c.view is not None and c.me is not None, timeout=30)
    return code, clients


def _row(client: Client, player: str | None) -> PlayerInfo:
    assert client.race is not None
    return next(i for i in client.race.players if i.player == player)


async def test_absence_in_short_spells_adds_up_to_abandoned(redis_server, server_node) -> None:
    clock = TestClock()
    node = await server_node(redis_server.url, clock=clock)
    code, (alice, bob) = await _race(
        node.url, [("alice", False), ("bob", False)], away_grace=60, idle_limit=3600
    )
    seen = Collector(bob)
    who, token = alice.player, alice.token
    assert who is not None and token is not None
    player = alice
    # six spells of 9 s away, each far within the grace of 60 s: 54 s away in all
    for spell in range(1, 7):
        await player.close()
        await bob.wait_until(lambda c: _row(c, who).away_since is not None, timeout=30)
        clock.move(9)
        player = await Client.connect(node.url, token=token)
        await player.join(code)
        await bob.wait_until(lambda c: _row(c, who).connected, timeout=30)
        assert _row(bob, who).status == "playing", f"out after spell {spell}"
        await seen.wait_for(Back, timeout=30)
        assert [(b.away, b.total) for b in seen.of(Back)] == [
            (9.0, 9.0 * n) for n in range(1, spell + 1)
        ]
    ack = await player.move("+")  # she plays on: her game is not over
    assert ack.status == "playing"
    # a seventh spell of 9 s: 63 s away in all, past the grace, though no spell was near it
    await player.close()
    await bob.wait_until(lambda c: _row(c, who).away_since is not None, timeout=30)
    clock.move(9)
    player = await Client.connect(node.url, token=token)
    await player.join(code)  # back too late (or found out while away): abandoned
    await bob.wait_until(lambda c: _row(c, who).status == "abandoned", timeout=30)
    await player.wait_until(lambda c: c.status == "abandoned", timeout=30)
    with pytest.raises(GameOver):
        await player.move("+")
    assert len(seen.of(Back)) == 6  # the last return was no ``back``: she is out
    await bob.resign()
    await bob.wait_until(lambda c: c.finished, timeout=30)
    assert bob.race is not None and bob.race.results is not None
    assert {r.player: r.status for r in bob.race.results} == {
        who: "abandoned",
        bob.player: "resigned",
    }
    for c in (player, bob):
        await c.close()


async def test_a_player_who_never_acts_is_out_as_idle_people_and_bots_alike(
    redis_server, server_node
) -> None:
    clock = TestClock()
    node = await server_node(redis_server.url, clock=clock, **HOUR_SWEEPS)
    code, clients = await _race(
        node.url,
        [("alice", False), ("bob", False), ("carol", True), ("dave", True)],
        idle_limit=30,
    )
    alice, bob, carol, dave = clients
    idle, active = [alice, carol], [bob, dave]  # a person and a bot of each
    assert bob.race is not None and bob.race.idle_limit == 30
    start = bob.race.starts_at
    assert start is not None
    # everyone knows everyone's deadline from the start: the start plus the idle limit
    for c in clients:
        assert c.race is not None
        assert {i.player: i.idle_at for i in c.race.players} == {
            x.player: start + 30 for x in clients
        }

    async def act(players: list[Client]) -> None:
        """Each of ``players`` deals; their deadline moves on to now plus the limit (their
        own progress says so)."""
        for c in players:
            ack = await c.move("+")
            assert ack.status == "playing"
        for c in players:
            await c.wait_until(lambda c: c.me is not None and c.me.idle_at == clock() + 30)

    clock.move(20)
    await act(active)
    clock.move(5)  # 5 s before the deadline of those who never acted: still in, and told
    for c in idle:
        assert c.me is not None and c.me.status == "playing"
        assert c.me.idle_at == start + 30 and c.me.idle_at - clock() == 5.0
    clock.move(5)  # the deadline: out as idle, on the node's tick
    for c in clients:
        await c.wait_until(
            lambda c: all(_row(c, x.player).status == "idle" for x in idle), timeout=30
        )
    for c in idle:
        assert c.status == "idle" and c.me is not None and c.me.idle_at is None
        with pytest.raises(GameOver):
            await c.move("+")
    for c in active:
        assert _row(alice, c.player).status == "playing"
    # those who act are never idle: past their first deadline, they still play
    await act(active)
    clock.move(25)
    await act(active)
    assert all(_row(alice, c.player).status == "playing" for c in active)
    # the time limit ends the race: the idle rank with the forfeits, below those who played on
    clock.move(600)
    await bob.wait_until(lambda c: c.finished, timeout=30)
    assert bob.race is not None and bob.race.results is not None
    results = {r.player: (r.status, r.rank) for r in bob.race.results}
    assert {p: s for p, (s, _) in results.items()} == {
        alice.player: "idle",
        bob.player: "timeout",
        carol.player: "idle",
        dave.player: "timeout",
    }
    assert max(results[c.player][1] for c in active) < min(results[c.player][1] for c in idle)
    for c in clients:
        await c.close()


def test_a_watch_knows_the_next_idle_deadline_from_the_snapshot_and_the_events() -> None:
    """What a node's tick reads (no I/O): the earliest deadline of the players whose game
    is on, from the snapshot it joined with, then ``started`` and each ``progress``."""
    from spider_server.fanout.watches import RaceWatch

    watch = RaceWatch("ABCDE")
    watch.set_view("countdown", 1000.0, None, {"p1": "waiting", "p2": "waiting"})
    assert watch.idle_due() is None
    watch.note({"type": "started", "ends_at": 1600.0, "idle_at": 1030.0})
    assert watch.idle_due() == 1030.0
    progress = {"player": "p1", "status": "playing", "idle_at": 1050.0}
    watch.note({"type": "progress", "player": progress})
    assert watch.idle_due() == 1030.0  # p2's is still the first
    watch.note({"type": "progress", "player": {"player": "p2", "status": "idle"}})
    assert watch.idle_due() == 1050.0  # p2 is out: p1's is the next
    deadlines = {"p1": 1070.0, "p2": 1030.0}
    watch.set_view("running", 1000.0, 1600.0, {"p1": "playing", "p2": "idle"}, deadlines)
    assert watch.idle_due() == 1070.0
    watch.set_status("p1", "won")
    assert watch.idle_due() is None


def test_a_watch_wakes_the_tick_no_later_than_anything_is_due() -> None:
    """The tick skips a race until its watch's wake time: that time is never later than a
    due start, finish or idle player (checked after every step of random events against
    the rules' own answer), and a move, which only puts its player's deadline later, does
    not bring it forward."""
    import random

    from spider_server.fanout.watches import RaceWatch
    from spider_server.race import due_transition

    watch = RaceWatch("ABCDE")
    assert watch.wake_at(0.0) == float("inf")  # nothing known: nothing due
    watch.set_view("countdown", 1000.0, None, {"p1": "waiting", "p2": "waiting"})
    assert watch.wake_at(900.0) == 1000.0  # the start
    watch.note({"type": "started", "ends_at": 1600.0, "idle_at": 1180.0})
    assert watch.wake_at(1000.0) == 1180.0  # the first idle deadline, before the end
    watch.note(
        {"type": "progress", "player": {"player": "p1", "status": "playing", "idle_at": 1190.0}}
    )
    watch.note(
        {"type": "progress", "player": {"player": "p2", "status": "playing", "idle_at": 1195.0}}
    )
    assert watch.wake_at(1010.0) == 1180.0  # later deadlines: the earlier look stands
    assert watch.wake_at(1180.0) == 1190.0  # then worked out again: p1's
    watch.note({"type": "progress", "player": {"player": "p1", "status": "won"}})
    watch.note({"type": "progress", "player": {"player": "p2", "status": "stuck"}})
    assert watch.wake_at(1020.0) == float("-inf")  # every game over: the finish is due now

    rng = random.Random(7)
    statuses = ["playing", "won", "stuck", "idle", "abandoned", "left"]
    kinds = ["countdown", "started", "progress", "progress", "progress", "joined", "left"]
    for _ in range(300):
        watch = RaceWatch("ABCDE")
        players = [f"p{i}" for i in range(rng.randint(1, 4))]
        now = 1000.0
        watch.set_view("open", None, None, dict.fromkeys(players, "waiting"))
        for _ in range(30):
            now += rng.uniform(0, 4)
            kind = rng.choice([*kinds, "finished", "snapshot"])
            if kind == "countdown":
                watch.note({"type": "countdown", "starts_at": now + rng.uniform(-1, 5)})
            elif kind == "started":
                watch.note(
                    {"type": "started", "ends_at": now + rng.uniform(5, 60), "idle_at": now + 20}
                )
            elif kind in ("progress", "joined"):
                player = rng.choice([*players, f"p{len(players)}"])  # now and then a new one
                info = {"player": player, "status": rng.choice(statuses)}
                if rng.random() < 0.8:
                    info["idle_at"] = now + rng.uniform(-5, 30)
                watch.note({"type": f"player_{kind}" if kind == "joined" else kind, "player": info})
            elif kind == "finished":
                watch.note({"type": "finished"})
            elif kind == "snapshot":  # a node's sweep or a new subscription's snapshot
                state = rng.choice(["open", "countdown", "running", "finished"])
                idle = {pid: now + rng.uniform(-5, 30) for pid in players}
                status = {pid: rng.choice(statuses) for pid in players}
                starts = now + rng.uniform(-1, 5) if state != "open" else None
                ends = now + rng.uniform(0, 60) if state == "running" else None
                watch.set_view(state, starts, ends, status, idle)
            else:
                watch.note({"type": "player_left", "player": rng.choice(players)})
            for look in (now, now + 1.0, now + 10.0, now + 100.0):
                view = watch.view
                assert view is not None
                due = due_transition(view, look) is not None
                idle_due = watch.idle_due()
                if due or (idle_due is not None and look >= idle_due):
                    assert watch.wake_at(look) <= look, (kind, look, view)
