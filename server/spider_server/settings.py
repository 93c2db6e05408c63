"""The server's settings: one dataclass, built from the environment and the command line.

Every setting has an environment variable (``SPIDER_RACE_<NAME>``, upper case); a command
line option, when given, wins over the environment, which wins over the default::

    settings = Settings.from_env().replace(port=9000).check()

Every value is checked at start against its range (:data:`RANGES`, :data:`CHOICES` and the
rules of :meth:`Settings.check`); a bad one is a :class:`ConfigError` whose one line names
the setting, the value and what it may be.
"""

from __future__ import annotations

import dataclasses
import math
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from spider_client.protocol import MAX_CLIENT_FRAME

from .errors import ConfigError

__all__ = [
    "Settings",
    "ENV_PREFIX",
    "RANGES",
    "CHOICES",
    "OPTIONS",
    "Range",
    "env_name",
    "redacted_url",
]

ENV_PREFIX = "SPIDER_RACE_"
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
    "max_time_limit": Range(1, 30 * DAY),
    "max_countdown": Range(0, 3600),
    "hello_timeout": Range(0, 3600, above=True),
    "idle_timeout": Range(0, 30 * DAY, above=True),
    "ping_interval": Range(0, DAY, above=True),
    "ping_timeout": Range(0, DAY, above=True),
    "progress_interval": Range(0, 10),
    "send_queue": Range(1, 10_000_000),
    "write_timeout": Range(0, 3600, above=True),
    "race_ttl": Range(60, 365 * DAY),
    "results_ttl": Range(60, 10 * 365 * DAY),
    "stream_max": Range(100, 100_000_000),
    "tick": Range(0, 10, above=True),
    "sweep_interval": Range(0, 3600, above=True),
    "presence_ttl": Range(1, 3600),
    "pool_size": Range(0, 10_000),
    "solve_budget": Range(1, 1_000_000_000),
    "hint_budget": Range(1, 1_000_000_000),
    "pool_interval": Range(0, 3600, above=True),
    "token_max_age": Range(0, 10 * 365 * DAY),
    "drain": Range(0, 3600),
    "match_wait": Range(0, 3600, above=True),
    "match_gather": Range(0, 3600),
    "match_max_players": Range(2, 100),
    "match_countdown": Range(0, 60),
    "match_time_limit": Range(1, 30 * DAY),
    "match_turn": Range(0, 60, above=True),
}
"""Every numeric setting's range."""

CHOICES: dict[str, tuple[str, ...]] = {
    "log_level": ("debug", "info", "warning", "error", "critical"),
    "log_format": ("text", "json"),
}
"""The settings that are one of a few words (any case)."""

OPTIONS: dict[str, str] = {
    "host": "--host",
    "port": "--port",
    "redis_url": "--redis",
    "data_dir": "--data-dir",
    "log_level": "--log-level",
    "log_format": "--log-format",
}
"""The settings ``spider-race serve`` also takes on its command line."""

REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+cluster")


def env_name(setting: str) -> str:
    """The environment variable of ``setting`` (``redis_url``: ``SPIDER_RACE_REDIS``)."""
    return ENV_PREFIX + ("REDIS" if setting == "redis_url" else setting.upper())


def _label(setting: str) -> str:
    option = OPTIONS.get(setting)
    return env_name(setting) + (f" ({option})" if option else "")


