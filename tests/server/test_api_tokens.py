"""Personal API tokens end to end on a real node, Valkey and PostgreSQL: made (shown once,
kept hashed), listed with their last use, revoked; a hello with one speaks for the
account with the token's scopes, and each scope allows what docs/protocol.md's table says
and nothing else (``missing_scope``, changing nothing)."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

import pytest

from spider_client import protocol as p

from .account_helpers import ACCOUNT_SETTINGS, basic, bearer, call
from .clocks import TestClock
from .server_helpers import Client

PASSWORD = "correct horse battery staple"


@pytest.fixture
def clock() -> TestClock:
    return TestClock()


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any, clock: TestClock) -> Any:
    return await server_node(
        redis_server.url, database_url=pg_database.url, clock=clock, **ACCOUNT_SETTINGS
    )


async def sign_up(node: Any, name: str) -> dict[str, Any]:
    made = await call(node, "POST", "/account/signup", basic(name, PASSWORD))
    assert made.status == 201, made
    body: dict[str, Any] = made.body
    return body


async def new_token(node: Any, session: str, scopes: str, name: str | None = None) -> Any:
    headers = {**bearer(session), "X-Scopes": scopes}
    if name is not None:
        headers["X-Token-Name"] = name
    return await call(node, "POST", "/account/tokens/new", headers)


async def hello(url: str, token: str, *, bot: bool = False) -> tuple[Client, Any]:
    client = await Client.connect(url, hello=False, label="token")
    await client.send(p.Hello(token=token, together=True, bot=bot))
    return client, await client.expect(("welcome", "error"))


async def test_a_token_is_made_shown_once_kept_hashed_listed_and_revoked(
    node: Any, clock: TestClock
) -> None:
    ada = await sign_up(node, "Ada")
    made = await new_token(node, ada["token"], "race:read race:play", "my bot")
    assert made.status == 201, made
    token = made.body["token"]
    assert token.startswith("a1.") and len(token) == 3 + 43
    assert made.body["scopes"] == ["race:read", "race:play"]
    assert made.body["name"] == "my bot" and made.body["last_used_at"] is None

    archive = node.node.archiver.archive
    async with archive.connection() as conn:
        rows = await conn.fetch("SELECT * FROM api_tokens")
    assert len(rows) == 1
    assert bytes(rows[0]["hash"]) == hashlib.sha256(token.encode()).digest()
    assert token not in repr(dict(rows[0]))  # the token itself is kept nowhere

    listed = await call(node, "GET", "/account/tokens", bearer(ada["token"]))
    assert listed.status == 200
    [line] = listed.body["tokens"]
    assert "token" not in line and line["id"] == made.body["id"]
    assert line["last_used_at"] is None

    clock.move(5)
    client, welcome = await hello(node.url, token)
    try:
        assert welcome.type == "welcome", welcome
        assert welcome.player == ada["player"] and welcome.account == "Ada"
        assert welcome.token == token
    finally:
        await client.close()
    listed = await call(node, "GET", "/account/tokens", bearer(ada["token"]))
    assert listed.body["tokens"][0]["last_used_at"] == pytest.approx(clock())

    # an API token manages nothing of the account
    refused = await call(node, "GET", "/account/tokens", bearer(token))
    assert refused.status == 401 and refused.error == "unauthorized"

    gone = await call(
        node,
        "POST",
        "/account/tokens/revoke",
        {**bearer(ada["token"]), "X-Token-Id": str(line["id"])},
    )
    assert gone.status == 200 and gone.body == {"revoked": line["id"]}
    client, answer = await hello(node.url, token)
    try:
        assert answer.type == "error" and answer.error == "bad_token", answer
    finally:
        await client.close()
    again = await call(
        node,
        "POST",
        "/account/tokens/revoke",
        {**bearer(ada["token"]), "X-Token-Id": str(line["id"])},
    )
    assert again.status == 404 and again.error == "no_such_token"


async def test_bad_token_requests_change_nothing(node: Any) -> None:
    ada = await sign_up(node, "Ada")
    grace = await sign_up(node, "Grace")
    cases = [
        (None, "bad_request"),  # no scopes
        ("race:read race:fly", "bad_request"),
        ("bot:play", "bad_request"),  # a human's account
    ]
    for scopes, error in cases:
        headers = (
            bearer(ada["token"]) if scopes is None else {**bearer(ada["token"]), "X-Scopes": scopes}
        )
        answer = await call(node, "POST", "/account/tokens/new", headers)
        assert answer.status == 400 and answer.error == error, (scopes, answer)
    answer = await new_token(node, ada["token"], "race:read", "\u00e9t\u00e9")
    assert answer.status == 400 and answer.error == "bad_request"
    answer = await new_token(node, ada["token"], "race:read", "x" * 41)
    assert answer.status == 400
    answer = await call(node, "POST", "/account/tokens/new", {"X-Scopes": "race:read"})
    assert answer.status == 401 and answer.error == "unauthorized"
    listed = await call(node, "GET", "/account/tokens", bearer(ada["token"]))
    assert listed.body == {"tokens": []}

    # another account's token cannot be revoked
    made = await new_token(node, grace["token"], "race:read")
    for raw in (str(made.body["id"]), "x1", "", "9" * 20):
        answer = await call(
            node, "POST", "/account/tokens/revoke", {**bearer(ada["token"]), "X-Token-Id": raw}
        )
        assert answer.status in (400, 404), answer
    still = await call(node, "GET", "/account/tokens", bearer(grace["token"]))
    assert [t["id"] for t in still.body["tokens"]] == [made.body["id"]]


async def test_a_human_account_saying_bot_is_refused(node: Any) -> None:
    ada = await sign_up(node, "Ada")
    made = await new_token(node, ada["token"], "race:play")
    for token in (ada["token"], made.body["token"]):
        client, answer = await hello(node.url, token, bot=True)
        try:
            assert answer.type == "error" and answer.error == "invalid", answer
            assert "bot account" in answer.message
        finally:
            await client.close()


# -- the scopes' table ----------------------------------------------------------------------

READ, PLAY, CREATE = "race:read", "race:play", "race:create"
SPECTATOR_LEAVE = "leave"
"""A leave's scope: race:read for a race followed as a spectator (the read token's, the
others' spectator joins being refused), race:play else."""


