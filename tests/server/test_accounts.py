"""Accounts end to end on a real node, Valkey and PostgreSQL: sign-up, sign-in, the
account, its sessions, signing out (here, everywhere), a password changed, and ``hello``
with a session (its token, or the page's cookie)."""

from __future__ import annotations

from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from spider_client import protocol as p

from .account_helpers import ACCOUNT_SETTINGS, b64, basic, bearer, call, count_rows
from .server_helpers import Client

PASSWORD = "correct horse battery staple"


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any) -> Any:
    return await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)


async def test_sign_up_sign_in_me_sessions_and_sign_out(node: Any) -> None:
    made = await call(node, "POST", "/account/signup", basic("Ada", PASSWORD))
    assert made.status == 201, made
    assert made.body["name"] == "Ada"
    first = made.body["token"]
    assert first.startswith("s1.") and len(first) == 3 + 43
    cookie = made.headers["Set-Cookie"]
    assert cookie.startswith(f"spider_session={first};")
    for part in ("HttpOnly", "SameSite=Lax", "Path=/"):
        assert part in cookie
    assert "Secure" not in cookie  # the node's own origin is http

    me = await call(node, "GET", "/account/me", bearer(first))
    assert me.status == 200 and me.body["name"] == "Ada"
    assert me.body["player"] == made.body["player"]

    again = await call(
        node, "POST", "/account/signin", basic("ADA", PASSWORD), address="203.0.113.9"
    )
    assert again.status == 200 and again.body["name"] == "Ada"
    second = again.body["token"]
    assert second != first and again.body["player"] == made.body["player"]
    assert await count_rows(node) == (1, 2)

    listed = await call(node, "GET", "/account/sessions", bearer(second))
    assert listed.status == 200
    sessions = listed.body["sessions"]
    assert len(sessions) == 2
    assert [s["current"] for s in sessions].count(True) == 1
    assert {s["address"] for s in sessions} == {"198.51.100.7", "203.0.113.9"}
    current = next(s for s in sessions if s["current"])
    assert current["address"] == "203.0.113.9"
    assert all(s["user_agent"].startswith("Python-urllib") for s in sessions)

    out = await call(node, "POST", "/account/signout", bearer(second))
    assert out.status == 200 and out.body == {"signed_out": True}
    assert "Max-Age=0" in out.headers["Set-Cookie"]
    gone = await call(node, "GET", "/account/me", bearer(second))
    assert gone.status == 401 and gone.error == "unauthorized"
    still = await call(node, "GET", "/account/me", bearer(first))
    assert still.status == 200
    assert await count_rows(node) == (1, 1)


async def test_hello_with_a_session_token_speaks_for_the_account(node: Any) -> None:
    made = await call(node, "POST", "/account/signup", basic("Grace", PASSWORD))
    token = made.body["token"]
    client = await Client.connect(node.url, name="someone else", token=token)
    try:
        assert client.welcome is not None
        assert client.welcome.player == made.body["player"]
        assert client.welcome.name == "Grace"  # the account's name stands
        assert client.welcome.token == token  # the session, not a guest's token
        assert client.welcome.account == "Grace"
    finally:
        await client.close()
    guest = await Client.connect(node.url, name="Hopper")
    try:
        assert guest.welcome is not None
        assert guest.welcome.player != made.body["player"]
        assert guest.welcome.token.startswith("g1.v1.")
        assert guest.welcome.account is None
    finally:
        await guest.close()


async def test_an_old_guest_token_without_its_prefix_still_speaks(node: Any) -> None:
    first = await Client.connect(node.url, name="Lin")
    assert first.welcome is not None
    old = first.welcome.token.removeprefix("g1.")
    await first.close()
    again = await Client.connect(node.url, token=old, name=None)
    try:
        assert again.welcome is not None and again.welcome.player == first.welcome.player
    finally:
        await again.close()


