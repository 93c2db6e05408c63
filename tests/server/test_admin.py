"""The operators' report and hand, against a real node with accounts (Valkey, PostgreSQL,
websockets on loopback, the node's clock the test's): a scripted farming run (two accounts
from one address racing each other in rated races again and again) is listed by
``spider-race admin report``, an honest run of the same length (five accounts from five
addresses, four to a race) is not; ``admin void`` undoes a race's rating changes in the
live records and the archive, once; ``admin close`` ends an account's sessions, refuses
its sign-in and takes it off the ladder; every action is in the log."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from collections.abc import Awaitable, Callable
from typing import Any

import msgpack
import pytest
from websockets.asyncio.client import connect

from spider_client import protocol as p
from spider_race.cli import main
from spider_server.race.ratings import display
from spider_server.store import keys, ranked_records

from .account_helpers import (
    ACCOUNT_PASSWORD,
    ACCOUNT_SETTINGS,
    account_token,
    basic,
    call,
    count_rows,
)
from .clocks import TestClock
from .server_helpers import Client, Player

RACES = 7
"""Rated races of each run."""
FARM_ADDRESS = "198.51.100.66"


@pytest.fixture
async def clock() -> TestClock:
    return TestClock()


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any, clock: TestClock) -> Any:
    return await server_node(
        redis_server.url, clock=clock, database_url=pg_database.url, **ACCOUNT_SETTINGS
    )


async def _connect(node: Any, token: str, address: str) -> Client:
    """A connection of the account of ``token`` from ``address`` (by X-Forwarded-For: the
    node trusts the loopback proxy)."""
    ws = await connect(node.url, max_size=None, additional_headers={"X-Forwarded-For": address})
    client = Client(ws)
    await client.send(p.Hello(name=None, token=token, together=True))
    client.welcome = await client.expect("welcome")
    return client


async def _rated_race(clients: list[Client], clock: TestClock) -> str:
    """A rated race of ``clients`` (the first creates it): each makes the same first move
    at the same moment of the node's clock (the same deal: the same progress), then
    resigns; every player ties, so that who wins is not up to the deal. Its code."""
    joined = await clients[0].create(
        variant="spider1", rated=True, public=True, time_limit=600, countdown=3
    )
    code = joined.race.code
    for c in clients[1:]:
        await c.join(code)
    for c in clients:
        await c.ready(code)
    clock.move(3)  # the countdown of a rated race
    views = [await c.expect("ack", lambda m: m.seq == 0) for c in clients]
    players = [Player(c, code, v.view) for c, v in zip(clients, views, strict=True)]
    moves = _moves(players[0].view)
    first = min([m for m in moves if m != "+"] or moves)  # a deal offers a move, or "+"
    for player in players:
        await player.step(first)
    for player in players:
        await player.resign()
    for c in clients:
        await c.expect("finished", lambda m: m.race == code)
    return code


def _moves(view: str) -> list[str]:
    from spider_engine import Board

    return list(Board.from_text(view).legal_moves.texts())


async def _until(check: Callable[[], Awaitable[bool]], what: str) -> None:
    """Wait (a bounded number of looks) until ``check`` holds."""
    for _ in range(400):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"never: {what}")


async def _archived(node: Any, clock: TestClock, races: int) -> None:
    """Wait until ``races`` rated races are archived with their players' addresses (the
    archiver drops a race's hash of addresses once they are in the database). The clock
    moves on a second a look: a race the archiver found with its results not written yet
    is looked at again two seconds later by the node's clock."""
    archive = node.node.archiver.archive
    redis = node.node.store.redis

    async def done() -> bool:
        async with archive.connection() as conn:
            n = await conn.fetchval("SELECT count(*) FROM races WHERE rated")
        if int(n) >= races and await redis.keys("{race:*}:addr") == []:
            return True
        clock.move(1)
        return False

    await _until(done, f"{races} rated races archived")


async def _admin(*args: str) -> tuple[int, str, str]:
    """``spider-race admin ARGS`` (in a thread: it runs its own event loop); (status,
    standard output, standard error)."""
    out, err = io.StringIO(), io.StringIO()

    def run() -> int:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            return main(["admin", *args])

    status = await asyncio.to_thread(run)
    return status, out.getvalue(), err.getvalue()


