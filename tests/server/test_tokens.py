"""Session tokens: issue time and maximum age, the secret list and its rotation."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from pathlib import Path

import pytest

from spider_client import protocol as p
from spider_server.errors import BadToken, ConfigError
from spider_server.tokens import Identity, Keyring, issue, load_secret, verify
from tests.server.server_helpers import Client

ZOE = Identity("p0123456789ab", "Zoë")
NOW = 1_800_000_000.0


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _forge(secret: bytes, body: object) -> str:
    """A token of any body, signed as the server signs (for bodies it never issues)."""
    signed = "v1." + _b64(json.dumps(body).encode())
    sig = _b64(hmac.new(secret, signed.encode(), hashlib.sha256).digest())
    return f"{signed}.{sig}"


def test_a_token_carries_its_issue_time() -> None:
    token = issue(b"s", ZOE, now=NOW)
    identity = verify(b"s", token)
    assert identity == ZOE and identity.issued == NOW
    assert verify(b"s", issue(b"s", ZOE, now=NOW + 60)).issued == NOW + 60


def test_rotation_sign_with_the_first_accept_any() -> None:
    old = issue(b"old", ZOE)
    ring = Keyring([b"new", b"old"])
    assert verify(ring, old) == ZOE  # the new secret added first: old tokens still verify
    fresh = issue(ring, ZOE)
    assert verify(b"new", fresh) == ZOE  # new tokens are signed with the new one
    with pytest.raises(BadToken):
        verify(b"old", fresh)
    with pytest.raises(BadToken):  # the old one removed: its tokens are refused
        verify(Keyring([b"new"]), old)
    assert verify([b"other", b"old"], old) == ZOE  # a plain list works the same
    assert bytes(ring) == b"new" and ring == b"new"  # as bytes, the signing secret
    assert "new" not in repr(ring) and "old" not in repr(ring)


def test_maximum_age() -> None:
    token = issue(b"s", ZOE, now=NOW)
    assert verify(b"s", token, max_age=3600, now=NOW + 3600) == ZOE
    with pytest.raises(BadToken, match="expired"):
        verify(b"s", token, max_age=3600, now=NOW + 3601)
    # the keyring's maximum age applies unless the call gives one
    ring = Keyring([b"s"], max_age=10)
    with pytest.raises(BadToken, match="expired"):
        verify(ring, token, now=NOW + 11)
    assert verify(ring, token, now=NOW + 11, max_age=20) == ZOE
    # without a maximum age a token lives on
    assert verify(b"s", token, now=NOW + 10 * 365 * 86400) == ZOE
    # a token from the far future is refused once ages count (a skew of minutes is not)
    assert verify(b"s", token, max_age=60, now=NOW - 200) == ZOE
    with pytest.raises(BadToken, match="future"):
        verify(b"s", token, max_age=60, now=NOW - 3600)


def test_tokens_without_an_issue_time() -> None:
    """Accepted unless a maximum age is set; then refused (their age is not known)."""
    token = _forge(b"s", {"p": "p1", "n": "x"})
    identity = verify(b"s", token)
    assert identity == Identity("p1", "x") and identity.issued is None
    with pytest.raises(BadToken, match="no issue time"):
        verify(b"s", token, max_age=86400)


@pytest.mark.parametrize(
    "token",
    [
        "v1.é.x",
        "v1.abc.\u00e9\u00e9",
        "v1.\udcff.x",
        "v1." + "a" * 5000 + ".x",
        "v1..",
        "v1.a.b.c",
        "v1.!!!!.x",
        None,
        b"v1.a.b",
        7,
        ["v1", "a", "b"],
    ],
)
def test_malformed_tokens_are_bad_tokens(token: object) -> None:
    with pytest.raises(BadToken):
        verify(b"s", token)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "body",
    [
        [1, 2],
        "text",
        7,
        None,
        {"p": "p1"},
        {"p": 1, "n": "x"},
        {"p": "p1", "n": ["x"]},
        {"p": "p1", "n": "x", "t": "yesterday"},
        {"p": "p1", "n": "x", "t": True},
        {"p": "p1", "n": "x", "t": [1]},
    ],
)
def test_signed_but_malformed_bodies_are_bad_tokens(body: object) -> None:
    with pytest.raises(BadToken):
        verify(b"s", _forge(b"s", body), max_age=10**9)
    # a body that is not JSON at all
    signed = "v1." + _b64(b"\xff\xfe not json")
    sig = _b64(hmac.new(b"s", signed.encode(), hashlib.sha256).digest())
    with pytest.raises(BadToken):
        verify(b"s", f"{signed}.{sig}")


def test_secret_lists_from_the_environment_and_the_data_folder(tmp_path: Path) -> None:
    ring = load_secret("new , old", tmp_path, max_age=60)
    assert ring.secrets == (b"new", b"old") and ring == b"new" and ring.max_age == 60
    with pytest.raises(ConfigError):
        load_secret("new,,old", tmp_path)
    # the generated secret, and a second one put first in the file
    first = load_secret(None, tmp_path)
    path = tmp_path / "token-secret"
    assert first.secrets == (path.read_text().strip().encode(),)
    old_token = issue(first, ZOE)
    path.write_text("rotated\n" + path.read_text())
    ring = load_secret(None, tmp_path)
    assert ring == b"rotated" and verify(ring, old_token) == ZOE
    path.write_text("rotated\n")
    with pytest.raises(BadToken):
        verify(load_secret(None, tmp_path), old_token)
    path.write_text("\n\n")
    with pytest.raises(ConfigError, match="no secret"):
        load_secret(None, tmp_path)


async def _resume(url: str, token: str) -> p.Welcome | str:
    """The welcome a token gets on the node at ``url``, or the error's code."""
    client = await Client.connect(url, hello=False)
    try:
        await client.send(p.Hello(token=token))
        reply = await client.expect(("welcome", "error"))
    finally:
        await client.ws.close()
    return reply if reply.type == "welcome" else reply.error


async def test_rotating_the_secret_of_running_nodes(redis_server, server_process) -> None:
    """Tokens signed with the old secret resume on nodes whose list has the new secret
    first; once the old one is removed they are refused."""
    old_node = await server_process(redis_server.url, SPIDER_RACE_SECRET="old-secret")
    a = await Client.connect(old_node.url, name="a")
    token, player = a.token, a.player
    await a.ws.close()
    both = await server_process(redis_server.url, SPIDER_RACE_SECRET="new-secret,old-secret")
    welcome = await _resume(both.url, token)
    assert isinstance(welcome, p.Welcome) and welcome.player == player
    # the token it gives back is signed with the new secret
    assert verify(b"new-secret", welcome.token).player == player
    new_only = await server_process(redis_server.url, SPIDER_RACE_SECRET="new-secret")
    assert await _resume(new_only.url, token) == "bad_token"
    again = await _resume(new_only.url, welcome.token)
    assert isinstance(again, p.Welcome) and again.player == player


async def test_a_node_with_a_maximum_age_refuses_older_tokens(redis_server, server_process) -> None:
    old = issue(b"s3", ZOE, now=1_000_000_000)
    node = await server_process(
        redis_server.url, SPIDER_RACE_SECRET="s3", SPIDER_RACE_TOKEN_MAX_AGE="3600"
    )
    assert await _resume(node.url, old) == "bad_token"
    welcome = await _resume(node.url, issue(b"s3", ZOE))
    assert isinstance(welcome, p.Welcome) and welcome.player == ZOE.player
