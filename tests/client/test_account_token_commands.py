"""``spider-race account upgrade-to-bot``, ``token create|list|revoke`` and ``delete`` as
the installed command against a real node with Valkey and PostgreSQL; the client library
and ``spider-race bot`` speaking with an API token (``SPIDER_RACE_TOKEN``)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from spider_client import BadToken, Client, MissingScope, connect_bot
from tests.server.account_helpers import bearer, call

from .test_account_commands import PASSWORD, account, stored
from .test_account_commands import clock as clock  # noqa: F401 (a fixture)
from .test_account_commands import node as node  # noqa: F401 (a fixture)


async def test_tokens_made_listed_used_and_revoked(node: Any, tmp_path: Path) -> None:
    files = tmp_path / "credentials.json"
    done = await account(node, files, "register", "Ada", "--password-stdin", stdin=PASSWORD)
    assert done.status == 0, done
    done = await account(
        node, files, "token", "create", "--scope", "race:read", "--scope", "race:play",
        "--name", "laptop bot",
    )  # fmt: skip
    assert done.status == 0, done
    token = done.out.strip()
    assert token.startswith("a1.") and "shown this once" in done.err
    done = await account(node, files, "token", "list")
    assert done.status == 0, done
    [line] = done.out.splitlines()[1:]
    number = line.split()[0]
    assert "laptop bot" in line and "race:read race:play" in line and line.rstrip().endswith("-")

    async with await Client.connect(node.url, token=token) as client:  # the library
        assert client.name == "Ada" and client.token == token
        with pytest.raises(MissingScope):
            await client.create_race(variant="spider1")
    done = await account(node, files, "token", "list")
    assert not done.out.splitlines()[1].rstrip().endswith("-")  # its last use

    refused = await account(node, files, "token", "create", "--scope", "bot:play")
    assert refused.status == 1 and "bot accounts" in refused.err, refused
    done = await account(node, files, "token", "revoke", number)
    assert done.status == 0 and done.out.strip() == f"token {number} revoked", done
    again = await account(node, files, "token", "revoke", number)
    assert again.status == 1 and "no API token" in again.err, again
    with pytest.raises(BadToken):
        await Client.connect(node.url, token=token)


async def test_upgrade_to_bot_asks_and_bot_plays_with_a_token(
    node: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from spider_race import cli

    files = tmp_path / "credentials.json"
    done = await account(node, files, "register", "Robo", "--password-stdin", stdin=PASSWORD)
    assert done.status == 0, done
    no = await account(node, files, "upgrade-to-bot", stdin="robo?\n")
    assert no.status == 2 and "for good" in no.err and "nothing was changed" in no.err, no
    session = stored(files)[node.url]["token"]
    assert (await call(node, "GET", "/account/me", bearer(session))).body["bot"] is False
    done = await account(node, files, "upgrade-to-bot", stdin="Robo\n")
    assert done.status == 0 and done.out.strip() == "Robo is a bot account now", done
    done = await account(node, files, "whoami")
    assert done.out.strip().endswith(", a bot account"), done
    done = await account(node, files, "token", "create", "--scope", "bot:play")
    assert done.status == 0, done
    token = done.out.strip()

    async with await connect_bot(node.url, name="ignored", token=token) as bot_client:
        assert (bot_client.name, bot_client.token) == ("Robo", token)  # the library
    monkeypatch.setenv("SPIDER_RACE_TOKEN", token)
    monkeypatch.setenv("SPIDER_RACE_CREDENTIALS", str(tmp_path / "none.json"))
    async with await Client.connect(node.url, name="host") as host:
        code = await host.create_race(variant="spider1", seed="token-bot", countdown=0)
        argv = ["bot", code, "--url", node.url, "--max-moves", "3", "--strategy", "random"]
        bot = asyncio.create_task(asyncio.to_thread(cli.main, argv))
        await host.wait_until(lambda c: c.race is not None and len(c.race.players) == 2, timeout=60)
        assert host.race is not None
        seated = {i.player: (i.name, i.bot) for i in host.race.players}
        assert seated[stored(files)[node.url]["player"]] == ("Robo", True)
        await host.ready()
        await host.wait_until(lambda c: c.view is not None, timeout=60)
        await host.resign()
        assert await asyncio.wait_for(bot, 90) == 0


async def test_delete_ends_everything_and_forgets_the_session(node: Any, tmp_path: Path) -> None:
    files = tmp_path / "credentials.json"
    done = await account(node, files, "register", "Dora", "--password-stdin", stdin=PASSWORD)
    assert done.status == 0, done
    session = stored(files)[node.url]["token"]
    wrong = await account(node, files, "delete", "--password-stdin", stdin="not it\n")
    assert wrong.status == 1 and node.url in stored(files), wrong
    done = await account(node, files, "delete", "--password-stdin", stdin=PASSWORD + "\n")
    assert done.status == 0, done
    assert "Dora is deleted" in done.out and node.url not in stored(files)
    assert (await call(node, "GET", "/account/me", bearer(session))).status == 401
    done = await account(node, files, "whoami")
    assert done.status == 1, done


async def test_bot_with_a_persons_account_says_what_to_do(
    node: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from spider_race import cli

    files = tmp_path / "credentials.json"
    done = await account(node, files, "register", "Pat", "--password-stdin", stdin=PASSWORD)
    assert done.status == 0, done
    monkeypatch.setenv("SPIDER_RACE_CREDENTIALS", str(files))
    monkeypatch.delenv("SPIDER_RACE_TOKEN", raising=False)
    async with await Client.connect(node.url, name="host") as host:
        code = await host.create_race(variant="spider1", countdown=0)
        argv = ["bot", code, "--url", node.url, "--max-moves", "3", "--strategy", "random"]
        assert await asyncio.to_thread(cli.main, argv) == 1
        said = capsys.readouterr().err
        assert "bot account" in said and "--guest" in said, said
        assert host.race is not None and len(host.race.players) == 1  # nobody joined