async def _record(node: Any, player: str) -> tuple[int, dict[str, Any]]:
    redis = node.node.store.redis
    version, data = await redis.hmget(keys.record(player), "v", "d")
    return int(version), msgpack.unpackb(data, raw=False)


async def _ranked(node: Any, player: str) -> None:
    """Make ``player``'s record in spider1 one of a player with many rated races (sigma 3:
    not provisional), standing on the ladder, as the node writes it."""
    redis = node.node.store.redis
    version, data = await _record(node, player)
    vr = data["variants"]["spider1"]
    vr["sigma"], vr["rated"] = 3.0, 30
    await redis.hset(keys.record(player), mapping={"v": str(version + 1), "d": msgpack.packb(data)})
    await redis.zadd(keys.ladder("humans", "spider1"), {player: display(vr["mu"], 3.0)})


async def _farm_and_honest(node: Any, clock: TestClock) -> tuple[list[Client], list[Client]]:
    farmers = [
        await _connect(node, await account_token(node, name, address=FARM_ADDRESS), FARM_ADDRESS)
        for name in ("Farmer", "Alt")
    ]
    honest = []
    for i in range(5):
        address = f"203.0.113.{10 + i}"
        token = await account_token(node, f"Honest{i}", address=address)
        honest.append(await _connect(node, token, address))
    for _ in range(RACES):
        await _rated_race(farmers, clock)
    for k in range(RACES):  # four to a race, one sits out in turn: 5 or 6 races each
        await _rated_race([c for i, c in enumerate(honest) if i != k % 5], clock)
    await _archived(node, clock, 2 * RACES)
    return farmers, honest


async def test_the_report_lists_the_farmers_and_none_of_an_honest_run(
    node: Any, pg_database: Any, clock: TestClock
) -> None:
    farmers, honest = await _farm_and_honest(node, clock)
    try:
        status, out, err = await _admin("report", "--database", pg_database.url, "--json")
        assert status == 0, err
        report = json.loads(out)
        listed = {(f["name"], f["rule"]) for f in report["findings"]}
        assert listed == {
            ("Farmer", "same_opponents"),
            ("Farmer", "shared_address"),
            ("Alt", "same_opponents"),
            ("Alt", "shared_address"),
        }, report
        farmer = next(f for f in report["findings"] if f["name"] == "Farmer")
        assert farmer["races"] == RACES and farmer["player"] == farmers[0].player
        # a low threshold lists the ratings that moved (everyone's moved a little)
        status, out, _ = await _admin(
            "report", "--database", pg_database.url, "--json", "--threshold", "1"
        )
        moved = {f["name"] for f in json.loads(out)["findings"] if f["rule"] == "rating_moved"}
        assert moved == {"Farmer", "Alt", *(f"Honest{i}" for i in range(5))}
        # the table says the same
        status, out, _ = await _admin("report", "--database", pg_database.url)
        assert status == 0 and "Farmer" in out and "same_opponents" in out
        assert "Honest" not in out
    finally:
        for c in farmers + honest:
            await c.close()