def _default_node() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True, kw_only=True)
class Settings:
    """How one server node runs. Times are seconds."""

    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = None
    """Use this Redis; None starts an embedded redis-server with its data in ``data_dir``."""
    data_dir: Path = Path("data")
    """The embedded Redis's files and the generated token secret live here."""
    secret: str | None = None
    """The token secret shared by every node (env ``SPIDER_RACE_SECRET``); None: generated
    once and kept in ``data_dir``."""
    node: str = field(default_factory=_default_node)
    """This node's name, shown in ``welcome``."""

    rate: float = 20.0
    """Messages per second a connection may send, on average."""
    burst: int = 40
    """Messages a connection may send at once (the token bucket's size)."""
    flood_strikes: int = 60
    """Messages refused for rate before the connection is closed with 1008."""
    max_frame: int = MAX_CLIENT_FRAME
    """The largest client frame accepted; a larger one gets an error, a second one closes."""
    max_players: int = 16
    """The most players a race may be created with."""
    max_races_per_player: int = 5
    """Races a player may be in at once (not counting finished ones)."""
    max_watched: int = 20
    """Races one connection may join (as player or spectator) at once."""
    max_time_limit: int = 4 * 3600
    max_countdown: int = 60
    hello_timeout: float = 10.0
    """A connection that has not said hello within this is closed."""
    idle_timeout: float = 600.0
    """A connection that sends nothing and watches no race for this long is closed."""
    ping_interval: float = 20.0
    ping_timeout: float = 20.0
    progress_interval: float = 0.1
    """Progress that comes to a player within this many seconds of the last one sent is
    held, and sent together at most this much later: the latest of each player, in one
    frame (spectators get every event at once). 0: every progress at once."""
    send_queue: int = 2000
    """Frames queued for a slow reader before its connection is closed."""
    write_timeout: float = 10.0
    """Seconds a connection closed for reading too slowly gets to take its queued frames
    and the close; then it is cut."""

    race_ttl: int = 6 * 3600
    """Seconds an unfinished race's keys live after they were last refreshed: by any race
    change, and by a player's first action and every 64th after (keep it above the longest
    time limit)."""
    results_ttl: int = 7 * 24 * 3600
    """Seconds a finished race's keys (results, replays) live."""
    stream_max: int = 20000
    """Events kept per race for catch-up (approximately); older ones give a snapshot."""
    tick: float = 0.05
    """How often a node looks for due countdowns and time limits of races it watches."""
    sweep_interval: float = 1.0
    """How often a node checks watched races for events it may have missed."""
    presence_ttl: float = 30.0
    """How long a node's claim that a connection watches a race lasts without refresh."""
    pool_size: int = 3
    """Proven-winnable seeds kept ready per variant asked for (0: none kept; races
    waiting for one are still served)."""
    solve_budget: int = 200_000
    """Positions the solver may search to prove one seed winnable."""
    hint_budget: int = 20_000
    """Positions the solver may search for one hint."""
    pool_interval: float = 0.5
    """How often a node looks for seeds to prove (waiting races, pools below size)."""

    drain: float = 5.0
    """Seconds between SIGTERM and closing the connections: ``/readyz`` answers 503 from
    the signal on, so that load balancers stop sending new players here, while the
    connections open are still served; then each is closed with 1012. 0: close at once."""

    match_wait: float = 30.0
    """The most seconds a quick-match player waits while anyone else is queued for the
    same variant: from then on they are matched whatever the ratings."""
    match_gather: float = 3.0
    """Seconds a quick match waits for more players (up to ``match_max_players``) before
    starting with fewer (more than ``match_wait`` counts as ``match_wait``)."""
    match_max_players: int = 4
    """The most players a quick-match race has."""
    match_countdown: int = 5
    """The countdown of a quick-match race, seconds."""
    match_time_limit: int = 900
    """The time limit of a quick-match race, seconds."""
    match_turn: float = 0.25
    """How often a node looks for quick-match groups (every node does; one script takes a
    group, so one node starts its race)."""

    token_max_age: int = 0
    """Seconds a session token is accepted after it was issued (every ``welcome`` issues
    a fresh one); 0: tokens do not expire."""
    log_level: str = "info"
    """The least severe log records written: debug, info, warning, error or critical."""
    log_format: str = "text"
    """``text`` (one readable line per record) or ``json`` (one JSON object per line)."""

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes``; a change that is None keeps the current value."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``SPIDER_RACE_*`` variables (``SPIDER_RACE_REDIS`` for the URL),
        checked (:meth:`check`); :class:`ConfigError` for a value of the wrong type or out
        of its range. An empty variable counts as not set."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = env_name(f.name)
            raw = env.get(name)
            if raw is None or raw == "":
                continue
            kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
            try:
                if kind == "int":
                    values[f.name] = int(raw)
                elif kind == "float":
                    values[f.name] = float(raw)
                elif kind == "Path":
                    values[f.name] = Path(raw)
                else:
                    values[f.name] = raw
            except ValueError:
                what = RANGES[f.name].describe(kind) if f.name in RANGES else f"a {kind}"
                raise ConfigError(f"{name}={raw!r} is not valid: {what}") from None
        return cls(**values).check()

    def check(self) -> Settings:
        """This, when every setting is within its range; else :class:`ConfigError` naming
        the first that is not (its variable, and its option if it has one), its value and
        its range. ``race_ttl`` must also exceed ``max_time_limit`` + ``max_countdown``."""
        for f in fields(self):
            value = getattr(self, f.name)
            kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
            problem = _problem(f.name, kind, value)
            if problem is not None:
                verdict = "is out of range" if f.name in RANGES else "is not valid"
                raise ConfigError(f"{_label(f.name)}={_show(f.name, value)} {verdict}: {problem}")
        if self.race_ttl <= self.max_time_limit + self.max_countdown:
            raise ConfigError(
                f"{ENV_PREFIX}RACE_TTL ({self.race_ttl}) must be longer than the longest "
                f"race: {ENV_PREFIX}MAX_TIME_LIMIT + {ENV_PREFIX}MAX_COUNTDOWN "
                f"({self.max_time_limit + self.max_countdown})"
            )
        return self


