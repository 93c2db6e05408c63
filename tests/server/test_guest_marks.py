"""Guests marked on the wire, end to end on a real node, Valkey and PostgreSQL: every
player entry of a guest (a player without an account) says ``guest`` (the race's players,
``player_joined``, ``progress``, the results, a finished race's snapshot, the lobby's
``creator_guest``), an account's entries do not; a guest's bot is a guest; a quick match
and a rematch carry the mark, and a guest who signed up since is no guest in the rematch
while the old race keeps what it was; a server without accounts marks nobody."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from spider_client import Client as Library
from spider_client import protocol as p
from tests.leakscan import LeakScanner

from .account_helpers import ACCOUNT_SETTINGS, basic, call
from .server_helpers import Client, Player

PASSWORD = "correct horse battery staple"
OPTIONS: dict[str, Any] = {"variant": "spider1", "countdown": 0}
MATCH = {"match_wait": 3.0, "match_gather": 0.5, "match_turn": 0.05, "match_countdown": 1}


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any) -> Any:
    return await server_node(
        redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS, **MATCH
    )


async def _account(node: Any, name: str, **headers: str) -> str:
    """Sign ``name`` up; its session token."""
    made = await call(node, "POST", "/account/signup", {**basic(name, PASSWORD), **headers})
    assert made.status == 201, made
    return str(made.body["token"])


async def _signed_in(node: Any, token: str, name: str) -> Client:
    client = await Client.connect(node.url, name=None, token=token, label=name)
    assert client.welcome is not None and client.welcome.account == name
    return client


def _marks(players: list[Any]) -> dict[str, bool]:
    return {pl.name: pl.guest for pl in players}


def _no_leaks(*clients: tuple[Client, str]) -> None:
    scanner = LeakScanner(OPTIONS["variant"])
    for client, role in clients:
        scanner.feed_all(client.label or client.player, role, client.frames)
    assert scanner.leaks == []


async def test_the_guest_is_marked_in_every_frame_about_its_race(node: Any) -> None:
    ada = await _signed_in(node, await _account(node, "Ada"), "Ada")
    alice = await Client.connect(node.url, name="alice", label="alice")
    assert alice.welcome is not None and alice.welcome.account is None
    lobby = await Client.connect(node.url, name="onlooker", label="lobby")
    listed = await lobby.request(p.OpenRaces(req=0, watch=True), ("open_race_list",))
    assert listed.races == []

    # the lobby's open races: the creator's mark
    by_guest = (await alice.create(public=True, **OPTIONS)).race.code
    by_account = (await ada.create(public=True, **OPTIONS)).race.code
    for code, guest in ((by_guest, True), (by_account, False)):
        event = await lobby.expect("open_race", lambda m, c=code: m.code == c and m.race)
        assert event.race.creator_guest is guest, event
    listed = await lobby.request(p.OpenRaces(req=0), ("open_race_list",))
    assert {r.code: r.creator_guest for r in listed.races} == {by_guest: True, by_account: False}

    # the guest joins the account's race: every player entry says who is a guest
    joined = await alice.join(by_account)
    assert _marks(joined.race.players) == {"Ada": False, "alice": True}
    heard = await ada.expect("player_joined", lambda m: m.player.player == alice.player)
    assert heard.player.guest is True
    watcher = await Client.connect(node.url, name="watcher", label="watcher")
    watched = await watcher.join(by_account, role="spectator")
    assert _marks(watched.race.players) == {"Ada": False, "alice": True}

    for c in (ada, alice):
        await c.ready(by_account)
    view = (await ada.expect("ack", lambda m: m.seq == 0 and m.code == by_account)).view
    await alice.expect("ack", lambda m: m.seq == 0 and m.code == by_account)
    player = Player(ada, by_account, view)
    for _ in range(3):
        if player.pick() is None:
            break
        await player.step()
    await alice.send(p.Resign(code=by_account, seq=1))
    await player.resign()
    finished = await watcher.expect("finished", lambda m: m.race == by_account)
    assert _marks(finished.results) == {"Ada": False, "alice": True}

    progress = [e for e in watcher.events("progress") if e.race == by_account]
    assert {e.player.name for e in progress} == {"Ada", "alice"}
    for e in progress:
        assert e.player.guest is (e.player.player == alice.player), e
    # a finished race's snapshot (read again from Redis) keeps the marks
    again = await lobby.join(by_account, role="spectator")
    assert _marks(again.race.players) == {"Ada": False, "alice": True}
    assert again.race.results is not None
    assert _marks(again.race.results) == {"Ada": False, "alice": True}
    _no_leaks((ada, "player"), (alice, "player"), (watcher, "spectator"))
    for c in (ada, alice, lobby, watcher):
        await c.close()


async def test_a_guests_bot_is_a_guest_and_an_accounts_bot_is_not(node: Any) -> None:
    token = await _account(node, "Robo Owner")
    upgraded = await call(
        node, "POST", "/account/upgrade-to-bot", {"Authorization": f"Bearer {token}"}
    )
    assert upgraded.status == 200, upgraded  # only a bot account plays as a bot
    owned = await Library.connect(node.url, token=token, bot=True)
    stray = await Library.connect(node.url, name="stray", bot=True)
    try:
        code = await owned.create_race(**OPTIONS)
        await stray.join(code)
        race = stray.race
        assert race is not None
        assert {pl.player: (pl.bot, pl.guest) for pl in race.players} == {
            owned.player: (True, False),
            stray.player: (True, True),
        }
    finally:
        await owned.close()
        await stray.close()


async def test_a_quick_match_marks_its_guest(node: Any) -> None:
    """An account who asks for the casual pool is matched with a guest there."""
    token = await _account(node, "Quinn")
    account = await Library.connect(node.url, token=token)
    guest = await Library.connect(node.url, name="quick guest")
    try:
        codes = await asyncio.wait_for(
            asyncio.gather(
                account.quick_match("spider1", rated=False), guest.quick_match("spider1")
            ),
            20,
        )
        assert codes[0] == codes[1]
        race = account.race
        assert race is not None and race.quick
        assert {pl.player: pl.guest for pl in race.players} == {
            account.player: False,
            guest.player: True,
        }
    finally:
        await account.close()
        await guest.close()


async def test_a_guest_who_signed_up_is_no_guest_in_the_rematch(node: Any) -> None:
    ada = await _signed_in(node, await _account(node, "Ada"), "Ada")
    mira = await Client.connect(node.url, name="Mira", label="mira")
    code = (await ada.create(**OPTIONS)).race.code
    await mira.join(code)
    for c in (ada, mira):
        await c.ready(code)
    for c in (ada, mira):
        await c.expect("ack", lambda m: m.seq == 0)
        await c.send(p.Resign(code=code, seq=1))
    finished = await ada.expect("finished", lambda m: m.race == code)
    assert _marks(finished.results) == {"Ada": False, "Mira": True}

    # Mira signs up from her guest's token: the account races as her player from now on
    await _account(node, "Mira", **{"X-Guest-Token": mira.token})
    for c in (ada, mira):
        reply = await c.request(p.Rematch(req=0, code=code))
        assert reply.type == "done", reply
    offer = await ada.expect("rematch_offer", lambda m: m.code is not None)
    rematch = await ada.join(offer.code)
    assert _marks(rematch.race.players) == {"Ada": False, "Mira": False}
    old = await ada.join(code, role="spectator")  # the old race keeps what it was
    assert old.race.results is not None
    assert _marks(old.race.results) == {"Ada": False, "Mira": True}
    for c in (ada, mira):
        await c.close()


async def test_a_server_without_accounts_marks_nobody(redis_server: Any, server_node: Any) -> None:
    node = await server_node(redis_server.url)
    a = await Client.connect(node.url, name="alice")
    b = await Client.connect(node.url, name="bob")
    code = (await a.create(public=True, **OPTIONS)).race.code
    joined = await b.join(code)
    assert _marks(joined.race.players) == {"alice": False, "bob": False}
    listed = await b.request(p.OpenRaces(req=0), ("open_race_list",))
    assert [(r.code, r.creator_guest) for r in listed.races] == [(code, False)]
    await a.close()
    await b.close()
