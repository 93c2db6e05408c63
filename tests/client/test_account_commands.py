"""``spider-race account ...`` as the installed command against a real node with Valkey and
PostgreSQL: register, login, whoami, sessions, logout (here and everywhere), a password
changed; every refusal said in a line with its exit status, and nothing stored then; the
session kept in the credentials file (mode 0600) in place of a guest's token, and
``SPIDER_RACE_TOKEN`` over it."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from spider_client import Client
from spider_server.embedded import free_port
from tests.server.account_helpers import ACCOUNT_SETTINGS, bearer, call, count_rows
from tests.server.clocks import TestClock

PASSWORD = "correct horse battery staple"
COMMAND = Path(sys.executable).parent / "spider-race"
"""The console script installed beside this Python."""


@pytest.fixture
def clock() -> TestClock:
    return TestClock()  # the limits' waits stay put while the test looks at them


@pytest.fixture
async def node(pg_database: Any, server_node: Any, redis_server: Any, clock: TestClock) -> Any:
    # the database is made before the node and dropped after it: the node closes on a
    # database that still answers
    return await server_node(
        redis_server.url, database_url=pg_database.url, clock=clock, **ACCOUNT_SETTINGS
    )


class Done:
    def __init__(self, done: subprocess.CompletedProcess[str]) -> None:
        self.status, self.out, self.err = done.returncode, done.stdout, done.stderr

    def __repr__(self) -> str:
        return f"Done({self.status}, out={self.out!r}, err={self.err!r})"


async def account(
    node: Any, files: Path, *args: str, stdin: str = "", token: str | None = None
) -> Done:
    """``spider-race account ARGS --url NODE`` with the credentials file ``files`` (and
    ``SPIDER_RACE_TOKEN`` = ``token``), ``stdin`` as its input."""
    env = {k: v for k, v in os.environ.items() if k != "SPIDER_RACE_TOKEN"}
    env["SPIDER_RACE_CREDENTIALS"] = str(files)
    if token is not None:
        env["SPIDER_RACE_TOKEN"] = token
    argv = [str(COMMAND), "account", *args]
    if "--url" not in args:
        argv += ["--url", node.url]

    def go() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            argv, input=stdin, capture_output=True, text=True, env=env, timeout=120
        )

    return Done(await asyncio.to_thread(go))  # the node serves meanwhile


def stored(files: Path) -> dict[str, Any]:
    if not files.exists():
        return {}
    return dict(json.loads(files.read_text())["servers"])


async def test_register_whoami_sessions_and_logout(node: Any, tmp_path: Path) -> None:
    assert COMMAND.exists()
    laptop, phone = tmp_path / "laptop.json", tmp_path / "phone.json"
    done = await account(node, laptop, "register", "Ada", "--password-stdin", stdin=PASSWORD + "\n")
    assert done.status == 0, done
    assert done.out.strip() == f"signed up and signed in as Ada at {node.url}"
    entry = stored(laptop)[node.url]
    assert entry["name"] == "Ada" and entry["token"].startswith("s1.")
    assert stat.S_IMODE(laptop.stat().st_mode) == 0o600
    me = await call(node, "GET", "/account/me", bearer(entry["token"]))
    assert me.status == 200 and me.body["player"] == entry["player"]

    done = await account(node, laptop, "whoami")
    assert done.status == 0, done
    assert done.out.startswith(f"Ada (player {entry['player']}, account since ")

    done = await account(node, phone, "login", "ADA", "--password-stdin", stdin=PASSWORD)
    assert done.status == 0, done
    assert done.out.strip() == f"signed in as Ada at {node.url}"
    assert stored(phone)[node.url]["token"] != entry["token"]
    done = await account(node, phone, "sessions")
    assert done.status == 0, done
    rows = done.out.splitlines()[1:]
    assert len(rows) == 2 and sum("(this one)" in row for row in rows) == 1
    assert all("spider-race/" in row and "127.0.0.1" in row for row in rows)

    done = await account(node, laptop, "logout")
    assert done.status == 0, done
    assert done.out.strip() == f"signed out at {node.url}"
    assert node.url not in stored(laptop)
    gone = await call(node, "GET", "/account/me", bearer(entry["token"]))
    assert gone.status == 401
    done = await account(node, laptop, "whoami")
    assert done.status == 1 and done.out == ""
    assert f"not signed in at {node.url}" in done.err
    assert (await account(node, phone, "whoami")).status == 0  # the other session runs on

    done = await account(node, phone, "logout", "--everywhere")
    assert done.status == 0, done
    assert "signed out everywhere" in done.out and "1 session ended" in done.out
    assert await count_rows(node) == (1, 0)


async def test_every_refusal_is_said_and_stores_nothing(node: Any, tmp_path: Path) -> None:
    files = tmp_path / "credentials.json"

    async def refused(status: int, *args: str, stdin: str = PASSWORD) -> str:
        done = await account(node, files, *args, stdin=stdin)
        assert (done.status, done.out) == (status, ""), done
        assert done.err.startswith(f"spider-race account {args[0]}: ") and done.err.count("\n") == 1
        assert stored(files) == {}
        return done.err

    err = await refused(1, "register", "p\u0430ypal", "--password-stdin")  # a Cyrillic a
    assert "this name is refused: mixes Latin and Cyrillic letters" in err
    err = await refused(1, "register", "Ada", "--password-stdin", stdin="password\n")
    assert "password" in err.split(": ", 1)[1]
    assert await count_rows(node) == (0, 0)
    made = await account(node, tmp_path / "other.json", "register", "Ada", "--password-stdin",
                         stdin=PASSWORD)  # fmt: skip
    assert made.status == 0, made
    err = await refused(1, "register", "ada", "--password-stdin")
    assert "is taken" in err
    wrong = await refused(1, "login", "Ada", "--password-stdin", stdin="not the password")
    nobody = await refused(1, "login", "Nobody", "--password-stdin", stdin="not the password")
    assert wrong.split(": ", 1)[1] == nobody.split(": ", 1)[1]  # a name's existence unsaid
    assert "the name or the password is wrong" in wrong
    for _ in range(4):  # the fifth failure makes the pair wait (the node's clock stands)
        await refused(1, "login", "Ada", "--password-stdin", stdin="not the password")
    err = await refused(1, "login", "Ada", "--password-stdin")
    assert "too many failed sign-ins" in err and "try again in 1 s" in err
    await refused(1, "whoami")
    await refused(1, "logout")
    await refused(2, "login", "Ada", "--password-stdin", stdin="")
    await refused(2, "login", "Ada", "--password-stdin", "--url", "ftp://example")
    nowhere = f"ws://127.0.0.1:{free_port()}/ws"
    err = await refused(3, "login", "Ada", "--password-stdin", "--url", nowhere)
    assert f"the server at {nowhere} does not answer" in err
    assert await count_rows(node) == (1, 1)


async def test_sign_ups_per_address_say_the_wait(
    pg_database: Any, server_node: Any, redis_server: Any, tmp_path: Path
) -> None:
    settings = {**ACCOUNT_SETTINGS, "address_signups": 1}
    node = await server_node(
        redis_server.url, database_url=pg_database.url, clock=TestClock(), **settings
    )
    first = await account(node, tmp_path / "a.json", "register", "Ada", "--password-stdin",
                          stdin=PASSWORD)  # fmt: skip
    assert first.status == 0, first
    done = await account(node, tmp_path / "b.json", "register", "Bea", "--password-stdin",
                         stdin=PASSWORD)  # fmt: skip
    assert (done.status, done.out) == (1, ""), done
    assert "too many accounts made from your address: try again in " in done.err
    assert not (tmp_path / "b.json").exists()
    assert await count_rows(node) == (1, 1)


async def test_a_password_changed_ends_the_other_sessions(node: Any, tmp_path: Path) -> None:
    laptop, phone = tmp_path / "laptop.json", tmp_path / "phone.json"
    new = "a new and longer passphrase"
    assert (await account(node, laptop, "register", "Ada", "--password-stdin",
                          stdin=PASSWORD)).status == 0  # fmt: skip
    assert (await account(node, phone, "login", "Ada", "--password-stdin",
                          stdin=PASSWORD)).status == 0  # fmt: skip
    weak = await account(node, laptop, "password", "--password-stdin", stdin=f"{PASSWORD}\nshort\n")
    assert weak.status == 1 and "8" in weak.err, weak
    done = await account(node, laptop, "password", "--password-stdin", stdin=f"{PASSWORD}\n{new}\n")
    assert done.status == 0, done
    assert done.out.strip() == "the password of Ada is changed: 1 other session ended"
    assert (await account(node, laptop, "whoami")).status == 0  # this one is kept
    ended = await account(node, phone, "whoami")
    assert ended.status == 1 and "this session has ended" in ended.err, ended
    old = await account(node, phone, "login", "Ada", "--password-stdin", stdin=PASSWORD)
    assert old.status == 1 and "wrong" in old.err
    assert (await account(node, phone, "login", "Ada", "--password-stdin", stdin=new)).status == 0


async def test_the_environment_token_overrides_the_file(node: Any, tmp_path: Path) -> None:
    files, empty = tmp_path / "credentials.json", tmp_path / "empty.json"
    assert (await account(node, files, "register", "Ada", "--password-stdin",
                          stdin=PASSWORD)).status == 0  # fmt: skip
    token = stored(files)[node.url]["token"]
    done = await account(node, empty, "whoami", token=token)
    assert done.status == 0 and done.out.startswith("Ada "), done
    done = await account(node, files, "whoami", token="s1." + "x" * 43)
    assert done.status == 1 and "this session has ended" in done.err, done
    done = await account(node, empty, "logout", token=token)  # ends the environment's
    assert done.status == 0, done
    assert (await account(node, files, "whoami")).status == 1
    assert stored(empty) == {} and token == stored(files)[node.url]["token"]  # files untouched


async def test_register_over_a_stored_guest_takes_it_over(node: Any, tmp_path: Path) -> None:
    files = tmp_path / "credentials.json"
    async with await Client.connect(node.url, name="visitor") as guest:
        assert guest.token is not None and not guest.token.startswith("s1.")
        player = guest.player
        files.write_text(json.dumps({"servers": {node.url: {
            "token": guest.token, "player": player, "name": "visitor"}}}))  # fmt: skip
    done = await account(node, files, "register", "Ada", "--password-stdin", stdin=PASSWORD)
    assert done.status == 0, done
    assert "your guest player's races and ratings are the account's now" in done.out
    entry = stored(files)[node.url]
    assert entry["token"].startswith("s1.") and entry["name"] == "Ada"
    assert entry["player"] == player  # the account took the guest over
    me = await call(node, "GET", "/account/me", bearer(entry["token"]))
    assert me.status == 200 and me.body["player"] == entry["player"]


async def test_prompts_ask_twice_for_a_new_password(
    node: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from spider_race import cli

    files = tmp_path / "credentials.json"
    monkeypatch.setenv("SPIDER_RACE_CREDENTIALS", str(files))
    monkeypatch.delenv("SPIDER_RACE_TOKEN", raising=False)
    answers = iter([PASSWORD, PASSWORD + "!", PASSWORD, PASSWORD])
    monkeypatch.setattr("getpass.getpass", lambda prompt="": next(answers))
    argv = ["account", "register", "Ada", "--url", node.url]
    assert await asyncio.to_thread(cli.main, argv) == 2
    assert "the two passwords differ" in capsys.readouterr().err
    assert await count_rows(node) == (0, 0) and not files.exists()
    assert await asyncio.to_thread(cli.main, argv) == 0
    assert "signed up and signed in as Ada" in capsys.readouterr().out
    assert stored(files)[node.url]["name"] == "Ada"


async def test_bot_and_library_speak_for_the_account(
    node: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spider_race import cli

    files = tmp_path / "credentials.json"
    assert (await account(node, files, "register", "Ada", "--password-stdin",
                          stdin=PASSWORD)).status == 0  # fmt: skip
    # only a bot account plays as a bot
    assert (await account(node, files, "upgrade-to-bot", "--yes")).status == 0
    entry = stored(files)[node.url]
    async with await Client.connect(node.url, name="someone", token=entry["token"]) as me:
        assert (me.name, me.player, me.token) == ("Ada", entry["player"], entry["token"])
    monkeypatch.setenv("SPIDER_RACE_CREDENTIALS", str(files))
    monkeypatch.delenv("SPIDER_RACE_TOKEN", raising=False)
    async with await Client.connect(node.url, name="host") as host:
        code = await host.create_race(variant="spider1", seed="account-bot", countdown=0)
        argv = ["bot", code, "--url", node.url, "--name", "gus", "--max-moves", "3"]
        argv += ["--strategy", "random"]
        bot = asyncio.create_task(asyncio.to_thread(cli.main, argv))
        await host.wait_until(lambda c: c.race is not None and len(c.race.players) == 2, timeout=60)
        assert host.race is not None
        seated = {i.player: i.name for i in host.race.players}
        assert seated[entry["player"]] == "Ada"  # the account's player and name, not "gus"
        await host.ready()
        await host.wait_until(lambda c: c.view is not None, timeout=60)
        await host.resign()
        assert await asyncio.wait_for(bot, 90) == 0
