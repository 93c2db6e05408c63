"""Rated play that cannot be farmed (docs/spec/rules.md, *Rated races*).

On a real node with accounts (Valkey, PostgreSQL, websockets; the node's clock moved by
the test): two accounts racing each other through the rated pool are rated in their first
``SPIDER_RACE_RATED_PAIR_PER_DAY`` races of the window, and not in the next (neither
rating moves) until the window has passed. And in the rules alone: among more players,
a pair over its limit is rated against the others only."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from spider_client import Client
from spider_server.race.ratings import PairLimit, Placing, Record, VariantRecord, settle

from .account_helpers import ACCOUNT_SETTINGS, account_token
from .clocks import TestClock

MATCH = {"match_gather": 0.5, "match_turn": 0.05, "match_max_players": 2, "match_countdown": 3}
DAY = 86400.0


async def _rated_race(clock: TestClock, a: Client, b: Client) -> list[Any]:
    """A quick match of ``a`` and ``b``, each dealing once (a move: the race is no abort)
    and resigning at the same moment of the node's clock (a tie: equal ratings, so the
    next match pairs them again at once); the race's rating changes."""
    codes = await asyncio.wait_for(
        asyncio.gather(a.quick_match("spider1"), b.quick_match("spider1")), 30
    )
    assert codes[0] == codes[1] and a.race is not None and a.race.rated
    clock.move(MATCH["match_countdown"] + 1)
    for c in (a, b):
        await c.wait_until(lambda c: c.view is not None, timeout=20)
        await c.move("+")
    for c in (a, b):
        await c.resign()
    for c in (a, b):
        await c.wait_until(lambda c: c.finished, timeout=20)
    reply = await a.rating_changes(codes[0], timeout=20)
    assert reply.applied and reply.rated
    return list(reply.changes)


async def test_the_same_pair_is_rated_three_times_a_day_then_not(
    redis_server: Any, server_node: Any, pg_database: Any
) -> None:
    clock = TestClock()
    node = await server_node(
        redis_server.url, database_url=pg_database.url, clock=clock, **ACCOUNT_SETTINGS, **MATCH
    )
    tokens = [await account_token(node, n, address=f"198.51.100.{i}") for i, n in
              enumerate(["Farmer", "Alt"], 1)]  # fmt: skip
    async with (
        await Client.connect(node.url, token=tokens[0]) as a,
        await Client.connect(node.url, token=tokens[1]) as b,
    ):
        for n in range(3):  # rated: the pair's first three of the day
            changes = await _rated_race(clock, a, b)
            assert {c.player for c in changes} == {a.player, b.player}, n
            clock.move(60)
        before = {p: r.variants["spider1"] for p, r in
                  (await node.node.store.ratings.load_records([a.player, b.player])).items()}  # fmt: skip
        assert {v.rated for v in before.values()} == {3}
        assert await _rated_race(clock, a, b) == []  # the fourth: neither rating moves
        after = await node.node.store.ratings.load_records([a.player, b.player])
        for pid, rec in after.items():
            vr = rec.variants["spider1"]
            assert (vr.mu, vr.sigma, vr.rated) == (before[pid].mu, before[pid].sigma, 3)
            assert vr.played == 4
        clock.move(DAY)  # the window passed: rated again
        changes = await _rated_race(clock, a, b)
        assert {c.player for c in changes} == {a.player, b.player}


async def test_the_attacks_against_a_real_node_are_refused_or_unrated(
    redis_server: Any, server_node: Any, pg_database: Any
) -> None:
    """The farming loop through private races is refused (a private race is casual);
    rated with live boards, hints, a chosen grace or a 1-second limit is invalid, with
    the reason; a quick match nobody played, or one where one player moved against
    none, moves no rating (an abort)."""
    from spider_client import BadRequest

    clock = TestClock()
    node = await server_node(
        redis_server.url, database_url=pg_database.url, clock=clock, **ACCOUNT_SETTINGS, **MATCH
    )
    tokens = [await account_token(node, n, address=f"198.51.100.{i}") for i, n in
              enumerate(["Farmer", "Alt"], 1)]  # fmt: skip
    async with (
        await Client.connect(node.url, token=tokens[0]) as a,
        await Client.connect(node.url, token=tokens[1]) as b,
    ):
        terms = {"variant": "spider1", "rated": True, "public": True, "time_limit": 600,
                 "countdown": 3}  # fmt: skip
        for asked, said in [
            ({"public": False, "countdown": 0, "time_limit": 1}, "a private race is casual"),
            ({"live_boards": True}, "live boards"),
            ({"hints": True}, "no hints"),
            ({"away_grace": 3600}, "away_grace"),
            ({"time_limit": 1}, "one of 5, 10, 15 minutes"),
        ]:
            with pytest.raises(BadRequest, match=said):
                await a.create_race(**{**terms, **asked})
        assert await a.my_races() == []  # nothing made

        for moves in ([], [a]):  # nobody moved; one move against none
            codes = await asyncio.wait_for(
                asyncio.gather(a.quick_match("spider1"), b.quick_match("spider1")), 30
            )
            clock.move(MATCH["match_countdown"] + 1)
            for c in (a, b):
                await c.wait_until(lambda c: c.view is not None, timeout=20)
            for c in moves:
                await c.move("+")
            for c in (a, b):
                await c.resign()
            for c in (a, b):
                await c.wait_until(lambda c: c.finished, timeout=20)
            reply = await a.rating_changes(codes[0], timeout=20)
            assert reply.applied and reply.rated and reply.changes == [], moves
        records = await node.node.store.ratings.load_records([a.player, b.player])
        assert {(r.variants["spider1"].rated, r.variants["spider1"].played)
                for r in records.values()} == {(0, 2)}  # fmt: skip