async def test_void_undoes_a_race_once_and_is_logged(
    node: Any, pg_database: Any, clock: TestClock
) -> None:
    a = await _connect(node, await account_token(node, "Ada"), "203.0.113.1")
    b = await _connect(node, await account_token(node, "Bea", address="203.0.113.2"), "203.0.113.2")
    try:
        codes = [await _rated_race([a, b], clock) for _ in range(3)]
        await _archived(node, clock, 3)
        archive = node.node.archiver.archive
        async with archive.connection() as conn:
            rows = await conn.fetch(
                "SELECT c.player, c.mu_before, c.mu_after, c.sigma_before, c.sigma_after "
                "FROM rating_changes c JOIN races r ON r.id = c.race_id WHERE r.code = $1",
                codes[1],
            )
        assert {r["player"] for r in rows} == {a.player, b.player}
        await _ranked(node, a.player)  # as a player with many races behind them
        version, before = await _record(node, a.player)
        status, out, err = await _admin(
            "void", codes[1], "--reason", "farmed", "--by", "ops", "--database", pg_database.url
        )
        assert status == 0, err
        assert f"race {codes[1]} voided" in out

        async def undone() -> bool:
            async with archive.connection() as conn:
                done = await conn.fetchval("SELECT done_at FROM admin_actions")
            return done is not None

        await _until(undone, "the void carried into Redis")
        _, after = await _record(node, a.player)
        change = next(r for r in rows if r["player"] == a.player)
        was, now = before["variants"]["spider1"], after["variants"]["spider1"]
        assert now["mu"] == pytest.approx(was["mu"] - (change["mu_after"] - change["mu_before"]))
        assert now["sigma"] == pytest.approx(
            was["sigma"] - (change["sigma_after"] - change["sigma_before"])
        )
        assert now["rated"] == was["rated"] - 1
        assert now["sigma"] < 5  # still ranked: the ladder follows
        ladder = keys.ladder("humans", "spider1")
        score = await node.node.store.redis.zscore(ladder, a.player)
        assert score == display(now["mu"], now["sigma"]) != display(was["mu"], was["sigma"])
        # Bea's rating is provisional after it: on no ladder
        assert await node.node.store.redis.zscore(ladder, b.player) is None
        async with archive.connection() as conn:
            voided = await conn.fetch(
                "SELECT c.voided, r.code FROM rating_changes c JOIN races r ON r.id = c.race_id"
            )
            log = await conn.fetchrow("SELECT * FROM admin_actions")
            kept = await conn.fetchval(
                "SELECT version FROM player_records WHERE player = $1", a.player
            )
        assert {(v["code"], v["voided"]) for v in voided} == {
            (codes[0], False), (codes[1], True), (codes[2], False)
        }  # fmt: skip
        assert (log["by"], log["action"], log["target"], log["reason"]) == (
            "ops", "void", codes[1], "farmed"
        )  # fmt: skip
        assert log["done_at"] is not None and log["at"] > 0
        assert kept == version + 1  # the archive's record follows
        # a second void is refused, and changes nothing
        status, _, err = await _admin(
            "void", codes[1], "--reason", "again", "--database", pg_database.url
        )
        assert status == 1 and "voided before" in err
        assert (await _record(node, a.player))[0] == version + 1
        status, out, _ = await _admin("log", "--database", pg_database.url)
        assert status == 0 and f"void {codes[1]}" in out and "farmed" in out and "done" in out
        # bad input: a clear error, nothing done
        status, _, err = await _admin("void", "K7QX2", "--reason", " ", "--database", "x")
        assert status == 2 and "--reason" in err
        status, _, err = await _admin("void", "QQQQQ", "--reason", "x", "--database",
                                      pg_database.url)  # fmt: skip
        assert status == 1 and "no finished race QQQQQ" in err
    finally:
        await a.close()
        await b.close()