async def test_a_password_change_ends_the_other_sessions(node: Any) -> None:
    made = await call(node, "POST", "/account/signup", basic("Hedy", PASSWORD))
    kept = made.body["token"]
    other = (await call(node, "POST", "/account/signin", basic("Hedy", PASSWORD))).body["token"]
    headers = {
        **basic("Hedy", PASSWORD),
        "X-New-Password": b64("frequency hopping 1942"),
        "Cookie": f"spider_session={kept}",
        "Origin": node.http_url,
    }
    changed = await call(node, "POST", "/account/password", headers)
    assert changed.status == 200, changed
    assert changed.body == {"name": "Hedy", "ended": 1}
    assert (await call(node, "GET", "/account/me", bearer(kept))).status == 200
    assert (await call(node, "GET", "/account/me", bearer(other))).status == 401
    client = await Client.connect(node.url, hello=False)
    try:
        await client.send(p.Hello(token=other))
        refused = await client.expect("error")
        assert refused.error == "bad_token"
        assert "ended" in refused.message
        await client.send(p.Hello(token=kept))  # the connection still awaits its hello
        welcome = await client.expect("welcome")
        assert welcome.name == "Hedy"
    finally:
        await client.close()
    old = await call(node, "POST", "/account/signin", basic("Hedy", PASSWORD))
    assert old.status == 401
    new = await call(node, "POST", "/account/signin", basic("Hedy", "frequency hopping 1942"))
    assert new.status == 200


async def test_sign_out_everywhere(node: Any) -> None:
    tokens = [
        (await call(node, "POST", f"/account/{way}", basic("Joan", PASSWORD))).body["token"]
        for way in ("signup", "signin", "signin")
    ]
    assert await count_rows(node) == (1, 3)
    out = await call(node, "POST", "/account/signout-everywhere", bearer(tokens[1]))
    assert out.status == 200 and out.body == {"signed_out": True, "ended": 3}
    for token in tokens:
        assert (await call(node, "GET", "/account/me", bearer(token))).status == 401
    assert await count_rows(node) == (1, 0)


async def test_the_page_cookie_on_the_upgrade(node: Any) -> None:
    made = await call(node, "POST", "/account/signup", basic("Mary", PASSWORD))
    cookie = {"Cookie": f"spider_session={made.body['token']}"}
    with pytest.raises(InvalidStatus) as refused:
        await connect(node.url, additional_headers=cookie, origin="https://evil.example")
    assert refused.value.response.status_code == 403
    with pytest.raises(InvalidStatus):  # no Origin at all: refused too
        await connect(node.url, additional_headers=cookie)
    ws = await connect(node.url, additional_headers=cookie, origin=node.http_url)
    client = Client(ws)
    try:
        await client.send(p.Hello(name=None))
        welcome = await client.expect("welcome")
        assert welcome.player == made.body["player"] and welcome.name == "Mary"
        assert welcome.token == ""  # the page's script never sees the session's token
    finally:
        await client.close()
    # once signed out, the cookie speaks for no one: the connection is a guest's
    await call(node, "POST", "/account/signout", bearer(made.body["token"]))
    ws = await connect(node.url, additional_headers=cookie, origin=node.http_url)
    client = Client(ws)
    try:
        await client.send(p.Hello(name="visitor"))
        welcome = await client.expect("welcome")
        assert welcome.player != made.body["player"] and welcome.token.startswith("g1.")
    finally:
        await client.close()


async def test_a_cookie_post_from_a_foreign_page_is_refused(node: Any) -> None:
    made = await call(node, "POST", "/account/signup", basic("Rosalind", PASSWORD))
    cookie = f"spider_session={made.body['token']}"
    for origin in ("https://evil.example", None):
        headers = {"Cookie": cookie} | ({"Origin": origin} if origin else {})
        for path in ("/account/signout", "/account/signout-everywhere"):
            refused = await call(node, "POST", path, headers)
            assert refused.status == 403 and refused.error == "forbidden"
    assert await count_rows(node) == (1, 1)
    me = await call(node, "GET", "/account/me", {"Cookie": cookie})  # a read needs no Origin
    assert me.status == 200 and me.body["name"] == "Rosalind"
    out = await call(node, "POST", "/account/signout", {"Cookie": cookie, "Origin": node.http_url})
    assert out.status == 200
    assert await count_rows(node) == (1, 0)
