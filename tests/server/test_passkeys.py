"""Passkeys over real HTTP to a real node (Valkey, PostgreSQL), answered by a software
authenticator (:mod:`.softkey`): an account made with a passkey alone, signed in with it,
a second passkey added and one removed (the last of an account without a password
kept); and the refusals, none of which changes anything: a challenge answered twice or
after its time, a passkey no account has, an answer from a foreign origin, a credential
id registered twice, a counter that does not grow."""

from __future__ import annotations

from typing import Any

import pytest

from spider_client import protocol as p

from .account_helpers import ACCOUNT_SETTINGS, b64, basic, bearer, call, count_rows
from .clocks import TestClock
from .server_helpers import Client
from .softkey import SoftKey, b64url, webauthn_header

LIFETIME = 120
PASSWORD = "correct horse battery staple"


@pytest.fixture
def clock() -> TestClock:
    return TestClock()


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any, clock: TestClock) -> Any:
    return await server_node(
        redis_server.url,
        database_url=pg_database.url,
        clock=clock,
        passkey_challenge_lifetime=LIFETIME,
        **ACCOUNT_SETTINGS,
    )


def origin(node: Any) -> str:
    """The page's origin: the relying party is ``localhost`` on loopback."""
    return f"http://localhost:{node.node.port}"


async def signup_options(node: Any, name: str) -> dict[str, Any]:
    answer = await call(node, "POST", "/account/passkey/signup-options", {"X-Name": b64(name)})
    assert answer.status == 200, answer
    return dict(answer.body)


async def sign_up(node: Any, name: str, key: SoftKey) -> Any:
    options = await signup_options(node, name)
    made = key.create(options, origin(node))
    return await call(
        node, "POST", "/account/passkey/signup",
        {**webauthn_header(made), "X-Passkey-Name": b64("my laptop")},
    )  # fmt: skip


async def signin_options(node: Any) -> dict[str, Any]:
    answer = await call(node, "POST", "/account/passkey/signin-options")
    assert answer.status == 200, answer
    return dict(answer.body)


async def sign_in(node: Any, key: SoftKey, *, page: str | None = None) -> Any:
    options = await signin_options(node)
    answer = key.get(options, page or origin(node))
    return await call(node, "POST", "/account/passkey/signin", webauthn_header(answer))


async def test_sign_up_sign_in_add_and_remove(node: Any) -> None:
    options = await signup_options(node, "Ada")
    assert options["rp"] == {"id": "localhost", "name": "Spider Race"}
    assert options["user"]["name"] == "Ada"
    assert options["authenticatorSelection"]["residentKey"] == "required"
    assert options["attestation"] == "none"

    first = SoftKey()
    made = await sign_up(node, "Ada", first)
    assert made.status == 201, made
    assert made.body["name"] == "Ada" and made.body["token"].startswith("s1.")
    assert made.headers["Set-Cookie"].startswith("spider_session=")
    token = made.body["token"]
    me = await call(node, "GET", "/account/me", bearer(token))
    assert me.body["password"] is False and me.body["email"] is None
    no_password = await call(node, "POST", "/account/signin", basic("Ada", PASSWORD))
    assert no_password.status == 401 and no_password.error == "bad_credentials"

    signed = await sign_in(node, first)
    assert signed.status == 200, signed
    assert signed.body["name"] == "Ada" and signed.body["player"] == made.body["player"]
    assert signed.body["token"] != token

    # a second passkey, added from the account; the first is excluded from its options
    add = await call(node, "POST", "/account/passkey/add-options", bearer(token))
    assert add.status == 200, add
    assert [c["id"] for c in add.body["excludeCredentials"]] == [b64url(first.id)]
    second = SoftKey()
    added = await call(
        node, "POST", "/account/passkey/add",
        {**bearer(token), **webauthn_header(second.create(add.body, origin(node))),
         "X-Passkey-Name": b64("my phone")},
    )  # fmt: skip
    assert added.status == 201, added
    assert added.body["id"] == b64url(second.id) and added.body["name"] == "my phone"
    listed = await call(node, "GET", "/account/passkeys", bearer(token))
    assert [p["name"] for p in listed.body["passkeys"]] == ["my laptop", "my phone"]
    assert listed.body["passkeys"][0]["last_used_at"] is not None  # it signed in
    assert listed.body["password"] is False
    assert (await sign_in(node, second)).status == 200

    removed = await call(
        node, "POST", "/account/passkey/remove", {**bearer(token), "X-Passkey": b64url(first.id)}
    )
    assert removed.status == 200 and removed.body == {"removed": True}
    gone = await sign_in(node, first)
    assert gone.status == 401 and gone.error == "bad_credentials"

    last = await call(
        node, "POST", "/account/passkey/remove", {**bearer(token), "X-Passkey": b64url(second.id)}
    )
    assert last.status == 409 and last.error == "last_sign_in", last
    assert (await sign_in(node, second)).status == 200  # kept
    unknown = await call(
        node, "POST", "/account/passkey/remove", {**bearer(token), "X-Passkey": b64url(first.id)}
    )
    assert unknown.status == 400 and unknown.error == "bad_request"

    # a first password, set by the session alone; then the last passkey may go
    weak = await call(
        node, "POST", "/account/password", {**bearer(token), "X-New-Password": b64("short")}
    )
    assert weak.status == 400 and weak.error == "weak_password"
    first_password = await call(
        node, "POST", "/account/password", {**bearer(token), "X-New-Password": b64(PASSWORD)}
    )
    assert first_password.status == 200 and first_password.body == {"name": "Ada", "ended": 0}
    again = await call(
        node, "POST", "/account/password", {**bearer(token), "X-New-Password": b64("another one!")}
    )
    assert again.status == 400 and "has a password" in again.body["message"]
    assert (await call(node, "POST", "/account/signin", basic("Ada", PASSWORD))).status == 200
    gone_last = await call(
        node, "POST", "/account/passkey/remove", {**bearer(token), "X-Passkey": b64url(second.id)}
    )
    assert gone_last.status == 200


