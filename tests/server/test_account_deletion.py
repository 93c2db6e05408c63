"""An account deleted on a real node, Valkey and PostgreSQL: its credentials, sessions and
API tokens go at once; its races stay, replay and export, with its player shown as
"deleted player", and the other players' names and ratings hold. Then every table of the
database and every key of Redis is looked through: nothing personal of it is left."""

from __future__ import annotations

from typing import Any

import pytest

from spider_client import protocol as p

from .account_helpers import ACCOUNT_SETTINGS, basic, bearer, call
from .clocks import TestClock
from .server_helpers import Client
from .softkey import SoftKey
from .test_api_tokens import hello, listening, new_token, sign_up
from .test_bot_accounts import archive_all, rated_race, settled, wait_for_ladder
from .test_export import get
from .test_passkeys import origin
from .test_passkeys import sign_in as passkey_sign_in
from .test_passkeys import sign_up as passkey_sign_up

PASSWORD = "correct horse battery staple"
NAME = "Quillon"
"""The deleted account's name: found nowhere else (checked before the deletion)."""


@pytest.fixture
def clock() -> TestClock:
    return TestClock()


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any, clock: TestClock) -> Any:
    return await server_node(
        redis_server.url,
        database_url=pg_database.url,
        clock=clock,
        sweep_interval=3600,  # the test's archive steps alone
        **ACCOUNT_SETTINGS,
    )


def _found(value: Any, needles: list[bytes]) -> bool:
    """Whether a value read back (text, bytes, a msgpack blob, a list) holds a needle."""
    if value is None:
        return False
    if isinstance(value, memoryview):
        value = bytes(value)
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes):
        low = value.lower()
        return any(n in low for n in needles)
    if isinstance(value, list | tuple):
        return any(_found(v, needles) for v in value)
    return any(n in repr(value).lower().encode() for n in needles)


async def personal_in_database(node: Any, needles: list[bytes]) -> list[str]:
    """``table.column`` of every value of every table that holds a needle."""
    archive = node.node.archiver.archive
    out = []
    async with archive.connection() as conn:
        tables = await conn.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        )
        for t in tables:
            for row in await conn.fetch(f'SELECT * FROM "{t["table_name"]}"'):
                out += [f"{t['table_name']}.{k}" for k, v in row.items() if _found(v, needles)]
    return out


async def personal_in_redis(redis: Any, needles: list[bytes]) -> list[str]:
    """Every key whose name or value holds a needle."""
    out = []
    async for key in redis.scan_iter(count=1000):
        kind = (await redis.type(key)).decode()
        if kind == "string":
            value: Any = await redis.get(key)
        elif kind == "hash":
            value = list((await redis.hgetall(key)).items())
        elif kind == "list":
            value = await redis.lrange(key, 0, -1)
        elif kind == "set":
            value = list(await redis.smembers(key))
        elif kind == "zset":
            value = await redis.zrange(key, 0, -1)
        elif kind == "stream":
            value = [list(fields.items()) for _, fields in await redis.xrange(key)]
        else:
            value = None
        flat: list[Any] = [key]
        for item in value if isinstance(value, list) else [value]:
            flat += list(item) if isinstance(item, tuple) else [item]
        if any(_found(v, needles) for v in flat):
            out.append(key.decode())
    return out


