"""The commits' own pipelined connection to a real Redis: replies in order, error replies
in their place, a lost connection fails what waits and the next batch connects again."""

from __future__ import annotations

import asyncio

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, ResponseError

from spider_server.store.redisconn import CommandLink, connect


@pytest.fixture
async def link(redis_server):
    redis = connect(redis_server.url)
    link = CommandLink(redis)
    yield link
    await link.aclose()
    await redis.aclose()


async def test_replies_come_in_order_with_errors_in_their_place(link) -> None:
    replies = await link.run(
        [
            ("SET", "k", "1"),
            ("INCR", "k"),
            ("EVALSHA", "0" * 40, 0),  # no such script
            ("HSET", "k", "f", "v"),  # a string, not a hash
            ("GET", "k"),
        ]
    )
    assert replies[:2] == [b"OK", 2]
    assert isinstance(replies[2], NoScriptError)
    assert isinstance(replies[3], ResponseError)
    assert replies[4] == b"2"


async def test_batches_sent_at_once_each_get_their_own_replies(link) -> None:
    batches = [[("INCR", "n"), ("INCR", f"b{i}")] * 3 for i in range(50)]
    results = await asyncio.gather(*(link.run(b) for b in batches))
    counts = [r[0::2] for r in results]
    # Redis ran the batches whole and in the order they were sent
    assert [c for batch in counts for c in batch] == list(range(1, 151))
    assert all(r[1::2] == [1, 2, 3] for r in results)


async def test_a_lost_connection_fails_what_waits_and_the_link_connects_again(
    link, redis_server
) -> None:
    assert await link.run([("SET", "x", "1")]) == [b"OK"]
    waiting = asyncio.ensure_future(link.run([("BLPOP", "nothing", 0)]))
    await asyncio.sleep(0.1)
    redis_server.kill()
    (reply,) = await asyncio.wait_for(waiting, 5)
    assert isinstance(reply, RedisConnectionError)
    with pytest.raises(RedisConnectionError):  # Redis is away: refused at once
        await link.run([("PING",)])
    redis_server.restart()
    for _ in range(50):
        try:
            (pong,) = await link.run([("PING",)])
            break
        except RedisConnectionError:
            await asyncio.sleep(0.1)
    assert pong == b"PONG"


async def test_a_closed_link_refuses_commands(link) -> None:
    assert await link.run([("PING",)]) == [b"PONG"]
    await link.aclose()
    with pytest.raises(RedisConnectionError):
        await link.run([("PING",)])
