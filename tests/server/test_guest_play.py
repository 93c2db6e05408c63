"""Guests race casual races only, on a real node that keeps accounts (Valkey, PostgreSQL,
websockets on loopback): a guest may not create, join or queue for a rated race (it may
watch one), quick match puts guests in a casual pool (an account may queue there too),
a race in it moves no rating, a guest's profile says it is a guest, and hellos with a
token from one address are bounded before the database is asked."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from spider_client import AccountRequired
from spider_client import Client as Library
from spider_client import protocol as p

from .account_helpers import ACCOUNT_SETTINGS, account_token
from .clocks import TestClock
from .server_helpers import Client

BASE: dict[str, Any] = {"variant": "spider1", "max_players": 4, "time_limit": 600, "undo": True,
                        "live_boards": False, "countdown": 3}  # fmt: skip
MATCH = {"match_wait": 3.0, "match_gather": 0.5, "match_turn": 0.05, "match_countdown": 1}


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any) -> Any:
    return await server_node(
        redis_server.url, database_url=pg_database.url, **ACCOUNT_SETTINGS, **MATCH
    )


async def _my_races(c: Client) -> list[str]:
    reply = await c.request(p.MyRaces(req=0), "my_races_reply")
    return [r.code for r in reply.races]


async def test_a_guest_neither_creates_nor_joins_a_rated_race_but_may_watch_one(
    node: Any,
) -> None:
    guest = await Client.connect(node.url, name="Gwen")
    ada = await Client.connect(node.url, name=None, token=await account_token(node, "Ada"))
    try:
        made = await guest.request(
            p.CreateRace(req=0, variant="spider1", rated=True), ("joined", "error")
        )
        assert made.type == "error" and made.error == "account_required", made
        assert "sign up or sign in" in made.message
        assert await _my_races(guest) == []  # nothing made
        casual = await guest.create(variant="spider1")  # a casual race: fine
        assert casual.race.rated is False

        code = (await ada.create(variant="spider1", rated=True)).race.code
        refused = await guest.request(p.Join(req=0, code=code, role="player"), ("joined", "error"))
        assert refused.type == "error" and refused.error == "account_required", refused
        watching = await guest.request(
            p.Join(req=0, code=code, role="spectator"), ("joined", "error")
        )
        assert watching.type == "joined" and watching.race.rated
        assert [e.player for e in watching.race.players] == [ada.player]  # not in it
    finally:
        await guest.close()
        await ada.close()


async def _finish(*clients: Library) -> None:
    """Every client makes a move once its race runs (a race nobody played is an abort),
    then resigns."""
    for c in clients:
        await c.wait_until(lambda c: c.view is not None, timeout=20)
        await c.move(c.legal_moves()[0])
    for c in clients:
        await c.resign()
    for c in clients:
        await c.wait_until(lambda c: c.finished, timeout=20)


async def test_guests_queue_casual_and_accounts_rated(node: Any) -> None:
    tokens = [await account_token(node, n, address=f"198.51.100.{i}") for i, n in
              enumerate(["Ada", "Bea", "Cai"], 1)]  # fmt: skip
    async with (
        await Library.connect(node.url, name="Gus") as gus,
        await Library.connect(node.url, name="Gia") as gia,
        await Library.connect(node.url, token=tokens[0]) as ada,
        await Library.connect(node.url, token=tokens[1]) as bea,
    ):
        with pytest.raises(AccountRequired):  # a guest asking for the rated pool
            await gus.quick_match("spider1", rated=True, timeout=10)
        # by default: guests casual, accounts rated, each pool its own race
        codes = await asyncio.wait_for(
            asyncio.gather(*(c.quick_match("spider1") for c in (gus, gia, ada, bea))), 30
        )
        assert codes[0] == codes[1] and codes[2] == codes[3] and codes[0] != codes[2]
        assert gus.race is not None and gus.race.rated is False
        assert {pl.player for pl in gus.race.players} == {gus.player, gia.player}
        assert all(pl.guest for pl in gus.race.players)
        assert ada.race is not None and ada.race.rated is True
        await _finish(gus, gia, ada, bea)
        casual = await gus.rating_changes(codes[0], timeout=20)
        assert casual.applied and casual.changes == []  # a casual race moves no rating
        rated = await ada.rating_changes(codes[2], timeout=20)
        assert rated.applied and {c.player for c in rated.changes} == {ada.player, bea.player}

        # no guest on the ladder (nor the accounts yet: one race leaves a rating
        # provisional, and provisional ratings are on no ladder); a guest's profile says so
        ladder = await ada.rating_leaderboard("spider1")
        assert ladder.entries == [] and ladder.me is None
        shown = await ada.profile(gus.player)
        assert shown.found and shown.guest and shown.variants[0].rated == 0
        assert (await gus.profile(ada.player)).guest is False
        assert (await gus.profile()).guest is True

    # an account may race casual too, with guests: no rating moves
    async with (
        await Library.connect(node.url, name="Gil") as gil,
        await Library.connect(node.url, token=tokens[2]) as cai,
    ):
        codes = await asyncio.wait_for(
            asyncio.gather(gil.quick_match("spider1"), cai.quick_match("spider1", rated=False)),
            30,
        )
        assert codes[0] == codes[1] and cai.race is not None and not cai.race.rated
        guests = {pl.player: pl.guest for pl in cai.race.players}
        assert guests == {gil.player: True, cai.player: False}
        await _finish(gil, cai)
        assert (await cai.rating_changes(codes[0], timeout=20)).changes == []


async def test_hellos_with_a_token_from_one_address_stop_at_their_limit(
    pg_database: Any, server_node: Any, redis_server: Any
) -> None:
    clock = TestClock()
    node = await server_node(
        redis_server.url, database_url=pg_database.url, clock=clock, address_returns=3
    )
    first = await Client.connect(node.url, name="Rae")
    token = first.token
    await first.close()
    for _ in range(3):
        back = await Client.connect(node.url, name=None, token=token)
        assert back.player == first.player
        await back.close()
    late = await Client.connect(node.url, hello=False)
    await late.send(p.Hello(token=token))
    refused = await late.expect("error")
    assert refused.error == "rate_limited" and refused.retry_after == 20, refused
    with pytest.raises(ConnectionClosed) as closed:
        await late.ws.recv()
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
    assert closed.value.rcvd.reason.startswith("retry after 20 s")
    # a new player is not a return: still let in (its own limit), and the bucket refills
    fresh = await Client.connect(node.url, name="Ned")
    await fresh.close()
    clock.move(20)
    again = await Client.connect(node.url, name=None, token=token)
    assert again.player == first.player
    await again.close()


# -- the rules, pure: a race from before accounts with a guest in it ---------------------------


def test_a_rated_race_from_before_with_a_guest_rematches_casual_and_rates_no_guest() -> None:
    from dataclasses import replace

    from spider_server import race as rules
    from spider_server.race.model import RaceState, RematchState
    from spider_server.race.ratings import Placing, settle

    options = rules.RaceOptions(**BASE, rated=True)
    made = rules.create_race(code="OLD01", options=options, creator="pa", name="Ann", now=1.0)
    joined = rules.join(made.race, "pb", "Bob", 2.0)
    assert joined is not None
    # Bob played it as a guest before rated races were for accounts only
    race = replace(
        joined.race,
        state=RaceState.FINISHED,
        players={**joined.race.players, "pb": replace(joined.race.players["pb"], guest=True)},
        rematch=RematchState(accepted=["pa", "pb"], deadline=99.0),
    )
    again = rules.rematch_race(race, "NEW01", 3.0)
    assert again.race.options.rated is False  # casual: a guest is in it
    assert again.race.players["pb"].guest and not again.race.players["pa"].guest
    signed_up = rules.rematch_race(race, "NEW02", 3.0, accounts={"pb"})
    assert signed_up.race.options.rated is True  # Bob signed up since: accounts only

    placings = [
        Placing(player="pa", name="Ann", rank=1, status="won", time=10.0, moves=80),
        Placing(player="pb", name="Bob", rank=2, status="resigned", time=None, guest=True, moves=9),
        Placing(player="pc", name="Cy", rank=3, status="resigned", time=None, moves=4),
    ]
    out = settle(code="OLD01", variant="spider1", rated=True, placings=placings, records={},
                 now=5.0)  # fmt: skip
    assert {c.player for c in out.changes} == {"pa", "pc"}  # the guest is left out
    assert out.lines["pb"].rated is False and out.lines["pa"].rated is True
    guest = next(r for r in out.records if r.player == "pb")
    assert guest.variants["spider1"].rated == 0 and guest.variants["spider1"].played == 1


def test_a_guest_is_refused_by_the_rules_of_a_rated_race() -> None:
    from spider_server import race as rules
    from spider_server.errors import AccountRequired

    options = rules.RaceOptions(**BASE, rated=True)
    with pytest.raises(AccountRequired):
        rules.create_race(code="R0001", options=options, creator="g", name="G", now=1.0,
                          guest=True)  # fmt: skip
    made = rules.create_race(code="R0002", options=options, creator="a", name="A", now=1.0)
    with pytest.raises(AccountRequired):
        rules.join(made.race, "g", "G", 2.0, guest=True)
    casual = rules.create_race(code="R0003", options=rules.RaceOptions(**BASE),
                               creator="g", name="G", now=1.0, guest=True)  # fmt: skip
    assert casual.race.players["g"].guest
