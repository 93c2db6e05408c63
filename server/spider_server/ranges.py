"""The ranges of the server's numeric settings, and the words of its other settings
(:mod:`.settings` checks every value against them)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple
from urllib.parse import urlsplit

__all__ = ["CHECKS", "CHOICES", "DAY", "RANGES", "Range", "parse_origins", "time_limits"]

DAY = 24 * 3600


class Range(NamedTuple):
    """The values a number may take: ``low`` to ``high``; with ``above``, more than
    ``low`` (``low`` itself excluded)."""

    low: float
    high: float
    above: bool = False

    def admits(self, value: float) -> bool:
        if math.isnan(value):
            return False
        low_ok = value > self.low if self.above else value >= self.low
        return low_ok and value <= self.high

    def describe(self, kind: str) -> str:
        noun = "an integer" if kind == "int" else "a number"
        low, high = _number(self.low), _number(self.high)
        if self.above:
            return f"{noun} above {low} and at most {high}"
        return f"{noun} from {low} to {high}"


def _number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:g}"


RANGES: dict[str, Range] = {
    "port": Range(0, 65535),
    "rate": Range(0, 1_000_000, above=True),
    "burst": Range(1, 1_000_000),
    "flood_strikes": Range(1, 1_000_000),
    "max_frame": Range(512, 1 << 20),
    "max_players": Range(1, 100_000),
    "max_races_per_player": Range(1, 10_000),
    "max_watched": Range(1, 10_000),
    "max_actions": Range(100, 10_000_000),
    "max_time_limit": Range(1, 30 * DAY),
    "max_countdown": Range(0, 3600),
    "hello_timeout": Range(0, 3600, above=True),
    "idle_timeout": Range(0, 30 * DAY, above=True),
    "ping_interval": Range(0, DAY, above=True),
    "ping_timeout": Range(0, DAY, above=True),
    "progress_interval": Range(0, 10),
    "commit_spacing": Range(0, 0.1),
    "store_layout": Range(1, 2),
    "send_queue": Range(1, 10_000_000),
    "send_bytes": Range(65_536, 1 << 34),
    "node_send_bytes": Range(1 << 20, 1 << 40),
    "snapshot_cache": Range(0, 1 << 40),
    "address_connections": Range(1, 1_000_000),
    "address_new_players": Range(1, 1_000_000),
    "address_returns": Range(1, 1_000_000),
    "rated_pair_per_day": Range(1, 1000),
    "rated_pair_window": Range(60, 30 * 86400),
    "address_creations": Range(1, 1_000_000),
    "player_creations": Range(1, 1_000_000),
    "player_open_races": Range(1, 1000),
    "address_open_races": Range(1, 1_000_000),
    "open_list_length": Range(1, 2000),
    "address_wrong_joins": Range(1, 1_000_000),
    "address_exports": Range(1, 1_000_000),
    "fd_reserve": Range(8, 1_000_000),
    "write_timeout": Range(0, 3600, above=True),
    "race_ttl": Range(60, 365 * DAY),
    "results_ttl": Range(60, 10 * 365 * DAY),
    "archived_ttl": Range(0, 10 * 365 * DAY),
    "address_keep_days": Range(1, 3650),
    "archive_backlog_max": Range(1, 100_000_000),
    "database_pool": Range(1, 1000),
    "database_statement_timeout": Range(0.1, 3600),
    "stream_max": Range(100, 100_000_000),
    "tick": Range(0, 10, above=True),
    "sweep_interval": Range(0, 3600, above=True),
    "presence_ttl": Range(1, 3600),
    "away_grace": Range(1, 3600),
    "idle_limit": Range(30, 3600),
    "rated_idle_limit": Range(30, 3600),
    "rematch_wait": Range(0, 600, above=True),
    "pool_size": Range(0, 10_000),
    "solve_budget": Range(1, 1_000_000_000),
    "hint_budget": Range(1, 1_000_000_000),
    "pool_interval": Range(0, 3600, above=True),
    "token_max_age": Range(0, 10 * 365 * DAY),
    "session_lifetime": Range(300, 10 * 365 * DAY),
    "address_signups": Range(1, 1_000_000),
    "argon2_time_cost": Range(1, 100),
    "argon2_memory": Range(1024, 4 << 20),
    "argon2_parallelism": Range(1, 64),
    "password_hashing": Range(1, 1024),
    "mail_link_lifetime": Range(60, 30 * DAY),
    "email_mails": Range(1, 1_000_000),
    "address_mails": Range(1, 1_000_000),
    "passkey_challenge_lifetime": Range(10, 3600),
    "drain": Range(0, 3600),
    "hints_per_race": Range(1, 1_000_000),
    "player_hints": Range(1, 1_000_000),
    "address_hints": Range(1, 1_000_000),
    "hint_quick_budget": Range(1, 1_000_000_000),
    "prefetch_per_race": Range(0, 100_000_000),
    "hint_cache_entries": Range(1, 10_000_000),
    "hint_cache_bytes": Range(4096, 1 << 40),
    "solver_workers": Range(1, 256),
    "solver_warm": Range(0, 256),
    "solver_queue": Range(1, 100_000),
    "hint_deadline": Range(0, 3600, above=True),
    "proof_deadline": Range(0, 3600, above=True),
    "solve_deadline": Range(0, DAY, above=True),
    "par_deadline": Range(0, DAY, above=True),
    "par_budget": Range(0, 1_000_000_000),
    "proofs_per_identity": Range(1, 10_000),
    "proofs_per_address": Range(1, 10_000),
    "solver_yield_after": Range(0, 10_000),
    "solver_jobs_per_worker": Range(1, 1_000_000),
    "solver_nice": Range(0, 19),
    "solver_stop_grace": Range(0, 60, above=True),
    "refill_share": Range(0, 1, above=True),
    "durability_timeout": Range(0, 5, above=True),
    "match_wait": Range(0, 3600, above=True),
    "match_gather": Range(0, 3600),
    "match_max_players": Range(2, 100),
    "match_countdown": Range(0, 60),
    "match_time_limit": Range(1, 30 * DAY),
    "match_turn": Range(0, 60, above=True),
    "match_confirm": Range(1, 120),
    "match_penalty": Range(0, 86400),
    "match_penalty_max": Range(0, 86400),
}
"""Every numeric setting's range."""

