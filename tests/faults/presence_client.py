"""A player as its own process, for the presence demonstration (``test_presence_deploy``):
a client of the library that connects to ``URL``, creates a race (``--create N``: for N
players) or joins one (``--join CODE``), and then does what its standard input says, one
command a line: ``ready``, ``move`` (once the deal is out: deals while it can, else
its first legal move),
``resign``. On standard output, one JSON object a line: ``{"player": id}``, ``{"code":
code}`` once in a race, ``{"ok": command}`` after each command, and every ``away``,
``back`` and ``finished`` event and every ``progress`` of a game that is over, as
``{"event": type, "player": ..., ...}``. With ``--token`` it comes back as that player
(``{"player": id, "token": ..., "node": ...}`` says who and where it is); a race it
creates has the ``away_grace`` of ``--grace`` (default 10 s).

Run: ``python -m tests.faults.presence_client URL NAME (--create N | --join CODE)
[--token TOKEN] [--grace SECONDS]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from spider_client import Client
from spider_client import protocol as p

OVER = {"won", "stuck", "resigned", "left", "abandoned", "idle", "timeout"}


def say(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


async def watch(client: Client) -> None:
    async for event in client.events():
        if isinstance(event, p.Away):
            say(event="away", player=event.player, since=event.since, version=event.version)
        elif isinstance(event, p.Back):
            say(event="back", player=event.player, away=event.away, version=event.version)
        elif isinstance(event, p.Progress) and event.player.status in OVER:
            info = event.player
            say(event="progress", player=info.player, status=info.status, version=event.version)
        elif isinstance(event, p.Finished):
            results = {r.player: r.status for r in event.results}
            say(event="finished", results=results, version=event.version)


async def main(
    url: str, name: str, create: int | None, join: str | None, token: str | None, grace: int
) -> None:
    # no race affinity: each player stays on the node the balancer gave its first
    # connection, so the demonstration's race spreads over both nodes
    client = await Client.connect(
        url,
        name=None if token else name,
        token=token,
        backoff_initial=0.05,
        backoff_max=0.5,
        affinity=False,
    )
    say(player=client.player, token=client.token, node=client.node)
    if create is not None:
        code = await client.create_race(
            variant="spider4", countdown=0, max_players=create, time_limit=600, away_grace=grace
        )
    else:
        assert join is not None
        await client.join(join)
        code = join
    say(code=code)
    watching = asyncio.create_task(watch(client))
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        command = line.strip()
        if not command:
            break
        if command == "ready":
            await client.ready()
        elif command == "move":  # once the deal is out
            await client.wait_until(lambda c: c.view is not None, timeout=60)
            moves = client.legal_moves()
            await client.move("+" if "+" in moves else moves[0])
        elif command == "resign":
            await client.resign()
        say(ok=command)
    watching.cancel()
    await client.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("name")
    parser.add_argument("--create", type=int)
    parser.add_argument("--join")
    parser.add_argument("--token")
    parser.add_argument("--grace", type=int, default=10)
    args = parser.parse_args()
    asyncio.run(main(args.url, args.name, args.create, args.join, args.token, args.grace))