def messages(code: str) -> list[tuple[str, Any]]:
    """Every client message but hello, with the scope the table gives it, in an order a
    connection can send them (``code``: a race waiting for players)."""
    return [
        (READ, p.OpenRaces(req=0)),
        (READ, p.MyRaces(req=0)),
        (READ, p.Leaderboard(req=0, variant="spider1")),
        (READ, p.Profile(req=0)),
        (READ, p.RatingChanges(req=0, code=code)),
        (READ, p.RatingLeaderboard(req=0, variant="spider1")),
        (READ, p.Join(req=0, code=code, role="spectator")),
        (SPECTATOR_LEAVE, p.Leave(req=0, code=code)),
        (PLAY, p.Join(req=0, code=code)),
        (PLAY, p.Ready(req=0, code=code)),
        (PLAY, p.MoveAction(code=code, seq=1, move="+")),
        (PLAY, p.Undo(code=code, seq=1)),
        (PLAY, p.Hint(req=0, code=code)),
        (PLAY, p.Resign(code=code, seq=1)),
        (PLAY, p.Leave(req=0, code=code)),
        (PLAY, p.QuickMatch(req=0, variant="spider1")),
        (PLAY, p.CancelMatch(req=0)),
        (CREATE, p.Rematch(req=0, code=code)),
        (CREATE, p.CreateRace(req=0, variant="spider1")),
    ]


async def answer_to(client: Client, message: Any) -> Any:
    """The reply to ``message`` (an error, or what it asked for)."""
    if hasattr(message, "req"):
        message.req = client.next_req()
        await client.send(message)
        return await client.expect(
            tuple(m for m in REPLY_TYPES), lambda m: getattr(m, "req", None) == message.req
        )
    await client.send(message)
    return await client.expect(("ack", "error"), lambda m: m.seq == message.seq)


REPLY_TYPES = (
    "error", "joined", "done", "ack", "my_races_reply", "leaderboard_reply", "profile_reply",
    "rating_changes_reply", "rating_leaderboard_reply", "open_race_list", "queued",
    "hint_reply",
)  # fmt: skip


