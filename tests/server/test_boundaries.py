"""Tokens, frame validation, settings and the rate limiter, without a server."""

from __future__ import annotations

from pathlib import Path

import msgpack
import pytest

from spider_client import protocol as p
from spider_server.errors import BadFrame, BadToken, ConfigError, InvalidMessage
from spider_server.limits import TokenBucket
from spider_server.session.validation import parse_frame
from spider_server.settings import Settings
from spider_server.tokens import Identity, issue, load_secret, verify


def test_tokens_round_trip_and_refuse_tampering() -> None:
    secret = b"s3cret"
    token = issue(secret, Identity("p0123456789ab", "Zoë"))
    assert verify(secret, token) == Identity("p0123456789ab", "Zoë")
    prefix, head, payload, sig = token.split(".")  # a guest's: g1.v1.<payload>.<sig>
    assert prefix == "g1"
    for bad in (
        f"{prefix}.{head}.{payload}x.{sig}",
        f"{prefix}.{head}.{payload}.{sig[::-1]}",
        f"{prefix}.v2.{payload}.{sig}",
        f"{prefix}.{head}.{payload}",
        f"{head}.{payload}x.{sig}",  # without the prefix, as tokens were before it
        f"s1.{head}.{payload}.{sig}",  # a guest's token passed off as a session's
        "",
        "..",
    ):
        with pytest.raises(BadToken):
            verify(secret, bad)
    with pytest.raises(BadToken):
        verify(b"another secret", token)


def test_secret_is_generated_once_and_kept(tmp_path: Path) -> None:
    first = load_secret(None, tmp_path)
    assert len(first) == 64 and load_secret(None, tmp_path) == first
    assert (tmp_path / "token-secret").stat().st_mode & 0o077 == 0
    assert load_secret("from-env", tmp_path) == b"from-env"


def test_frames_are_validated_strictly() -> None:
    assert parse_frame(p.encode(p.MoveAction(code="ABCDE", seq=3, move="d1j"))) == p.MoveAction(
        code="ABCDE", seq=3, move="d1j"
    )
    # defaults may be left out; unknown fields are ignored
    assert parse_frame(msgpack.packb({"type": "hello", "name": "x", "extra": [1]})) == p.Hello(
        name="x"
    )
    assert parse_frame(msgpack.packb({"type": "join", "req": 1, "code": "X"})) == p.Join(
        req=1, code="X"
    )
    for data in (b"", b"\xc1", b"\x93\x01\x02\x03", msgpack.packb("hello"), msgpack.packb({"type": 3}),
                 msgpack.packb({"type": "Welcome"}), b"\x81\xa4type\xa5hello\x00"):  # fmt: skip
        with pytest.raises(BadFrame):
            parse_frame(data)
    for fields in (
        {"type": "move", "code": "A", "seq": "3", "move": "d1j"},
        {"type": "move", "code": "A", "seq": 3.0, "move": "d1j"},
        {"type": "move", "code": "A", "seq": False, "move": "d1j"},
        {"type": "move", "code": "A", "seq": 3, "move": None},
        {"type": "create_race", "req": 1, "live_boards": 0},
        {"type": "create_race", "req": 1, "time_limit": "60"},
        {"type": "join", "req": 5, "code": "A", "role": "admin"},
        {"type": "join", "req": 5, "code": "A", "since": "4"},
        {"type": "hello", "protocol": "1"},
        {"type": "ready", "code": "A"},
    ):
        with pytest.raises(InvalidMessage) as info:
            parse_frame(msgpack.packb(fields))
        assert info.value.req == fields.get("req")


def test_settings_from_environment() -> None:
    s = Settings.from_env({"SPIDER_RACE_PORT": "9001", "SPIDER_RACE_REDIS": "redis://h:1/0", "SPIDER_RACE_RATE": "2.5",
                           "SPIDER_RACE_DATA_DIR": "/tmp/x", "SPIDER_RACE_NODE": "n7"})  # fmt: skip
    assert (s.port, s.redis_url, s.rate, s.data_dir, s.node) == (
        9001,
        "redis://h:1/0",
        2.5,
        Path("/tmp/x"),
        "n7",
    )
    assert s.replace(port=None, host="0.0.0.0").port == 9001
    with pytest.raises(ConfigError):
        Settings.from_env({"SPIDER_RACE_PORT": "eighty"})


def test_a_race_must_outlive_its_longest_time_limit() -> None:
    """Keys are refreshed by race changes and every 64th action: a race that may run longer
    than their TTL is refused as a setting."""
    with pytest.raises(ConfigError, match="RACE_TTL"):
        Settings.from_env({"SPIDER_RACE_RACE_TTL": "3600", "SPIDER_RACE_MAX_TIME_LIMIT": "3600"})
    ok = Settings.from_env({"SPIDER_RACE_RACE_TTL": "3700", "SPIDER_RACE_MAX_TIME_LIMIT": "3600"})
    assert ok.race_ttl == 3700


def test_token_bucket() -> None:
    now = [0.0]
    bucket = TokenBucket(2.0, 3, clock=lambda: now[0])
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    now[0] += 0.5
    assert bucket.take() and not bucket.take()
    now[0] += 10
    assert bucket.calm
