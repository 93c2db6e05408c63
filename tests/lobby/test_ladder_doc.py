"""The client guide's ladder bot, run exactly as written against a real node."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

GUIDE = Path(__file__).parents[2] / "docs" / "client.md"


def ladder_code() -> str:
    text = GUIDE.read_text()
    section = text[text.index("## A bot on the quick-match ladder") :]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match is not None
    return match.group(1)


def test_the_ladder_bot_is_short() -> None:
    assert len(ladder_code().strip().splitlines()) < 40


async def test_the_guides_ladder_bot_plays_and_requeues(
    redis_server, server_node, tmp_path: Path
) -> None:
    node = await server_node(
        redis_server.url,
        match_wait=2.0,
        match_gather=0.2,
        match_turn=0.05,
        match_countdown=0,
        match_time_limit=10,
        rate=2000.0,
        burst=2000,
    )
    script = tmp_path / "ladder.py"
    script.write_text(ladder_code())
    bots = [
        await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            node.url,
            "spider1",
            stdout=asyncio.subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outs = await asyncio.wait_for(asyncio.gather(*(b.communicate() for b in bots)), 120)
    assert all(b.returncode == 0 for b in bots)
    lines = [out.decode().split() for out, _ in outs]
    assert [len(x) for x in lines] == [9, 9]  # three games each: code, status, runs
    codes = [out.decode().split()[0::3] for out, _ in outs]
    assert codes[0] == codes[1]  # the two bots were matched together each time
    assert len(set(codes[0])) == 3