@pytest.mark.parametrize("scope", [READ, PLAY, CREATE])
async def test_each_scope_allows_its_messages_and_nothing_else(node: Any, scope: str) -> None:
    ada = await sign_up(node, "Ada")
    host = await Client.connect(node.url, name="host")
    try:
        code = (await host.create(variant="spider1", countdown=0)).race.code
        made = await new_token(node, ada["token"], scope)
        client, welcome = await hello(node.url, made.body["token"])
        try:
            assert welcome.type == "welcome", welcome
            for needed, message in messages(code):
                if needed == SPECTATOR_LEAVE:
                    needed = READ if scope == READ else PLAY
                reply = await answer_to(client, message)
                error = getattr(reply, "error", None) if reply.type == "error" else None
                if needed == scope:
                    assert error != "missing_scope", (scope, message, reply)
                else:
                    assert error == "missing_scope", (scope, message, reply)
                    assert needed in reply.message
        finally:
            await client.close()
        players = (await host.request(p.Join(req=0, code=code))).race.players
        expected = {host.player, ada["player"]} if scope == PLAY else {host.player}
        assert {pl.player for pl in players} <= expected | {ada["player"]}
        if scope != PLAY:  # refused joins changed nothing
            assert {pl.player for pl in players} == {host.player}
    finally:
        await host.close()


async def test_a_read_token_cannot_move(node: Any) -> None:
    ada = await sign_up(node, "Ada")
    full = await Client.connect(node.url, token=ada["token"])  # the session: every scope
    other = await Client.connect(node.url, name="other")
    try:
        code = (await full.create(variant="spider1", countdown=0)).race.code
        await other.join(code)
        await full.ready(code)
        await other.ready(code)
        await full.expect("ack", lambda m: m.seq == 0)
        made = await new_token(node, ada["token"], "race:read")
        reader, welcome = await hello(node.url, made.body["token"])
        try:
            assert welcome.player == ada["player"]
            joined = await reader.request(p.Join(req=0, code=code, role="spectator"))
            assert joined.type == "joined", joined
            for message in (
                p.MoveAction(code=code, seq=1, move="+"),
                p.Resign(code=code, seq=1),
                p.Undo(code=code, seq=1),
            ):
                reply = await answer_to(reader, message)
                assert reply.type == "error" and reply.error == "missing_scope", reply
            refused = await reader.request(p.Join(req=0, code=code))
            assert refused.type == "error" and refused.error == "missing_scope"
        finally:
            await reader.close()
        # the player's game is as it was: its next move is still seq 1
        moved = await full.move(code, 1, "+")
        assert moved.type == "ack", moved
    finally:
        await full.close()
        await other.close()


async def listening(node: Any, nodes: int) -> None:
    """Wait until ``nodes`` nodes hear of ended accounts and tokens (each starts to as its
    first connection is upgraded)."""
    redis = node.node.store.redis
    async with asyncio.timeout(30):
        while True:
            [(_, count)] = await redis.pubsub_numsub("{accounts}:ch")
            if count >= nodes:
                return
            await asyncio.sleep(0.02)


async def test_a_revoked_token_ends_its_connections_on_every_node(
    node: Any, server_node: Any, redis_server: Any, pg_database: Any
) -> None:
    other = await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)
    ada = await sign_up(node, "Ada")
    kept = (await new_token(node, ada["token"], "race:read")).body["token"]
    gone = await new_token(node, ada["token"], "race:read race:play")
    here, _ = await hello(node.url, gone.body["token"])
    there, _ = await hello(other.url, gone.body["token"])
    still, _ = await hello(other.url, kept)
    session = await Client.connect(node.url, token=ada["token"])
    try:
        await listening(node, 2)
        revoked = await call(
            node, "POST", "/account/tokens/revoke",
            {**bearer(ada["token"]), "X-Token-Id": str(gone.body["id"])},
        )  # fmt: skip
        assert revoked.status == 200, revoked
        for client in (here, there):
            told = await client.expect("error")
            assert told.error == "bad_token" and "revoked" in told.message
            assert await client.closed_with() == 1008
        # the account's other token and its session go on
        for client in (still, session):
            reply = await client.request(p.MyRaces(req=0), ("my_races_reply", "error"))
            assert reply.type == "my_races_reply", reply
    finally:
        for client in (here, there, still, session):
            await client.close()