async def test_close_ends_sessions_refuses_sign_in_and_leaves_the_ladder(
    node: Any, pg_database: Any, clock: TestClock
) -> None:
    a = await _connect(node, await account_token(node, "Ada"), "203.0.113.1")
    token = await account_token(node, "Bea", address="203.0.113.2")
    b = await _connect(node, token, "203.0.113.2")
    try:
        await _rated_race([a, b], clock)
        await _archived(node, clock, 1)
        redis = node.node.store.redis
        ladder = keys.ladder("humans", "spider1")
        for player in (a.player, b.player):  # as players with many races behind them
            await _ranked(node, player)
        assert (await count_rows(node))[1] == 2
        status, out, err = await _admin(
            "close", "bea", "--reason", "farming", "--by", "ops", "--database", pg_database.url
        )
        assert status == 0, err
        assert "1 session(s) ended" in out
        assert (await count_rows(node))[1] == 1  # Ada's only

        async def off() -> bool:
            return await redis.zscore(ladder, b.player) is None

        await _until(off, "Bea off the ladder")
        assert await redis.zscore(ladder, a.player) is not None
        refused = await call(node, "POST", "/account/signin", basic("Bea", ACCOUNT_PASSWORD))
        assert refused.status == 403 and refused.error == "account_closed", refused
        wrong = await call(node, "POST", "/account/signin", basic("Bea", "not the password"))
        assert wrong.status == 401  # nothing said without the password
        me = await call(node, "GET", "/account/me", {"Authorization": f"Bearer {token}"})
        assert me.status == 401
        archive = node.node.archiver.archive
        async with archive.connection() as conn:
            log = await conn.fetchrow("SELECT * FROM admin_actions")
            results = await conn.fetchval(
                "SELECT count(*) FROM race_players WHERE player = $1", b.player
            )
        assert (log["action"], log["target"], log["by"], log["reason"]) == (
            "close", "Bea", "ops", "farming"
        )  # fmt: skip
        assert log["done_at"] is not None
        assert results == 1  # kept
        # the ratings cache, read again from the archive, leaves her off the ladders
        _, ranked = await ranked_records(archive)([a.player, b.player])
        assert ranked == {a.player}
        status, _, err = await _admin("close", "Bea", "--reason", "x", "--database",
                                      pg_database.url)  # fmt: skip
        assert status == 1 and "closed already" in err
        status, _, err = await _admin("close", "Nobody", "--reason", "x", "--database",
                                      pg_database.url)  # fmt: skip
        assert status == 1 and "no account named Nobody" in err
        # reopened: she signs in again and is back on the ladder; the log has it all
        status, out, err = await _admin(
            "reopen", "Bea", "--reason", "appeal upheld", "--by", "ops", "--database",
            pg_database.url,
        )  # fmt: skip
        assert status == 0 and "account Bea reopened" in out, err

        async def back() -> bool:
            return await redis.zscore(ladder, b.player) is not None

        await _until(back, "Bea back on the ladder")
        again = await call(node, "POST", "/account/signin", basic("Bea", ACCOUNT_PASSWORD))
        assert again.status == 200, again
        status, _, err = await _admin("reopen", "Bea", "--reason", "x", "--database",
                                      pg_database.url)  # fmt: skip
        assert status == 1 and "is not closed" in err
        async with archive.connection() as conn:
            actions = await conn.fetch("SELECT action, reason FROM admin_actions ORDER BY id")
        assert [(r["action"], r["reason"]) for r in actions] == [
            ("close", "farming"), ("reopen", "appeal upheld")
        ]  # fmt: skip
    finally:
        await a.close()
        await b.close()


async def test_addresses_of_rated_play_are_kept_for_the_days_the_setting_says(
    node: Any, clock: TestClock
) -> None:
    a = await _connect(node, await account_token(node, "Ada"), "203.0.113.1")
    b = await _connect(node, await account_token(node, "Bea", address="2001:db8:1:2::9"),
                       "2001:db8:1:2::9")  # fmt: skip
    try:
        await _rated_race([a, b], clock)
        casual = await a.create(variant="spider1", countdown=0)  # casual: nothing noted
        await b.join(casual.race.code)
        await _archived(node, clock, 1)
        archive = node.node.archiver.archive
        async with archive.connection() as conn:
            rows = await conn.fetch("SELECT player, address, at FROM rated_addresses")
        assert {(r["player"], r["address"]) for r in rows} == {
            (a.player, "203.0.113.1"),
            (b.player, "2001:db8:1:2::/64"),
        }
        redis = node.node.store.redis
        assert await redis.keys("{race:*}:addr") == []  # the race's hash dropped once kept
        clock.move(29 * 24 * 3600 + 2 * 3600)  # within the 30 days: kept
        node.node.rebuild.admin.pruned_at = None  # the next step deletes what is due
        await _until(lambda: _pruned(node), "a step deleted what was due")
        async with archive.connection() as conn:
            assert await conn.fetchval("SELECT count(*) FROM rated_addresses") == 2
        clock.move(2 * 24 * 3600)  # past them: deleted
        await _until(lambda: _count_is(node, 0), "the addresses past 30 days deleted")
    finally:
        await a.close()
        await b.close()


async def _pruned(node: Any) -> bool:
    return node.node.rebuild.admin.pruned_at is not None


async def _count_is(node: Any, n: int) -> bool:
    async with node.node.archiver.archive.connection() as conn:
        return int(await conn.fetchval("SELECT count(*) FROM rated_addresses")) == n


def test_the_embedded_database_of_a_running_server_is_found_in_its_data_folder(
    tmp_path: Any,
) -> None:
    from spider_race.admin_command import _embedded_url

    folder = tmp_path / "data"
    assert _embedded_url(folder) == ""  # no server runs there
    (folder / "postgres" / "pgdata").mkdir(parents=True)
    (folder / "postgres" / "database-password").write_text("s3cret\n")
    (folder / "postgres" / "pgdata" / "postmaster.pid").write_text(
        "4242\n/x/pgdata\n1700000000\n54321\n/x\n127.0.0.1\n"
    )
    assert _embedded_url(folder) == "postgresql://spider:s3cret@127.0.0.1:54321/spider"