async def test_an_account_with_a_password_may_remove_its_last_passkey(node: Any) -> None:
    made = await call(node, "POST", "/account/signup", basic("Grace", PASSWORD))
    token = made.body["token"]
    add = await call(node, "POST", "/account/passkey/add-options", bearer(token))
    key = SoftKey()
    added = await call(
        node, "POST", "/account/passkey/add",
        {**bearer(token), **webauthn_header(key.create(add.body, origin(node)))},
    )  # fmt: skip
    assert added.status == 201, added
    assert added.body["name"].startswith("Python-urllib")  # unnamed: its user agent
    signed = await sign_in(node, key)
    assert signed.status == 200 and signed.body["name"] == "Grace"
    removed = await call(
        node, "POST", "/account/passkey/remove", {**bearer(token), "X-Passkey": b64url(key.id)}
    )
    assert removed.status == 200
    assert (await call(node, "POST", "/account/signin", basic("Grace", PASSWORD))).status == 200


async def test_a_challenge_is_answered_once_and_not_after_its_time(
    node: Any, clock: TestClock
) -> None:
    key = SoftKey()
    options = await signup_options(node, "Hopper")
    made = key.create(options, origin(node))
    first = await call(node, "POST", "/account/passkey/signup", webauthn_header(made))
    assert first.status == 201, first
    replayed = await call(node, "POST", "/account/passkey/signup", webauthn_header(made))
    assert replayed.status == 400 and replayed.error == "passkey_refused", replayed
    assert "answered already or has expired" in replayed.body["message"]

    options = await signin_options(node)
    answer = key.get(options, origin(node))
    assert (
        await call(node, "POST", "/account/passkey/signin", webauthn_header(answer))
    ).status == 200
    again = await call(node, "POST", "/account/passkey/signin", webauthn_header(answer))
    assert again.status == 400 and again.error == "passkey_refused"

    late_options = await signin_options(node)
    clock.move(LIFETIME)
    late = await call(
        node, "POST", "/account/passkey/signin",
        webauthn_header(key.get(late_options, origin(node))),
    )  # fmt: skip
    assert late.status == 400 and late.error == "passkey_refused"

    signup_late = await signup_options(node, "Lovelace")
    clock.move(LIFETIME + 1)
    refused = await call(
        node, "POST", "/account/passkey/signup",
        webauthn_header(SoftKey().create(signup_late, origin(node))),
    )  # fmt: skip
    assert refused.status == 400 and refused.error == "passkey_refused"
    assert await count_rows(node) == (1, 2)  # Hopper and its two sessions only


