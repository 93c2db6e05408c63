"""Helpers of the fault tests: bots that move at full speed, and what Redis holds."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from redis import Redis

from spider_client import Client, SpiderClientError
from spider_client import protocol as p
from spider_race.bench_server import PingPong, find_ping_pong

FAST_ENV = {"SPIDER_RACE_RATE": "5000", "SPIDER_RACE_BURST": "5000"}
"""Environment of server processes for bots at full speed."""

LINE: PingPong = find_ping_pong()
"""A deal, an opening, and a move that can go back and forth for ever."""


@dataclass
class Racer:
    """A bot with the client library, keeping every ack it was given."""

    client: Client
    acks: list[p.Ack] = field(default_factory=list)
    errors: list[Exception] = field(default_factory=list)

    @property
    def player(self) -> str:
        assert self.client.player is not None
        return self.client.player

    async def move(self, move: str) -> p.Ack:
        ack = await self.client.move(move)
        self.acks.append(ack)
        return ack

    async def opening(self) -> None:
        for move in LINE.opening:
            await self.move(move)

    async def flat_out(self, stop: asyncio.Event, *, least: int = 0) -> None:
        """Move back and forth as fast as acks come, until ``stop`` (and ``least`` moves)."""
        k = 0
        while not stop.is_set() or k < least:
            try:
                await self.move(
                    LINE.there if len(self.acks) % 2 == len(LINE.opening) % 2 else LINE.back
                )
            except SpiderClientError as e:
                self.errors.append(e)
                raise
            k += 1


async def start_racers(
    urls: list[str] | str, count: int, **options: Any
) -> tuple[str, list[Racer]]:
    """``count`` bots in one race of the line's deal (countdown 0), each past the opening."""
    options.setdefault("backoff_initial", 0.02)
    options.setdefault("backoff_max", 0.2)
    racers = [Racer(await Client.connect(urls, name=f"bot{i}", **options)) for i in range(count)]
    code = await racers[0].client.create_race(
        variant=LINE.variant, seed=LINE.seed, countdown=0, max_players=count, time_limit=600
    )
    for r in racers[1:]:
        await r.client.join(code)
    for r in racers:
        await r.client.ready()
    for r in racers:
        await r.client.wait_until(lambda c: c.view is not None, timeout=20)
    await asyncio.gather(*(r.opening() for r in racers))
    return code, racers


def check_exactly_once(redis_url: str, code: str, racers: list[Racer]) -> dict[str, int]:
    """Every ack any bot got is in Redis, once: the player's action list holds, at each
    acked seq, the acked action (in either layout: alone, or with its time after it), and
    nothing past the last seq. Returns seq per player."""
    r = Redis.from_url(redis_url)
    try:
        seqs = {}
        for racer in racers:
            actions = [
                a.decode().partition(" ")[0]
                for a in r.lrange(f"{{race:{code}}}:actions:{racer.player}", 0, -1)
            ]
            seq = int(r.hget(f"{{race:{code}}}:game:{racer.player}", "seq") or 0)
            assert len(actions) == seq, (racer.player, len(actions), seq)
            acked = {}
            for ack in racer.acks:
                assert acked.setdefault(ack.seq, ack.move) == ack.move, ack
            for n, move in acked.items():
                assert actions[n - 1] == move, (racer.player, n, move, actions[n - 1])
            # acks came for 1..max with no gap: nothing was applied that no one heard of
            assert sorted(acked) == list(range(1, len(acked) + 1))
            assert seq == len(acked), (racer.player, seq, len(acked))
            seqs[racer.player] = seq
        return seqs
    finally:
        r.close()
