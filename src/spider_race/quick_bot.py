"""``spider-race bot --quick VARIANT``: a bot on the quick-match ladder: it queues, plays
the race it is matched into, and queues again, ``games`` times (0: until stopped)."""

from __future__ import annotations

import contextlib
import sys
from typing import TextIO

from spider_client import Client, GameOver, WrongState, make_bot, play_race

__all__ = ["run_quick_bot"]


async def run_quick_bot(
    url: str | list[str],
    variant: str,
    *,
    strategy: str = "greedy",
    name: str | None = None,
    games: int = 1,
    token: str | None = None,
    out: TextIO | None = None,
) -> int:
    """Queue for quick matches of ``variant`` as a bot (``hello`` says so) and play each
    with a ``strategy`` bot; one line per game: code, status, runs, moves. ``url``: one
    server, or several tried in turn (a list, or URLs separated by commas), so that the bot
    moves to another node when its node goes away. ``token``: the player it plays as (an
    account's session), else a new guest named ``name``. Returns the exit status."""
    out = out or sys.stdout
    if isinstance(url, str) and "," in url:
        url = [u.strip() for u in url.split(",") if u.strip()]
    played = 0
    hello = name or f"{strategy} bot"
    async with await Client.connect(url, name=hello, token=token, bot=True) as client:
        while games == 0 or played < games:
            code = await client.quick_match(variant)
            await play_race(client, make_bot(strategy), ready=False, until="game")
            me = client.me
            if me is not None:
                print(f"{code} {me.status} runs={me.runs} moves={me.moves}", file=out, flush=True)
            with contextlib.suppress(GameOver, WrongState):  # the race may go on: leave it
                await client.leave()
            played += 1
    return 0
