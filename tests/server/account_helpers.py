"""Helpers of the accounts' tests: HTTP requests to a node's ``/account/...`` routes (real
HTTP on loopback, from a thread), the rows the database holds, and a node with accounts."""

from __future__ import annotations

import asyncio
import base64
import json
import urllib.error
import urllib.request
from typing import Any

ACCOUNT_SETTINGS: dict[str, Any] = {
    "argon2_time_cost": 1,
    "argon2_memory": 1024,  # KiB: quick for tests; the parameters are the node's settings
    "trusted_proxies": "127.0.0.1",  # X-Forwarded-For says each request's address
}


def basic(name: str, password: str) -> dict[str, str]:
    text = base64.b64encode(f"{name}:{password}".encode()).decode()
    return {"Authorization": f"Basic {text}"}


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


class Answer:
    def __init__(self, status: int, body: Any, headers: Any) -> None:
        self.status = status
        self.body = body
        self.headers = headers

    @property
    def error(self) -> str | None:
        return self.body.get("error") if isinstance(self.body, dict) else None

    def __repr__(self) -> str:
        return f"Answer({self.status}, {self.body!r})"


async def call(
    node: Any, method: str, path: str, headers: dict[str, str] | None = None, *,
    address: str = "198.51.100.7",
) -> Answer:  # fmt: skip
    """One request to ``node`` as if from ``address`` (by X-Forwarded-For)."""
    sent = {"X-Forwarded-For": address, **(headers or {})}

    def go() -> Answer:
        request = urllib.request.Request(node.http_url + path, method=method, headers=sent)
        try:
            with urllib.request.urlopen(request, timeout=60) as r:
                raw = r.read()
                return Answer(r.status, json.loads(raw) if raw else None, r.headers)
        except urllib.error.HTTPError as e:
            raw = e.read()
            return Answer(e.code, json.loads(raw) if raw else None, e.headers)

    return await asyncio.to_thread(go)


async def count_rows(node: Any) -> tuple[int, int]:
    """(accounts, sessions) in the node's database."""
    archive = node.node.archiver.archive
    async with archive.connection() as conn:
        accounts = await conn.fetchval("SELECT count(*) FROM accounts")
        sessions = await conn.fetchval("SELECT count(*) FROM sessions")
    return int(accounts), int(sessions)


ACCOUNT_PASSWORD = "correct horse battery staple"


async def account_token(
    node: Any,
    name: str,
    *,
    address: str = "198.51.100.7",
    password: str = ACCOUNT_PASSWORD,
    bot: bool = False,
) -> str:
    """A session token of a new account named ``name``, signed up on ``node`` (a node that
    keeps accounts): what a client says hello with to race as that account (rated races
    are for accounts). ``bot``: the account is made a bot account first (only a bot
    account races as a bot with an account)."""
    answer = await call(node, "POST", "/account/signup", basic(name, password), address=address)
    assert answer.status == 201, answer
    token: str = answer.body["token"]
    assert token.startswith("s1.")
    if bot:
        upgraded = await call(
            node, "POST", "/account/upgrade-to-bot", bearer(token), address=address
        )
        assert upgraded.status == 200 and upgraded.body["bot"] is True, upgraded
    return token
