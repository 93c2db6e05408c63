"""Bot accounts on a real node, Valkey and PostgreSQL: the upgrade (one way, refused to an
account with rated races as a human), an account's kind as its hello's ``bot`` whatever it
says, humans-only races, the bot:play scope, and the ladders kept apart: the attack of a
player farming a rating as a bot, then racing as a human to top the humans' ladder."""

from __future__ import annotations

import asyncio
from typing import Any

import msgpack
import pytest

from spider_client import protocol as p
from spider_server.race.ratings import MODEL, Record, VariantRecord, in_pool
from spider_server.store import keys

from .account_helpers import ACCOUNT_SETTINGS, basic, bearer, call
from .clocks import TestClock
from .server_helpers import TIMEOUT, Client, Player
from .test_api_tokens import hello, new_token, sign_up
from .test_archive_reads import archive_all


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


async def upgrade(node: Any, session: str) -> Any:
    return await call(node, "POST", "/account/upgrade-to-bot", bearer(session))


async def settled(node: Any, *accounts: dict[str, Any], bot: bool) -> None:
    """Give each account's player (a sign-up's answer) a spider1 rating settled by many
    races before, in the pool of ``bot``: a provisional rating stands on no ladder."""
    for account in accounts:
        player = account["player"]
        record = Record(player=player, version=1, name=account["name"], bot=bot,
                        variants={"spider1": VariantRecord(mu=25.0, sigma=2.0, rated=30)})  # fmt: skip
        await node.node.redis.hset(
            keys.record(player), mapping={"v": 1, "d": msgpack.packb(record.fields())}
        )


RATED = {"variant": "spider1", "rated": True, "public": True, "time_limit": 600, "countdown": 3}
"""A rated race's terms (docs/spec/rules.md, *Rated races*)."""


async def rated_race(winner: Client, loser: Client, clock: TestClock) -> str:
    """A rated spider1 race of the two, finished: each makes a move (a race nobody played
    is an abort, unrated), then the loser resigns first."""
    code = (await winner.create(**RATED)).race.code
    await loser.join(code)
    await winner.ready(code)
    await loser.ready(code)
    clock.move(RATED["countdown"])
    players = [Player(c, code, (await c.expect("ack", lambda m: m.seq == 0)).view, seed=i)
               for i, c in enumerate((winner, loser))]  # fmt: skip
    for pl in players:
        await pl.step()
    await players[1].resign()
    await players[0].resign()
    await winner.expect("finished", lambda m: m.race == code)
    return code


async def ladder(client: Client, pool: str) -> dict[str, int]:
    reply = await client.request(
        p.RatingLeaderboard(req=0, variant="spider1", pool=pool),  # type: ignore[arg-type]
        ("rating_leaderboard_reply", "error"),
    )
    assert reply.type == "rating_leaderboard_reply", reply
    return {e.player: e.rating for e in reply.entries}


