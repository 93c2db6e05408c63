"""The server's settings: one dataclass, built from the environment and the command line.

Every setting has an environment variable (``SPIDER_RACE_<NAME>``, upper case); a command
line option, when given, wins over the environment, which wins over the default::

    settings = Settings.from_env().replace(port=9000)
"""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from spider_client.protocol import MAX_CLIENT_FRAME

from .errors import ConfigError

__all__ = ["Settings", "ENV_PREFIX"]

ENV_PREFIX = "SPIDER_RACE_"


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

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes``; a change that is None keeps the current value."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if v is not None})

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``SPIDER_RACE_*`` variables (``SPIDER_RACE_REDIS`` for the URL);
        :class:`ConfigError` for a value of the wrong type."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for f in fields(cls):
            name = "REDIS" if f.name == "redis_url" else f.name.upper()
            raw = env.get(ENV_PREFIX + name)
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
                raise ConfigError(f"{ENV_PREFIX}{name}={raw!r} is not a {kind}") from None
        settings = cls(**values)
        if settings.race_ttl <= settings.max_time_limit + settings.max_countdown:
            raise ConfigError(
                f"{ENV_PREFIX}RACE_TTL ({settings.race_ttl}) must be longer than the longest "
                f"race: {ENV_PREFIX}MAX_TIME_LIMIT + {ENV_PREFIX}MAX_COUNTDOWN "
                f"({settings.max_time_limit + settings.max_countdown})"
            )
        return settings