def _placings(*players: str) -> list[Placing]:
    return [
        Placing(player=p, name=p, rank=i + 1, status="won", time=10.0 + i, moves=20)
        for i, p in enumerate(players)
    ]


def test_a_pair_over_its_limit_is_rated_against_the_others_only() -> None:
    """A and B raced three rated races together within the day: in a race with C, A is
    rated on the ranking of A and C, B on B and C, C on all three; a pair alone is
    unrated; past the window they count no more; the race adds each pair once more."""
    now = 10 * DAY
    raced = [(now - 3600.0 * k, q) for k in (1, 2, 3) for q in ("B",)]

    def records(window_ago: float = 0.0) -> dict[str, Record]:
        a = [(t - window_ago, q) for t, q in raced]
        b = [(t - window_ago, "A") for t, _ in raced]
        return {
            "A": Record(player="A", variants={"spider1": VariantRecord(opponents=a)}),
            "B": Record(player="B", variants={"spider1": VariantRecord(opponents=b)}),
        }

    three = settle(code="X", variant="spider1", rated=True, placings=_placings("A", "B", "C"),
                   records=records(), now=now)  # fmt: skip
    alone = {
        p: settle(
            code="Y", variant="spider1", rated=True, placings=_placings(*pair), records={}, now=now
        ).records  # fmt: skip
        for p, pair in (("A", ("A", "C")), ("B", ("B", "C")))
    }
    got = {rec.player: rec.variants["spider1"] for rec in three.records}
    for p in ("A", "B"):  # as if the other were not in the race
        want = next(r for r in alone[p] if r.player == p).variants["spider1"]
        assert (got[p].mu, got[p].sigma) == (want.mu, want.sigma), p
    full = settle(code="Z", variant="spider1", rated=True, placings=_placings("A", "B", "C"),
                  records={}, now=now)  # fmt: skip
    want_c = next(r for r in full.records if r.player == "C").variants["spider1"]
    assert (got["C"].mu, got["C"].sigma) == (want_c.mu, want_c.sigma)  # against both
    assert got["A"].raced("B", now - DAY) == 4 and got["C"].raced("A", now - DAY) == 1

    pair = settle(code="W", variant="spider1", rated=True, placings=_placings("A", "B"),
                  records=records(), now=now)  # fmt: skip
    assert pair.changes == [] and not any(line.rated for line in pair.lines.values())
    old = settle(code="V", variant="spider1", rated=True, placings=_placings("A", "B"),
                 records=records(window_ago=DAY), now=now)  # fmt: skip
    assert {c.player for c in old.changes} == {"A", "B"}  # a day on: rated again
    kept = next(r for r in old.records if r.player == "A").variants["spider1"]
    assert kept.opponents == [(now, "B")]  # what fell out of the window is dropped


@pytest.mark.parametrize("races", [1, 5])
def test_the_pair_limit_is_a_setting(races: int) -> None:
    opponents = [(100.0 + k, "B") for k in range(races)]
    records = {"A": Record(player="A", variants={"spider1": VariantRecord(opponents=opponents)})}
    out = settle(code="S", variant="spider1", rated=True, placings=_placings("A", "B"),
                 records=records, now=200.0, pairs=PairLimit(races=races + 1, window=1000.0))  # fmt: skip
    assert {c.player for c in out.changes} == {"A", "B"}
    out = settle(code="T", variant="spider1", rated=True, placings=_placings("A", "B"),
                 records=records, now=200.0, pairs=PairLimit(races=races, window=1000.0))  # fmt: skip
    assert out.changes == []