async def test_a_deleted_account_leaves_its_results_and_nothing_personal(
    node: Any, clock: TestClock
) -> None:
    quill = await sign_up(node, NAME)
    otto = await sign_up(node, "Otto")
    token = (await new_token(node, quill["token"], "race:read race:play")).body["token"]
    a = await Client.connect(node.url, token=quill["token"])
    b = await Client.connect(node.url, token=otto["token"])
    await settled(node, quill, otto, bot=False)  # on the ladder after the race
    try:
        code = await rated_race(b, a, clock)  # rated: both have ratings, Otto's must hold
        before = await wait_for_ladder(b, "humans", {a.player, b.player})
    finally:
        await a.close()
        await b.close()
    redis = node.node.store.redis
    archive = node.node.archiver.archive
    async with archive.connection() as conn:
        hashed = await conn.fetchval("SELECT password FROM accounts WHERE name = $1", NAME)
    needles = [NAME.lower().encode(), hashed.encode().lower(), token.lower().encode()]
    needles.append(quill["token"].lower().encode())

    # not archived yet: refused, and nothing changes
    refused = await call(node, "POST", "/account/delete", basic(NAME, PASSWORD))
    assert refused.status == 409 and refused.error == "in_race", refused
    wrong = await call(node, "POST", "/account/delete", basic(NAME, "not the password"))
    assert wrong.status == 401 and wrong.error == "bad_credentials"
    assert (await call(node, "GET", "/account/me", bearer(quill["token"]))).status == 200
    await archive_all(node, clock)
    assert await personal_in_database(node, needles[:1])  # the test can see the name
    assert await personal_in_redis(redis, needles[:1])

    open_one = await Client.connect(node.url, token=token)  # open through the deletion
    await listening(node, 1)
    gone = await call(node, "POST", "/account/delete", basic(NAME, PASSWORD))
    assert gone.status == 200 and gone.body == {"deleted": True, "player": quill["player"]}
    assert "Max-Age=0" in gone.headers["Set-Cookie"]
    told = await open_one.expect("error")
    assert told.error == "bad_token" and "deleted" in told.message
    assert await open_one.closed_with() == 1008

    # credentials, sessions and tokens: gone at once
    assert (await call(node, "GET", "/account/me", bearer(quill["token"]))).status == 401
    again = await call(node, "POST", "/account/signin", basic(NAME, PASSWORD))
    assert again.status == 401 and again.error == "bad_credentials"
    for old in (quill["token"], token):
        client, answer = await hello(node.url, old)
        try:
            assert answer.type == "error" and answer.error == "bad_token", answer
        finally:
            await client.close()
    async with archive.connection() as conn:
        for table, otto_has in (("accounts", 1), ("sessions", 1), ("api_tokens", 0)):
            assert await conn.fetchval(f"SELECT count(*) FROM {table}") == otto_has

    # the race still exports and replays, the player shown as "deleted player"
    status, _, record = await get(node, code)
    assert status == 200, record
    names = {pl["player"]: pl["name"] for pl in record["players"]}
    assert names == {quill["player"]: "deleted player", otto["player"]: "Otto"}
    watcher = await Client.connect(node.url, name="watcher")
    try:
        joined = await watcher.request(p.Join(req=0, code=code, role="spectator"))
        assert joined.type == "joined", joined
        results = {r.player: r.name for r in joined.race.results}
        assert results == {quill["player"]: "deleted player", otto["player"]: "Otto"}
        assert joined.race.replays and set(joined.race.replays) == set(results)
        after = await wait_for_ladder(watcher, "humans", {b.player})
        assert after[b.player] == before[b.player]  # Otto's rating holds
        profile = await watcher.request(p.Profile(req=0, name=NAME), ("profile_reply", "error"))
        assert profile.type == "profile_reply" and profile.found is False, profile
    finally:
        await watcher.close()

    assert await personal_in_database(node, needles) == []
    assert await personal_in_redis(redis, needles) == []
    # the name is free again
    made = await call(node, "POST", "/account/signup", basic(NAME, PASSWORD))
    assert made.status == 201 and made.body["player"] != quill["player"]


async def test_a_deleted_accounts_guest_token_speaks_for_nobody(
    node: Any, server_node: Any, redis_server: Any, pg_database: Any
) -> None:
    guest = await Client.connect(node.url, name="wanderer")
    token, player = guest.token, guest.player
    await guest.close()
    made = await call(
        node, "POST", "/account/signup", {**basic("Wendell", PASSWORD), "X-Guest-Token": token}
    )
    assert made.status == 201 and made.body["player"] == player, made
    gone = await call(node, "POST", "/account/delete", basic("Wendell", PASSWORD))
    assert gone.status == 200, gone
    other = await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)
    for url, name in ((node.url, None), (node.url, "Wendell"), (other.url, None)):
        client = await Client.connect(url, hello=False)  # this node, and one that asks
        try:
            await client.send(p.Hello(token=token, name=name))
            answer = await client.expect(("welcome", "error"))
            assert answer.type == "error" and answer.error == "bad_token", answer
            assert "deleted" in answer.message
        finally:
            await client.close()


async def test_an_account_without_a_password_is_deleted_by_its_session(node: Any) -> None:
    key = SoftKey()
    made = await passkey_sign_up(node, "Pascaline", key)
    assert made.status == 201, made
    token, player = made.body["token"], made.body["player"]
    other = await sign_up(node, "Otto")
    archive = node.node.archiver.archive
    needles = [b"pascaline", key.id.lower()]
    before = await personal_in_database(node, needles)
    assert {"accounts.name", "passkeys.id"} <= set(before), before  # the test can see them

    # refused, changing nothing: a session alone for an account with a password; Basic for
    # one without; the cookie without the page's Origin
    alone = await call(node, "POST", "/account/delete", bearer(other["token"]))
    assert alone.status == 400 and alone.error == "bad_request", alone
    assert "password" in alone.body["message"]
    assert (await call(node, "GET", "/account/me", bearer(other["token"]))).status == 200
    guessed = await call(node, "POST", "/account/delete", basic("Pascaline", PASSWORD))
    assert guessed.status == 401 and guessed.error == "bad_credentials", guessed
    cookie = {"Cookie": f"spider_session={token}"}
    foreign = await call(node, "POST", "/account/delete", cookie)
    assert foreign.status == 403 and foreign.error == "forbidden", foreign
    assert (await call(node, "GET", "/account/me", bearer(token))).status == 200

    gone = await call(node, "POST", "/account/delete", {**cookie, "Origin": origin(node)})
    assert gone.status == 200 and gone.body == {"deleted": True, "player": player}, gone
    assert "Max-Age=0" in gone.headers["Set-Cookie"]
    assert (await call(node, "GET", "/account/me", bearer(token))).status == 401
    again = await passkey_sign_in(node, key)
    assert again.status == 401 and again.error == "bad_credentials", again
    async with archive.connection() as conn:
        assert await conn.fetchval("SELECT count(*) FROM passkeys") == 0
        assert await conn.fetchval("SELECT count(*) FROM accounts") == 1  # Otto's
    assert await personal_in_database(node, needles) == []
    assert await personal_in_redis(node.node.store.redis, needles[:1]) == []
