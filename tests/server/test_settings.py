"""Every setting is checked against its range at start; a bad one is one line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import pytest

from spider_server.errors import ConfigError
from spider_server.settings import CHOICES, RANGES, Settings, env_name

# keeps RACE_TTL above MAX_TIME_LIMIT + MAX_COUNTDOWN whatever the setting tested
ROOMY = {"SPIDER_RACE_RACE_TTL": str(365 * 86400), "SPIDER_RACE_MAX_TIME_LIMIT": "1",
         "SPIDER_RACE_MAX_COUNTDOWN": "0"}  # fmt: skip


def _env(setting: str, value: str) -> dict[str, str]:
    env = {k: v for k, v in ROOMY.items() if k != env_name(setting)}
    return {**env, env_name(setting): value}


def _kind(setting: str) -> str:
    return next(str(f.type) for f in fields(Settings) if f.name == setting)


def test_every_setting_is_checked() -> None:
    named = set(RANGES) | set(CHOICES) | {"host", "redis_url", "data_dir", "secret", "node"}
    named |= {"database_url"}
    named |= {"trusted_proxies", "redis_maxmemory", "public_origin", "smtp_url", "smtp_from"}
    assert {f.name for f in fields(Settings)} == named
    Settings().check()  # the defaults pass


@pytest.mark.parametrize("setting", sorted(RANGES))
def test_numbers_within_their_range(setting: str) -> None:
    bound, kind = RANGES[setting], _kind(setting)
    cast = int if kind == "int" else float
    high = cast(bound.high)
    assert getattr(Settings.from_env(_env(setting, str(high))), setting) == high
    if not bound.above:
        low = cast(bound.low)
        assert getattr(Settings.from_env(_env(setting, str(low))), setting) == low
    else:  # the low end itself is refused, a little above is fine
        above = bound.low + (1 if kind == "int" else 0.001)
        assert getattr(Settings.from_env(_env(setting, str(above))), setting) == above
    step = 1 if kind == "int" else 0.5
    outside = [bound.low if bound.above else bound.low - step, bound.high + step]
    for value in outside:
        text = str(cast(value))
        with pytest.raises(ConfigError) as info:
            Settings.from_env(_env(setting, text))
        message = str(info.value)
        assert "\n" not in message
        assert message.startswith(env_name(setting))
        assert text in message and "out of range" in message
        assert bound.describe(kind) in message


@pytest.mark.parametrize("setting", sorted(RANGES))
def test_numbers_of_the_wrong_kind(setting: str) -> None:
    kind = _kind(setting)
    bad = ["eighty", "1,5", "0x10"] + (["1.5", "1e3"] if kind == "int" else ["nan", "inf", "-inf"])
    for text in bad:
        with pytest.raises(ConfigError) as info:
            Settings.from_env(_env(setting, text))
        assert env_name(setting) in str(info.value) and "\n" not in str(info.value)


def test_words_urls_names_and_secrets() -> None:
    assert Settings.from_env({"SPIDER_RACE_LOG_LEVEL": "WARNING"}).log_level == "WARNING"
    assert Settings.from_env({"SPIDER_RACE_LOG_FORMAT": "json"}).log_format == "json"
    for url in (
        "redis://h:1/0",
        "rediss://h:1",
        "unix:///run/redis.sock",
        "redis+cluster://a:1,b:2",
    ):
        assert Settings.from_env({"SPIDER_RACE_REDIS": url}).redis_url == url
    assert Settings.from_env({"SPIDER_RACE_SECRET": "new, old"}).secret == "new, old"
    bad = {
        "SPIDER_RACE_LOG_LEVEL": ("loud", "one of debug, info, warning, error, critical"),
        "SPIDER_RACE_LOG_FORMAT": ("xml", "one of text, json"),
        "SPIDER_RACE_REDIS": ("http://h:1", "redis://"),
        "SPIDER_RACE_NODE": ("two words", "without spaces"),
        "SPIDER_RACE_HOST": ("a b", "an address"),
    }
    for name, (value, expected) in bad.items():
        with pytest.raises(ConfigError) as info:
            Settings.from_env({name: value})
        assert str(info.value).startswith(name) and value in str(info.value)
        assert expected in str(info.value)
    # neither a secret nor a Redis password is shown
    with pytest.raises(ConfigError) as info:
        Settings.from_env({"SPIDER_RACE_SECRET": "hush,,hush2"})
    assert "hush" not in str(info.value) and "empty" in str(info.value)
    with pytest.raises(ConfigError) as info:
        Settings.from_env({"SPIDER_RACE_REDIS": "http://user:pa55word@h:1"})
    assert "pa55word" not in str(info.value)


def test_the_command_line_is_checked_too() -> None:
    with pytest.raises(ConfigError, match=r"SPIDER_RACE_PORT \(--port\)=70000"):
        Settings.from_env({}).replace(port=70000).check()
    assert Settings.from_env({}).replace(port=9000).check().port == 9000


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        ([], {"SPIDER_RACE_RATE": "-1"}, "SPIDER_RACE_RATE=-1.0 is out of range: a number above 0"),
        (["--port", "70000"], {}, "SPIDER_RACE_PORT (--port)=70000 is out of range"),
        ([], {"SPIDER_RACE_TICK": "soon"}, "SPIDER_RACE_TICK='soon' is not valid"),
    ],
)
def test_a_bad_setting_at_start_is_one_line_and_exit_2(
    tmp_path: Path, argv: list[str], env: dict[str, str], expected: str
) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "spider_race", "serve", "--data-dir", str(tmp_path), *argv],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("spider-race serve: " + expected)
    assert not (tmp_path / "redis").exists()  # nothing was started


def test_the_server_guide_gives_every_range() -> None:
    guide = (Path(__file__).parents[2] / "docs" / "server.md").read_text()
    rows = [line for line in guide.splitlines() if line.startswith("| `SPIDER_RACE_")]
    for setting, bound in RANGES.items():
        name = env_name(setting)
        row = next(r for r in rows if f"`{name}`" in r or f"`_{name[len('SPIDER_RACE_') :]}`" in r)
        words = bound.describe(_kind(setting)).split(" ")
        low, high = words[words.index("above" if bound.above else "from") + 1], words[-1]
        expected = f"above {low}, at most {high}" if bound.above else f"{low} to {high}"
        assert expected in row, (name, row)


def test_the_server_guide_gives_every_choice() -> None:
    guide = (Path(__file__).parents[2] / "docs" / "server.md").read_text()
    rows = [line for line in guide.splitlines() if line.startswith("| `SPIDER_RACE_")]
    for setting, words in CHOICES.items():
        row = next(r for r in rows if r.startswith(f"| `{env_name(setting)}`"))
        allowed = row.split(" | ")[2]
        assert allowed == ", ".join(f"`{w}`" for w in words), (setting, row)
        default = next(f.default for f in fields(Settings) if f.name == setting)
        assert row.split(" | ")[1] == f"`{default}`", (setting, row)


def test_public_origins() -> None:
    from spider_server.settings import parse_origins

    assert parse_origins("") == ()
    assert parse_origins("https://Spider.example, http://localhost:8765/") == (
        "https://spider.example",
        "http://localhost:8765",
    )
    for bad in ("spider.example", "ftp://spider.example", "https://spider.example/page"):
        with pytest.raises(ConfigError, match="SPIDER_RACE_PUBLIC_ORIGIN"):
            Settings.from_env(_env("public_origin", bad))


def test_smtp_settings() -> None:
    taken = Settings.from_env(_env("smtp_url", "smtp+starttls://u:p%40ss@mail.example:587"))
    assert taken.smtp_url.startswith("smtp+starttls://")
    assert Settings.from_env({}).smtp_url == ""  # no e-mail
    for bad in ("mail.example", "http://mail.example", "smtp://", "smtp://h:99999", "smtp://h/x"):
        with pytest.raises(ConfigError, match="SPIDER_RACE_SMTP_URL") as info:
            Settings.from_env(_env("smtp_url", bad))
        assert "smtp://mail.example:587" in str(info.value)
    with pytest.raises(ConfigError) as info:
        Settings.from_env(_env("smtp_url", "smtps://user:hunter22@mail.example/x"))
    assert "hunter22" not in str(info.value)  # a password is never shown
    assert Settings.from_env(_env("smtp_from", "Spider <noreply@spider.example>")).smtp_from
    for bad in ("noreply", "a@b\r\nBcc: x@y"):
        with pytest.raises(ConfigError, match="SPIDER_RACE_SMTP_FROM"):
            Settings.from_env(_env("smtp_from", bad))