async def test_refusals_change_nothing(node: Any) -> None:
    key = SoftKey()
    made = await sign_up(node, "Ada", key)
    assert made.status == 201
    token = made.body["token"]
    before = await count_rows(node)

    stranger = await sign_in(node, SoftKey())  # a passkey no account has
    assert stranger.status == 401 and stranger.error == "bad_credentials"

    foreign = await sign_in(node, key, page="http://evil.example")
    assert foreign.status == 400 and foreign.error == "passkey_refused", foreign
    assert "origin" in foreign.body["message"].lower()
    foreign_signup = SoftKey().create(await signup_options(node, "Mallory"), "http://evil.example")
    refused = await call(node, "POST", "/account/passkey/signup", webauthn_header(foreign_signup))
    assert refused.status == 400 and refused.error == "passkey_refused"

    other_rp = key.get(await signin_options(node), origin(node), rp_id="evil.example")
    wrong_rp = await call(node, "POST", "/account/passkey/signin", webauthn_header(other_rp))
    assert wrong_rp.status == 400 and wrong_rp.error == "passkey_refused"

    # a counter that does not grow (a cloned authenticator): refused
    key.count = 1
    cloned = await sign_in(node, key)
    assert cloned.status == 400 and cloned.error == "passkey_refused", cloned
    assert "sign count" in cloned.body["message"]

    # the same credential id registered again, by another account or the same
    again = SoftKey(id=key.id)
    twice = await sign_up(node, "Grace", again)
    assert twice.status == 409 and twice.error == "passkey_taken", twice
    add = await call(node, "POST", "/account/passkey/add-options", bearer(token))
    dup = await call(
        node, "POST", "/account/passkey/add",
        {**bearer(token), **webauthn_header(SoftKey(id=key.id).create(add.body, origin(node)))},
    )  # fmt: skip
    assert dup.status == 409 and dup.error == "passkey_taken"

    garbled = await call(node, "POST", "/account/passkey/signin", {"X-WebAuthn": "not json"})
    assert garbled.status == 400
    missing = await call(node, "POST", "/account/passkey/signin")
    assert missing.status == 400 and "X-WebAuthn" in missing.body["message"]
    too_long = await call(node, "POST", "/account/passkey/signin", {"X-WebAuthn": "A" * 8001})
    assert too_long.status == 400 and "too long" in too_long.body["message"]
    taken_name = await call(node, "POST", "/account/passkey/signup-options", {"X-Name": b64("ADA")})
    assert taken_name.status == 409 and taken_name.error == "name_taken"

    assert await count_rows(node) == before
    listed = await call(node, "GET", "/account/passkeys", bearer(token))
    assert len(listed.body["passkeys"]) == 1


async def test_challenges_are_limited_per_address(
    pg_database: Any, server_node: Any, redis_server: Any, monkeypatch: Any
) -> None:
    from spider_server.store import account_links

    clock = TestClock()
    monkeypatch.setattr(account_links, "CHALLENGES_AN_HOUR", 3)
    node = await server_node(
        redis_server.url, database_url=pg_database.url, clock=clock, **ACCOUNT_SETTINGS
    )
    for _ in range(3):
        taken = await call(node, "POST", "/account/passkey/signin-options", address="2001:db8::1")
        assert taken.status == 200, taken
    over = await call(node, "POST", "/account/passkey/signin-options", address="2001:db8::2")
    assert over.status == 429 and over.error == "rate_limited"  # the same /64
    assert 1 <= int(over.headers["Retry-After"]) <= 3600
    signup = await call(
        node, "POST", "/account/passkey/signup-options", {"X-Name": b64("Ada")},
        address="2001:db8::3",
    )  # fmt: skip
    assert signup.status == 429
    other = await call(node, "POST", "/account/passkey/signin-options", address="203.0.113.1")
    assert other.status == 200
    clock.move(3600)
    again = await call(node, "POST", "/account/passkey/signin-options", address="2001:db8::1")
    assert again.status == 200


async def test_a_guest_signs_up_with_a_passkey_and_is_taken_over(node: Any) -> None:
    guest = await Client.connect(node.url, name="Lin")
    assert guest.welcome is not None
    token, player = guest.welcome.token, guest.welcome.player
    await guest.close()
    options = await call(
        node,
        "POST",
        "/account/passkey/signup-options",
        {"X-Name": b64("Lin"), "X-Guest-Token": token},
    )
    assert options.status == 200, options
    assert options.body["user"]["id"] == b64url(player.encode())
    key = SoftKey()
    made = await call(
        node,
        "POST",
        "/account/passkey/signup",
        webauthn_header(key.create(options.body, origin(node))),
    )
    assert made.status == 201, made
    assert made.body["player"] == player  # the guest's races, history and ratings go with it
    hello = await Client.connect(node.url, hello=False)
    try:  # the guest's token speaks for nobody now
        await hello.send(p.Hello(token=token))
        refused = await hello.expect(("welcome", "error"))
        assert refused.type == "error" and refused.error == "bad_token", refused
    finally:
        await hello.close()
    signed = await sign_in(node, key)
    assert signed.status == 200 and signed.body["player"] == player


async def test_a_node_without_a_database_offers_no_passkeys(
    server_node: Any, redis_server: Any
) -> None:
    node = await server_node(redis_server.url, **ACCOUNT_SETTINGS)
    config = await call(node, "GET", "/account/config")
    assert config.status == 200
    assert config.body["email"] is False and config.body["passkeys"] is False
    options = await call(node, "POST", "/account/passkey/signup-options", {"X-Name": b64("Ada")})
    assert options.status == 503 and options.error == "unavailable", options
