"""Redis is killed with SIGKILL mid-race and comes back after a 5-second outage."""

from __future__ import annotations

import asyncio
import time
import urllib.error
import urllib.request

import pytest
from redis import Redis

from spider_client import protocol as p
from tests.faults.fault_helpers import FAST_ENV, LINE
from tests.server.server_helpers import Client, start_race


def _health(url: str) -> int:
    """``/readyz``'s status (readiness follows Redis; liveness, ``/healthz``, does not)."""
    try:
        with urllib.request.urlopen(url + "/readyz", timeout=5) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


@pytest.fixture
def redis_always(tmp_path):
    """A Redis that writes every change to disk before answering it."""
    from spider_server.embedded import RedisProcess

    proc = RedisProcess(tmp_path / "redis-always", appendfsync="always")
    proc.start()
    yield proc
    proc.kill()


async def test_redis_sigkill_and_a_5_second_outage(redis_always, server_process) -> None:
    node = await server_process(redis_always.url, **FAST_ENV)
    code, players, (w,) = await start_race(
        node.url, players=3, spectators=1, variant=LINE.variant, seed=LINE.seed, time_limit=600
    )
    seqs = {c.player: 0 for c in players}
    acked: dict[str, list[str]] = {c.player: [] for c in players}

    async def move(c: Client) -> p.Ack | p.Error:
        n = seqs[c.player] + 1
        opening = list(LINE.opening)
        text = (
            opening[n - 1]
            if n <= len(opening)
            else (LINE.there, LINE.back)[(n - len(opening) - 1) % 2]
        )
        reply = await c.move(code, n, text)
        if reply.type == "ack":
            seqs[c.player] = n
            acked[c.player].append(reply.move)
        return reply

    async def flat_out(c: Client, stop: asyncio.Event) -> None:
        while not stop.is_set():
            reply = await move(c)
            if reply.type == "error":
                return

    stop = asyncio.Event()
    runs = [asyncio.create_task(flat_out(c, stop)) for c in players]
    await asyncio.sleep(0.5)
    redis_always.kill()  # SIGKILL while moves are in flight
    killed = time.monotonic()
    stop.set()
    await asyncio.gather(*runs)
    assert all(seqs[c.player] > 5 for c in players)

    # while Redis is away: every move gets "unavailable" within a second, /readyz is 503
    waits = []
    while time.monotonic() - killed < 5.0:
        for c in players:
            started = time.monotonic()
            reply = await move(c)
            waits.append(time.monotonic() - started)
            assert reply.type == "error" and reply.error == "unavailable", reply
        assert await asyncio.to_thread(_health, node.http_url) == 503
        await asyncio.sleep(0.2)
    assert max(waits) < 1.0, waits

    await asyncio.to_thread(redis_always.start)
    # the first move after Redis is back succeeds, for everyone
    for c in players:
        assert (await move(c)).type == "ack"
    assert await asyncio.to_thread(_health, node.http_url) == 200

    # nothing acknowledged was lost (appendfsync always), nothing applied twice
    r = Redis.from_url(redis_always.url)
    for c in players:
        actions = [a.decode() for a in r.lrange(f"{{race:{code}}}:actions:{c.player}", 0, -1)]
        assert actions == acked[c.player]
        assert int(r.hget(f"{{race:{code}}}:game:{c.player}", "seq")) == seqs[c.player]
    r.close()
    # the spectator is caught up with every player's last move
    for c in players:
        await w.expect(
            "progress",
            lambda m, c=c: m.player.player == c.player and m.player.moves == seqs[c.player],
            timeout=10,
        )
