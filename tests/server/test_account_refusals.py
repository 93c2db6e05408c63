"""What the accounts' routes refuse, on a real node, Valkey and PostgreSQL: a failed
sign-in that says nothing of the name, sign-ins backing off per account and address, sign-ups
per address, and bad input to every route (a clear error, nothing changed). Time is the
node's clock, moved by the test."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .account_helpers import ACCOUNT_SETTINGS, b64, basic, bearer, call, count_rows
from .clocks import TestClock

PASSWORD = "correct horse battery staple"


@pytest.fixture
def clock() -> TestClock:
    return TestClock()


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any, clock: TestClock) -> Any:
    return await server_node(
        redis_server.url, database_url=pg_database.url, clock=clock, address_signups=2,
        **ACCOUNT_SETTINGS,
    )  # fmt: skip


async def test_a_failed_sign_in_says_nothing_of_the_name(node: Any) -> None:
    await call(node, "POST", "/account/signup", basic("Ada", PASSWORD))
    wrong = await call(node, "POST", "/account/signin", basic("Ada", "not her password"))
    missing = await call(node, "POST", "/account/signin", basic("Nobody", "not her password"))
    assert wrong.status == missing.status == 401
    assert (
        wrong.body
        == missing.body
        == {
            "error": "bad_credentials",
            "message": "the name or the password is wrong",
        }
    )
    assert await count_rows(node) == (1, 1)


async def test_sign_ins_back_off_per_account_and_address(node: Any, clock: TestClock) -> None:
    await call(node, "POST", "/account/signup", basic("Ada", PASSWORD))
    attacker = "192.0.2.66"
    for _ in range(5):
        failed = await call(
            node, "POST", "/account/signin", basic("Ada", "guess"), address=attacker
        )
        assert failed.status == 401
    held = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD), address=attacker)
    assert held.status == 429 and held.error == "rate_limited"
    assert held.headers["Retry-After"] == "1"
    # the owner, from another address, is not slowed
    owner = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD), address="192.0.2.7")
    assert owner.status == 200
    # nor is another account from the attacker's address
    await call(node, "POST", "/account/signup", basic("Grace", PASSWORD), address="192.0.2.8")
    other = await call(node, "POST", "/account/signin", basic("Grace", PASSWORD), address=attacker)
    assert other.status == 200
    clock.move(1)
    failed = await call(node, "POST", "/account/signin", basic("Ada", "guess"), address=attacker)
    assert failed.status == 401  # taken again after the wait; the next wait doubles
    held = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD), address=attacker)
    assert held.status == 429 and held.headers["Retry-After"] == "2"
    clock.move(2)
    ok = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD), address=attacker)
    assert ok.status == 200
    # a success forgets the failures: the next failure is the first again
    failed = await call(node, "POST", "/account/signin", basic("Ada", "guess"), address=attacker)
    assert failed.status == 401
    ok = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD), address=attacker)
    assert ok.status == 200


async def test_an_ipv6_address_counts_by_its_64(node: Any) -> None:
    await call(node, "POST", "/account/signup", basic("Ada", PASSWORD))
    for i in range(5):
        await call(
            node, "POST", "/account/signin", basic("Ada", "guess"), address=f"2001:db8:1:2::{i + 1}"
        )
    held = await call(
        node, "POST", "/account/signin", basic("Ada", PASSWORD), address="2001:db8:1:2::99"
    )
    assert held.status == 429
    other = await call(
        node, "POST", "/account/signin", basic("Ada", PASSWORD), address="2001:db8:1:3::1"
    )
    assert other.status == 200


async def test_sign_ups_per_address_an_hour(node: Any, clock: TestClock) -> None:
    for name in ("One", "Two"):
        assert (await call(node, "POST", "/account/signup", basic(name, PASSWORD))).status == 201
    refused = await call(node, "POST", "/account/signup", basic("Three", PASSWORD))
    assert refused.status == 429 and refused.error == "rate_limited"
    assert 1 <= int(refused.headers["Retry-After"]) <= 3600
    assert await count_rows(node) == (2, 2)
    elsewhere = await call(
        node, "POST", "/account/signup", basic("Three", PASSWORD), address="192.0.2.1"
    )
    assert elsewhere.status == 201
    clock.move(3600)
    later = await call(node, "POST", "/account/signup", basic("Four", PASSWORD))
    assert later.status == 201
    assert await count_rows(node) == (4, 4)


async def test_bad_input_to_every_route_changes_nothing(node: Any) -> None:
    made = await call(node, "POST", "/account/signup", basic("Ada", PASSWORD))
    token = made.body["token"]
    assert await count_rows(node) == (1, 1)
    cases: list[tuple[str, str, dict[str, str], int, str]] = [
        ("POST", "/account/signup", {}, 400, "bad_request"),
        ("POST", "/account/signup", {"Authorization": "Basic !!notbase64"}, 400, "bad_request"),
        ("POST", "/account/signup", {"Authorization": "Basic " + b64("nocolon")}, 400, "bad_request"),
        ("POST", "/account/signup", {"Authorization": "Basic " + b64(":pw-without-name")}, 400, "bad_request"),
        ("POST", "/account/signup", bearer(token), 400, "bad_request"),
        ("POST", "/account/signup", {"Authorization": "Basic " + "A" * 7000}, 400, "bad_request"),
        ("POST", "/account/signup", basic("Eve", "password1"), 400, "weak_password"),
        ("POST", "/account/signup", basic("Eve", "short"), 400, "weak_password"),
        ("POST", "/account/signup", basic("Eve", "x" * 1025), 400, "weak_password"),
        ("POST", "/account/signup", basic("Lovelace1", "LOVELACE1"), 400, "weak_password"),
        ("POST", "/account/signup", basic("E\u200bve", PASSWORD), 400, "name_refused"),
        ("POST", "/account/signup", basic("ADA", PASSWORD), 409, "name_taken"),
        ("POST", "/account/signup", {**basic("Eve", PASSWORD), "Origin": "https://evil.example"}, 403, "forbidden"),
        ("GET", "/account/signup", basic("Eve", PASSWORD), 405, "method"),
        ("POST", "/account/me", bearer(token), 405, "method"),
        ("GET", "/account/nowhere", {}, 404, "not_found"),
        ("GET", "/account/me", {}, 401, "unauthorized"),
        ("GET", "/account/me", bearer("s1.not-a-session"), 401, "unauthorized"),
        ("GET", "/account/me", bearer("g1.v1.abc.def"), 401, "unauthorized"),
        ("GET", "/account/me", {"Authorization": "Token abc"}, 400, "bad_request"),
        ("GET", "/account/sessions", {"Cookie": "spider_session=s1.unknown"}, 401, "unauthorized"),
        ("POST", "/account/signin", {}, 400, "bad_request"),
        ("POST", "/account/password", basic("Ada", PASSWORD), 400, "bad_request"),
        ("POST", "/account/password", {**basic("Ada", PASSWORD), "X-New-Password": "%%%"}, 400, "bad_request"),
        ("POST", "/account/password", {**basic("Ada", PASSWORD), "X-New-Password": b64("qwertyuiop")}, 400, "weak_password"),
        ("POST", "/account/password", {**basic("Ada", "wrong one"), "X-New-Password": b64("a good new one")}, 401, "bad_credentials"),
        ("POST", "/account/signout", {}, 401, "unauthorized"),
        ("POST", "/account/signout-everywhere", bearer("s1." + "x" * 200), 401, "unauthorized"),
    ]  # fmt: skip
    for method, path, headers, status, code in cases:
        answer = await call(node, method, path, headers, address="192.0.2.200")
        assert (answer.status, answer.error) == (status, code), (method, path, headers, answer)
        assert answer.body["message"]
    assert await count_rows(node) == (1, 1)
    refused = await call(node, "POST", "/account/signup", basic("E\u200bve", PASSWORD))
    assert "invisible" in refused.body["message"] or "U+200B" in refused.body["message"]
    weak = await call(node, "POST", "/account/signup", basic("Eve", "password1"))
    assert "common" in weak.body["message"]
    assert (await call(node, "GET", "/account/me", bearer(token))).status == 200


def test_passwords_taken_and_refused() -> None:
    from spider_server.accounts.passwords import PasswordRefused, check_password, common_passwords

    assert len(common_passwords()) >= 9000 and "password" in common_passwords()
    assert check_password("ｃｏｒｒｅｃｔ horse") == "correct horse"  # NFKC
    assert check_password("x" * 1024) == "x" * 1024
    for raw, reason in [
        ("seven77", "at least 8"),
        ("x" * 1025, "at most 1024"),
        ("PassWord1", "common"),
        ("BABBAGE-1", "name"),
    ]:
        with pytest.raises(PasswordRefused) as refused:
            check_password(raw, name="babbage-1")
        assert reason in refused.value.reason


async def test_hashing_is_bounded_and_rehashes_on_new_parameters() -> None:
    from spider_server.accounts.passwords import Busy, Hasher

    old = Hasher(time_cost=1, memory=1024, parallelism=1, concurrency=1)
    new = Hasher(time_cost=2, memory=1024, parallelism=1, concurrency=1)
    try:
        hashed = await old.hash("a long password")
        assert hashed.startswith("$argon2id$")
        assert await old.verify(hashed, "a long password") == (True, None)
        assert await old.verify(hashed, "another one") == (False, None)
        assert await old.verify(None, "a long password") == (False, None)
        ok, rehashed = await new.verify(hashed, "a long password")
        assert ok and rehashed is not None and "t=2" in rehashed
        running = asyncio.create_task(old.hash("one at a time"))
        await asyncio.sleep(0)  # it takes the one slot
        with pytest.raises(Busy):
            await old.hash("a second at once")
        await running
    finally:
        old.close()
        new.close()


def test_tokens_told_apart_by_their_prefix() -> None:
    from spider_server.tokens import kind

    assert kind("s1.abc") == "session"
    assert kind("a1.abc") == "api"
    assert kind("g1.v1.abc.def") == "guest"
    assert kind("v1.abc.def") == "guest"


async def test_a_hundred_sign_ups_from_one_address_across_two_nodes(
    pg_database: Any, server_node: Any, redis_server: Any, clock: TestClock
) -> None:
    """The issue's attack: 100 sign-ups from one address, alternating between two nodes of
    one deployment (one Valkey, one database): the hour's limit holds whichever node each
    reaches, every refusal a clear 429 with its wait, and no refused one leaves a row."""
    nodes = [
        await server_node(
            redis_server.url,
            database_url=pg_database.url,
            clock=clock,
            address_signups=5,
            **ACCOUNT_SETTINGS,
        )  # fmt: skip
        for _ in range(2)
    ]
    answers = []
    for i in range(100):
        answers.append(
            await call(nodes[i % 2], "POST", "/account/signup", basic(f"Racer{i}", PASSWORD))
        )
    made = [a for a in answers if a.status == 201]
    refused = [a for a in answers if a.status != 201]
    assert len(made) == 5 and answers[:5] == made  # the first five, on both nodes
    assert all(a.status == 429 and a.error == "rate_limited" for a in refused), refused[:3]
    for a in refused:  # the message says why and when, as the header does
        wait = int(a.headers["Retry-After"])
        assert 1 <= wait <= 3600
        assert a.body["message"] == (
            f"too many accounts made from your address: try again in {wait} s"
        )
    assert {id(nodes[i % 2]) for i, a in enumerate(answers) if a.status == 429} == {
        id(n) for n in nodes
    }  # both nodes refused
    assert await count_rows(nodes[0]) == (5, 5)


async def test_an_account_keeps_at_most_its_sessions_limit(node: Any, clock: TestClock) -> None:
    """Signing in again and again fills no table: past SESSIONS_KEPT sessions a sign-in ends
    the least recently used one, never the new one (the clock standing still: every session
    made at the same time)."""
    from spider_server.store.accounts import SESSIONS_KEPT

    made = await call(node, "POST", "/account/signup", basic("Ada", PASSWORD))
    first = made.body["token"]
    tokens = [first]
    for _ in range(SESSIONS_KEPT + 4):
        signed = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD))
        assert signed.status == 200, signed
        tokens.append(signed.body["token"])
        # the session just made always answers
        assert (await call(node, "GET", "/account/me", bearer(tokens[-1]))).status == 200
    assert await count_rows(node) == (1, SESSIONS_KEPT)
    clock.move(1)
    newest = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD))
    assert await count_rows(node) == (1, SESSIONS_KEPT)
    assert (await call(node, "GET", "/account/me", bearer(newest.body["token"]))).status == 200
