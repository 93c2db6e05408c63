"""Guests and accounts in the game, end to end on a real node, Valkey and PostgreSQL: a
guest who signs up from its token keeps its races (its old token speaks for nobody after),
a guest may not go by an account's name, and a profile by name is the account's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from spider_client import protocol as p

from .account_helpers import ACCOUNT_SETTINGS, basic, call, count_rows
from .server_helpers import Client, Player

PASSWORD = "correct horse battery staple"
OPTIONS: dict[str, Any] = {"variant": "spider1", "countdown": 0}


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any) -> Any:
    return await server_node(redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS)


async def _race(*clients: Client) -> str:
    """A race of ``clients`` (the first creates), played to its finish: the others resign
    at once, the first last."""
    first, *others = clients
    code = (await first.create(**OPTIONS)).race.code
    for c in others:
        await c.join(code)
    for c in clients:
        await c.ready(code)
    view = (await first.expect("ack", lambda m: m.seq == 0)).view
    for c in others:
        await c.expect("ack", lambda m: m.seq == 0)
        await c.send(p.Resign(code=code, seq=1))
    await Player(first, code, view).resign()
    await first.expect("finished")
    return code


async def _profile(url: str, **by: str) -> Any:
    c = await Client.connect(url, name="onlooker")
    try:
        reply = await c.request(p.Profile(req=0, **by), ("profile_reply", "error"))
    finally:
        await c.close()
    assert reply.type == "profile_reply", reply
    return reply


async def _in_profile(url: str, player: str, code: str) -> Any:
    """The player's profile once it lists race ``code`` (its results are written by the
    finishing node right after the finish)."""
    for _ in range(200):
        reply = await _profile(url, player=player)
        if reply.found and code in [line.code for line in reply.races]:
            return reply
        await asyncio.sleep(0.05)
    raise AssertionError(f"race {code} never reached {player}'s profile")


async def _hello(url: str, **hello: Any) -> Any:
    """The reply to one hello (``welcome`` or ``error``)."""
    c = await Client.connect(url, hello=False)
    try:
        await c.send(p.Hello(**hello))
        return await c.expect(("welcome", "error"))
    finally:
        await c.close()


async def test_a_guest_signs_up_from_its_token_and_keeps_its_races(node: Any) -> None:
    mira = await Client.connect(node.url, name="Mira")
    otto = await Client.connect(node.url, name="Otto")
    code = await _race(mira, otto)
    guest, token = mira.player, mira.token
    await mira.close()
    await otto.close()
    await _in_profile(node.url, guest, code)

    made = await call(
        node, "POST", "/account/signup", {**basic("Mira", PASSWORD), "X-Guest-Token": token}
    )
    assert made.status == 201, made
    assert made.body["player"] == guest  # the account races as the guest did

    profile = await _profile(node.url, name="MIRA")  # by the account's name
    assert profile.found and profile.player == guest and profile.name == "Mira"
    assert code in [line.code for line in profile.races]

    # the account's session speaks for that player, the guest's tokens for nobody
    welcome = await _hello(node.url, token=made.body["token"])
    assert welcome.type == "welcome", welcome
    assert welcome.player == guest and welcome.account == "Mira"
    for old in (token, token.removeprefix("g1.")):
        refused = await _hello(node.url, token=old)
        assert refused.type == "error" and refused.error == "bad_token", refused
        assert "sign in" in refused.message

    # the guest cannot be taken over twice, under another name either
    again = await call(
        node,
        "POST",
        "/account/signup",
        {**basic("Mira Two", PASSWORD), "X-Guest-Token": token},
        address="203.0.113.5",
    )
    assert again.status == 409 and again.error == "guest_taken", again
    assert await count_rows(node) == (1, 1)


async def test_a_sign_up_with_a_bad_guest_token_changes_nothing(node: Any) -> None:
    signed = await call(node, "POST", "/account/signup", basic("Someone", PASSWORD))
    assert signed.status == 201
    guest = await Client.connect(node.url, name="Tamper")
    forged = guest.token[:-2] + ("AA" if not guest.token.endswith("AA") else "BB")
    await guest.close()
    for bad in ("g1.v1.garbage.sig", forged, signed.body["token"]):
        answer = await call(
            node,
            "POST",
            "/account/signup",
            {**basic("Tamper", PASSWORD), "X-Guest-Token": bad},
        )
        assert answer.status == 400 and answer.error == "bad_request", (bad, answer)
        assert "X-Guest-Token" in answer.body["message"]
    assert await count_rows(node) == (1, 1)
    welcome = await _hello(node.url, token=guest.token)  # the guest is still a guest
    assert welcome.type == "welcome" and welcome.player == guest.player
    assert welcome.account is None


async def test_a_guest_cannot_go_by_an_accounts_name(node: Any) -> None:
    made = await call(node, "POST", "/account/signup", basic("Alice", PASSWORD))
    assert made.status == 201
    for name in ("ALICE", "alice", " Alice "):
        refused = await _hello(node.url, name=name)
        assert refused.type == "error" and refused.error == "invalid", (name, refused)
        assert refused.message.startswith("name: belongs to an account: sign in"), refused
    mixed = await _hello(node.url, name="\u0430lice")  # a Cyrillic a
    assert mixed.type == "error" and mixed.error == "invalid"
    assert mixed.message.startswith("name: ")
    # a guest's token does not bring the name back
    other = await Client.connect(node.url, name="Alicia")
    assert other.welcome is not None and other.welcome.name == "Alicia"
    await other.close()
    renamed = await _hello(node.url, token=other.token, name="aLiCe")
    assert renamed.type == "error" and renamed.error == "invalid"
    assert "belongs to an account" in renamed.message
    assert await count_rows(node) == (1, 1)


async def test_the_profile_by_name_is_the_accounts_not_an_impostors(node: Any) -> None:
    # before the account exists, an impostor goes by the same name as the real player
    alice = await Client.connect(node.url, name="Alice")
    impostor = await Client.connect(node.url, name="ALICE")
    code = await _race(alice, impostor)
    await alice.close()
    alone = await _race(impostor)  # the impostor finishes last, in an unrated race
    await impostor.close()
    await _in_profile(node.url, impostor.player, alone)
    await _in_profile(node.url, alice.player, code)
    unknown = await _profile(node.url, name="alice")
    assert not unknown.found  # no account of that name: a guest is found by its id only

    made = await call(
        node, "POST", "/account/signup", {**basic("Alice", PASSWORD), "X-Guest-Token": alice.token}
    )
    assert made.status == 201, made
    for name in ("alice", "ALICE", "Alice"):
        found = await _profile(node.url, name=name)
        assert found.found and found.player == alice.player, (name, found)
        assert found.name == "Alice"
    by_id = await _profile(node.url, player=impostor.player)  # a guest's, by its id
    assert by_id.found and by_id.player == impostor.player
    # the impostor's token now cannot keep the name
    refused = await _hello(node.url, token=impostor.token)
    assert refused.type == "error" and "belongs to an account" in refused.message