def test_the_reports_rules_at_their_bounds() -> None:
    from spider_server.accounts.report import Rated, findings

    accounts = {p: (p.upper(), False) for p in ("a", "b", "c", "d", "e")}
    # a against b in 3 of 5 races (more than half), against c, d in the others: listed;
    # b (3 races) is under the 5 races the rule needs
    seats = [(1, "a"), (1, "b"), (2, "a"), (2, "b"), (3, "a"), (3, "b"), (4, "a"), (4, "c"),
             (5, "a"), (5, "d")]  # fmt: skip
    found = findings(seats, [], {}, accounts, threshold=300)
    assert [(f.name, f.rule, f.races) for f in found] == [("A", "same_opponents", 5)]
    # exactly half is not more than half: b twice, then c, d, e, f once each (3 of 6)
    seats = [(i, "a") for i in range(1, 7)] + [(1, "b"), (2, "b"), (3, "c"), (4, "d"),
                                               (5, "e"), (6, "f")]  # fmt: skip
    assert findings(seats, [], {}, accounts, threshold=300) == []
    # a race with three opponents is never one against the few
    seats = [(i, p) for i in range(1, 7) for p in ("a", "b", "c", "d")]
    assert findings(seats, [], {}, accounts, threshold=300) == []
    # the same address as an opponent in 3 of 5 races; d not an account: left out
    seats = [(i, p) for i in range(1, 6) for p in ("a", "b", "c", "x")]
    where = {(i, "a"): "198.51.100.1" for i in range(1, 6)}
    where.update({(i, "x"): "198.51.100.1" for i in range(1, 4)})
    found = findings(seats, [], where, accounts, threshold=300)
    assert [(f.name, f.rule) for f in found] == [("A", "shared_address")]
    # ratings: +301 within a day is listed, +300 is not, and nor is +400 over two days
    day = 24 * 3600.0
    moved = [Rated("a", 1, 0.0, 1500, 1650), Rated("a", 2, day, 1650, 1801)]
    found = findings([], moved, {}, accounts, threshold=300)
    assert [(f.name, f.rule, f.detail) for f in found] == [
        ("A", "rating_moved", "+301 within a day")
    ]
    assert findings([], moved, {}, accounts, threshold=301) == []
    apart = [Rated("a", 1, 0.0, 1500, 1700), Rated("a", 2, day + 1, 1700, 1900)]
    assert findings([], apart, {}, accounts, threshold=300) == []
    down = [Rated("b", 1, 0.0, 1500, 1100)]
    assert [f.detail for f in findings([], down, {}, accounts, threshold=300)] == [
        "-400 within a day"
    ]


async def test_a_quick_matchs_players_addresses_are_kept(
    pg_database: Any, server_node: Any, redis_server: Any
) -> None:
    from spider_client import Client as Library

    quick = await server_node(
        redis_server.url,
        database_url=pg_database.url,
        **ACCOUNT_SETTINGS,
        match_wait=3.0,
        match_gather=0.5,
        match_turn=0.05,
        match_countdown=1,
    )
    tokens = [await account_token(quick, n, address=f"198.51.100.{i}") for i, n in
              enumerate(["Ada", "Bea"], 1)]  # fmt: skip
    async with (
        await Library.connect(quick.url, token=tokens[0]) as ada,
        await Library.connect(quick.url, token=tokens[1]) as bea,
    ):
        codes = await asyncio.wait_for(
            asyncio.gather(ada.quick_match("spider1"), bea.quick_match("spider1")), 30
        )
        assert codes[0] == codes[1] and ada.race is not None and ada.race.rated
        for c in (ada, bea):
            await c.wait_until(lambda c: c.view is not None, timeout=20)
        for c in (ada, bea):
            await c.resign()
        archive = quick.node.archiver.archive

        async def kept() -> bool:
            async with archive.connection() as conn:
                rows = await conn.fetch("SELECT player, address FROM rated_addresses")
            return {(r["player"], r["address"]) for r in rows} == {
                (ada.player, "127.0.0.1"),  # the connections' own address (no proxy named)
                (bea.player, "127.0.0.1"),
            }

        await _until(kept, "the quick match's addresses kept")
