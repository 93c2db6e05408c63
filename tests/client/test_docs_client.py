"""The programs of ``docs/client.md`` run as they are written: every ``python`` block there
is a whole program that takes the server's URL as its first argument. Each is written to a
file and run with this Python against a real node, to the end of its races, and must exit
0 having said what it is for (a result, a rating change, a par, the mirror's verdict)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from spider_client import Client
from tests.client.client_helpers import FAST

DOC = Path(__file__).resolve().parents[2] / "docs" / "client.md"
BLOCK = re.compile(r"^(?P<indent> *)```python\n(?P<body>.*?)^(?P=indent)```$", re.M | re.S)
NAME = re.compile(r"# (?P<name>\w+\.py): ")
WAIT = 120.0
"""Seconds a program may take (a loaded machine runs them many times slower than a quiet
one; none should come near)."""

STATUS = r"(won|resigned|stuck|timeout)"
LADDER = {"match_countdown": 0, "match_gather": 0, "match_turn": 0.05, "match_wait": 0.2}
"""A quick match is made as soon as two bots are queued, whatever their ratings (they drift
apart as the bots play), and starts at once."""


@dataclass
class Case:
    """What a program of the page must print, each pattern on a line of its own (``count``
    lines of it), on a node started with ``settings``."""

    expect: dict[str, int]
    settings: dict[str, Any] = field(default_factory=dict)


CASES: dict[str, Case] = {
    "turnup.py": Case(
        {
            r"race ([A-Z0-9]+) \(join it with: python turnup\.py ws://\S+ \1\)": 1,
            rf"turn-up bot: {STATUS}, \d+ runs in \d+ moves": 1,
            rf"1 turn-up bot {STATUS} \d+ \d+": 1,
        }
    ),
    "greedy.py": Case({rf"1 greedy bot {STATUS} \d+ \d+": 1}),
    "ladder.py": Case(
        {
            rf"ladder bot 1 in [A-Z0-9]+: {STATUS}, rank [12] of 2, rating \d+ -> \d+": 2,
            rf"ladder bot 2 in [A-Z0-9]+: {STATUS}, rank [12] of 2, rating \d+ -> \d+": 2,
        },
        LADDER,
    ),
    "ghost.py": Case(
        {
            rf"[12] ghost racer live {STATUS} \d+ \d+": 1,
            rf"[12] ghost racer ghost {STATUS} \d+ \d+": 1,
        }
    ),
    "par.py": Case(
        {r"(par \d+ · you (\d+ \([+-]\d+\)|\w+ after \d+ moves)|no par: .*)": 1},
        {"par_budget": 5_000},
    ),
    "ratings.py": Case(
        {
            r"ada bot #\w{4}: 1500 -> \d+\?": 1,
            r"bob bot #\w{4}: 1500 -> \d+\?": 1,
            r"spider1 1 [01] (0|100)% \S+ [01] \d+": 1,
            r"[A-Z0-9]+ [12] 2 \w+ /r/[A-Z0-9]+": 1,
            r"\[\] None": 1,  # one race leaves both provisional: on no ladder yet
            r"rematch [A-Z0-9]+: \[\(\d, '\w+ bot', '\w+'\), \(\d, '\w+ bot', '\w+'\)\]": 1,
        },
        {"rematch_wait": 1},
    ),
    "signin.py": Case(
        {r"hello as Ada, player \w+, the token kept: True": 1}, {"argon2_time_cost": 1}
    ),
    "mirror.py": Case(
        {
            r"\d+ frames: \{.*'finished': 1.*\}": 1,
            rf"finished mirror bot {STATUS} \d+ moves": 1,
            r"the mirror agrees with the client: True": 1,
        }
    ),
}


def programs() -> dict[str, str]:
    """The page's python blocks by the file name on their first line."""
    found: dict[str, str] = {}
    for block in BLOCK.finditer(DOC.read_text()):
        source = textwrap.dedent(block.group("body"))
        named = NAME.match(source)
        assert named, f"a python block of the page names no file: {source[:80]!r}"
        assert named["name"] not in found, f"two blocks named {named['name']}"
        found[named["name"]] = source
    return found