def redacted_url(url: str) -> str:
    """``url`` with its password, if it has one, shown as ``***`` (for messages and logs)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    user = parts.username or ""
    return parts._replace(netloc=f"{user}:***@{parts.netloc.rsplit('@', 1)[1]}").geturl()


def _show(name: str, value: Any) -> str:
    """``value`` for an error message: never a secret, nor a Redis URL's password."""
    if name == "secret":
        return "(not shown)"
    if name == "redis_url" and isinstance(value, str):
        value = redacted_url(value)
    return repr(str(value)) if isinstance(value, str | Path) else repr(value)


def _problem(name: str, kind: str, value: Any) -> str | None:
    """What ``value`` of setting ``name`` must be, when it is not; None when it is fine."""
    if name in RANGES:
        bound = RANGES[name]
        number_ok = isinstance(value, int | float) and not isinstance(value, bool)
        if kind == "int":
            number_ok = number_ok and float(value).is_integer()
        if not number_ok or not bound.admits(float(value)):
            return bound.describe(kind)
        return None
    if name in CHOICES:
        if not isinstance(value, str) or value.lower() not in CHOICES[name]:
            return "one of " + ", ".join(CHOICES[name])
        return None
    if name == "redis_url":
        if value is None:
            return None
        scheme = urlsplit(value).scheme if isinstance(value, str) else ""
        if scheme not in REDIS_SCHEMES:
            return "a URL of scheme " + ", ".join(s + "://" for s in REDIS_SCHEMES)
        return None
    if name == "secret":
        if value is None:
            return None
        if not isinstance(value, str) or not all(item.strip() for item in value.split(",")):
            return "one or more secrets separated by commas, none of them empty"
        return None
    if name == "node":
        if not isinstance(value, str) or not value or len(value) > 100:
            return "1 to 100 characters without spaces"
        if not value.isprintable() or any(c.isspace() for c in value):
            return "1 to 100 characters without spaces"
        return None
    if name == "host":
        if not isinstance(value, str) or not value or any(c.isspace() for c in value):
            return "an address or host name"
        return None
    if name == "data_dir":
        if not str(value):
            return "a folder"
        return None
    return None  # pragma: no cover - every field is named above