CHOICES: dict[str, tuple[str, ...]] = {
    "log_level": ("debug", "info", "warning", "error", "critical"),
    "log_format": ("text", "json"),
    "durability": ("primary", "fsync", "replica"),
}
"""The settings that are one of a few words (any case)."""


def parse_origins(text: str) -> tuple[str, ...]:
    """The origins of ``public_origin`` (ValueError naming a bad one)."""
    out = []
    for item in (part.strip().rstrip("/") for part in text.split(",")):
        if not item:
            continue
        parts = urlsplit(item)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path:
            raise ValueError(f"{item!r} is not an origin")
        out.append(item.lower())
    return tuple(out)


def _origins(value: Any) -> str | None:
    try:
        parse_origins(value)
    except (ValueError, AttributeError) as e:
        return f"origins such as https://spider.example, separated by commas ({e})"
    return None


SMTP_SCHEMES = ("smtp", "smtps", "smtp+starttls")


def _smtp_url(value: Any) -> str | None:
    if value == "":
        return None
    try:
        parts = urlsplit(value)
        ok = parts.scheme in SMTP_SCHEMES and bool(parts.hostname) and parts.path in ("", "/")
        parts.port  # noqa: B018 - a bad port raises ValueError
    except (ValueError, TypeError, AttributeError):
        ok = False
    return (
        None
        if ok
        else "empty, or a URL such as smtp://mail.example:587 (smtps://, smtp+starttls://)"
    )


def _smtp_from(value: Any) -> str | None:
    text = value if isinstance(value, str) else "?"
    if text and ("@" not in text or any(c in text for c in "\r\n")):
        return "empty, or an address such as noreply@spider.example (a name may go before it)"
    return None


def time_limits(text: str) -> tuple[int, ...]:
    """The seconds of a comma-separated list (``SPIDER_RACE_RATED_TIME_LIMITS``)."""
    return tuple(int(part) for part in text.split(",") if part.strip())


def _time_limits(value: Any) -> str | None:
    try:
        limits = time_limits(value if isinstance(value, str) else "?")
    except ValueError:
        limits = (0,)
    if any(not 1 <= s <= 4 * 3600 for s in limits):
        return "empty, or seconds separated by commas, each 1 to 14,400: 300,600,900"
    return None


CHECKS: dict[str, Callable[[Any], str | None]] = {
    "rated_time_limits": _time_limits,
    "public_origin": _origins,
    "smtp_url": _smtp_url,
    "smtp_from": _smtp_from,
}
"""The text settings checked by a function of their own: what the value must be, or None."""