async def wait_for_ladder(client: Client, pool: str, players: set[str]) -> dict[str, int]:
    """The pool's ladder once it holds ``players`` (the finish's ratings are written
    after the race's last event)."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            found = await ladder(client, pool)
            if players <= set(found):
                return found
            await asyncio.sleep(0.05)


def test_a_record_racing_in_the_other_pool_starts_afresh() -> None:
    rated = VariantRecord(mu=40.0, sigma=3.0, rated=14, played=14, won=14, history=[(1.0, 2252)])
    bot = Record(player="p1", bot=True, variants={"spider1": rated})
    human = in_pool(bot, False)
    vr = human.variants["spider1"]
    assert not human.bot
    assert (vr.mu, vr.sigma, vr.rated, vr.history) == (MODEL.mu, MODEL.sigma, 0, [])
    assert vr.played == 14 and vr.won == 14  # the counts are the player's
    assert in_pool(bot, True) == bot
    unrated = Record(player="p2", variants={"spider1": VariantRecord(played=3)})
    assert in_pool(unrated, True).variants == unrated.variants


async def test_the_ladders_are_kept_apart(node: Any, clock: TestClock) -> None:
    bot_a, bot_b = await sign_up(node, "Botty"), await sign_up(node, "Botalt")
    human_a, human_b = await sign_up(node, "Hugo"), await sign_up(node, "Hana")
    for bot in (bot_a, bot_b):
        up = await upgrade(node, bot["token"])
        assert up.status == 200 and up.body["bot"] is True, up
        me = await call(node, "GET", "/account/me", bearer(bot["token"]))
        assert me.body["bot"] is True
    made = await new_token(node, bot_a["token"], "bot:play", "ladder bot")
    assert made.status == 201, made
    # the bot's token says it is no bot: its account's kind stands
    farmer, welcome = await hello(node.url, made.body["token"], bot=False)
    alt = await Client.connect(node.url, token=bot_b["token"])
    hugo = await Client.connect(node.url, token=human_a["token"])
    hana = await Client.connect(node.url, token=human_b["token"])
    try:
        assert welcome.type == "welcome" and welcome.player == bot_a["player"]
        await settled(node, bot_a, bot_b, bot=True)
        await settled(node, human_a, human_b, bot=False)
        for _ in range(2):  # farming against its own alt
            await rated_race(farmer, alt, clock)
        code = await rated_race(hana, hugo, clock)
        # the farmer may not race the human who won rated (one kind to a rated race)...
        rated = (await hana.create(**RATED)).race.code
        refused = await farmer.request(p.Join(req=0, code=rated))
        assert refused.type == "error" and refused.error == "other_kind", refused
        await hana.request(p.Leave(req=0, code=rated))
        # ...and in a casual race it is a bot there too, whatever it said
        mixed = (await hana.create(variant="spider1", countdown=0)).race.code
        joined = await farmer.request(p.Join(req=0, code=mixed))
        assert joined.type == "joined", joined
        me = next(pl for pl in joined.race.players if pl.player == bot_a["player"])
        assert me.bot is True
        await hana.request(p.Leave(req=0, code=mixed))

        bots = await wait_for_ladder(farmer, "bots", {bot_a["player"], bot_b["player"]})
        humans = await wait_for_ladder(hugo, "humans", {human_a["player"], human_b["player"]})
        assert {human_a["player"], human_b["player"]}.isdisjoint(bots)
        assert {bot_a["player"], bot_b["player"]}.isdisjoint(humans)
        assert code

        # a humans-only race admits the humans and guests not saying bot, not the bot
        only = (await hugo.create(variant="spider1", humans_only=True)).race.code
        refused = await farmer.request(p.Join(req=0, code=only))
        assert refused.type == "error" and refused.error == "humans_only", refused
        guest = await Client.connect(node.url, name="visitor")
        try:
            assert (await guest.request(p.Join(req=0, code=only))).type == "joined"
        finally:
            await guest.close()

        # a human who raced rated may not become a bot (nor while the race is not
        # recorded yet); a bot stays one
        wait = await upgrade(node, human_a["token"])
        assert wait.status == 409 and wait.error == "in_race", wait
        assert (await hugo.request(p.Leave(req=0, code=only))).type == "done"
        await archive_all(node, clock)
        no = await upgrade(node, human_a["token"])
        assert no.status == 409 and no.error == "rated_human", no
        me = await call(node, "GET", "/account/me", bearer(human_a["token"]))
        assert me.body["bot"] is False
        again = await upgrade(node, bot_a["token"])
        assert again.status == 200 and again.body["bot"] is True
    finally:
        for c in (farmer, alt, hugo, hana):
            await c.close()


async def test_a_guest_declares_itself_a_bot(node: Any) -> None:
    client = await Client.connect(node.url, hello=False)
    try:
        await client.send(p.Hello(name="guestbot", bot=True))
        assert (await client.expect("welcome")).account is None
        code = (await client.create(variant="spider1")).race.code
        race = (await client.request(p.Join(req=0, code=code))).race
        assert [pl.bot for pl in race.players] == [True]
        await client.request(p.Leave(req=0, code=code))
        # its quick match: the bots' casual pool (a guest races no rated race)
        queued = await client.request(p.QuickMatch(req=0, variant="spider1"), ("queued", "error"))
        assert queued.type == "queued" and queued.pool.endswith(":bots:casual"), queued
        rated = await client.request(
            p.QuickMatch(req=0, variant="spider1", rated=True), ("queued", "error")
        )
        assert rated.type == "error" and rated.error == "account_required", rated
    finally:
        await client.close()


async def test_bot_play_is_for_bot_accounts_and_allows_everything(node: Any) -> None:
    human = await sign_up(node, "Hugo")
    refused = await new_token(node, human["token"], "bot:play")
    assert refused.status == 400 and "bot accounts" in refused.body["message"]
    bot = await sign_up(node, "Robo")
    assert (await upgrade(node, bot["token"])).status == 200
    made = await new_token(node, bot["token"], "bot:play")
    client, welcome = await hello(node.url, made.body["token"], bot=True)
    try:
        assert welcome.type == "welcome"
        code = (await client.create(variant="spider1", countdown=0)).race.code
        queued = await client.request(p.QuickMatch(req=0, variant="spider1"), ("queued", "error"))
        assert queued.type == "queued" and queued.pool.endswith(":bots"), queued  # rated
        done = await client.request(p.CancelMatch(req=0))
        assert done.type == "done"
        await client.ready(code)
        assert (await client.move(code, 1, "+")).type in ("ack", "error")
        listed = await client.request(p.MyRaces(req=0), ("my_races_reply", "error"))
        assert listed.type == "my_races_reply"
    finally:
        await client.close()
    sign_in = await call(
        node, "POST", "/account/signin", basic("Robo", "correct horse battery staple")
    )
    assert sign_in.status == 200