async def run(program: str, folder: Path, *args: str) -> str:
    """Run the page's ``program`` with ``args`` (and no input: the turn-up bot does not wait
    for Enter); its output, once it exited 0."""
    path = folder / program
    path.write_text(programs()[program])
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(path),
        *args,
        cwd=folder,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), WAIT)
    except BaseException as e:  # it did not end, or the test stopped waiting for it
        if proc.returncode is None:
            proc.kill()
        out, err = await proc.communicate()
        if not isinstance(e, TimeoutError):
            raise
        pytest.fail(f"{program} did not end\n{out.decode()}\n{err.decode()}")
    assert proc.returncode == 0, (
        f"{program} exited {proc.returncode}\n{out.decode()}\n{err.decode()}"
    )
    return out.decode()


def check(program: str, output: str) -> None:
    """Every line the program's case expects is there, as many times as it says."""
    lines = output.splitlines()
    for pattern, count in CASES[program].expect.items():
        matching = [line for line in lines if re.fullmatch(pattern, line)]
        assert len(matching) == count, f"{program}: {pattern!r} {count} times in\n{output}"


def test_every_python_block_is_a_program_run_here() -> None:
    found = programs()
    assert len(found) >= len(CASES) == 8
    assert sorted(found) == sorted(CASES)
    for name, source in found.items():
        assert "asyncio.run(main(sys.argv[1]" in source, f"{name} takes no URL"
    # every other block says what it is (sh, text): none is a program left unrun
    fences = re.findall(r"^ *```(\S*)$", DOC.read_text(), re.M)
    assert fences[0::2].count("python") == len(found)
    assert all(fences[0::2]) and not any(fences[1::2])


@pytest.mark.parametrize("program", sorted(set(CASES) - {"signin.py"}))
async def test_the_program_runs_to_its_end(
    program: str, redis_server: Any, server_node: Any, tmp_path: Path
) -> None:
    node = await server_node(redis_server.url, **FAST, **CASES[program].settings)
    check(program, await run(program, tmp_path, node.url))


async def test_the_turnup_bot_joins_a_race_by_its_code(
    redis_server: Any, server_node: Any, tmp_path: Path
) -> None:
    node = await server_node(redis_server.url, **FAST)
    async with await Client.connect(node.url, name="host") as host:
        code = await host.create_race(variant="spider1", countdown=0)
        bot = asyncio.create_task(run("turnup.py", tmp_path, node.url, code))
        seated = asyncio.create_task(
            host.wait_until(lambda c: c.race is not None and len(c.race.players) == 2)
        )
        try:
            await asyncio.wait([bot, seated], timeout=WAIT, return_when=asyncio.FIRST_COMPLETED)
            assert not bot.done(), f"the bot ended before the race started: {bot.result()}"
            assert seated.done(), "the bot did not join"
            await seated
            await host.ready()  # both are ready: the race starts
            await host.wait_until(lambda c: c.view is not None, timeout=WAIT)
            await host.resign()
            output = await bot
        finally:
            for task in (bot, seated):
                task.cancel()
            await asyncio.gather(bot, seated, return_exceptions=True)
        await host.wait_until(lambda c: c.finished, timeout=WAIT)
        assert host.race is not None and host.race.results is not None
        results = {r.name: r for r in host.race.results}
    assert set(results) == {"host", "turn-up bot"}
    assert results["turn-up bot"].bot and not results["host"].bot
    assert results["host"].status == "resigned"
    lines = output.splitlines()
    assert not any(line.startswith("race ") for line in lines)  # it made no race of its own
    assert re.fullmatch(rf"turn-up bot: {STATUS}, \d+ runs in \d+ moves", lines[0])
    assert sorted(line.split()[1] for line in lines[1:]) == ["host", "turn-up"]


async def test_the_signin_program_speaks_for_the_account(
    pg_database: Any, redis_server: Any, server_node: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    from tests.server.account_helpers import ACCOUNT_SETTINGS, basic, call

    settings = {**FAST, **ACCOUNT_SETTINGS, **CASES["signin.py"].settings}
    node = await server_node(redis_server.url, database_url=pg_database.url, **settings)
    password = "correct horse battery staple"
    made = await call(node, "POST", "/account/signup", basic("Ada", password))
    assert made.status == 201, made
    monkeypatch.setenv("SPIDER_RACE_PASSWORD", password)
    output = await run("signin.py", tmp_path, node.url, "Ada")
    check("signin.py", output)
    assert f"player {made.body['player']}," in output
