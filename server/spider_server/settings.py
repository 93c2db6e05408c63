"""The server's settings: one dataclass, built from the environment and the command line.

Every setting has an environment variable (``SPIDER_RACE_<NAME>``, upper case); a command
line option, when given, wins over the environment, which wins over the default::

    settings = Settings.from_env().replace(port=9000).check()

Every value is checked at start (:data:`RANGES`, :data:`CHOICES`, :meth:`Settings.check`):
a bad one is a :class:`ConfigError` whose one line names the setting, value and range.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from spider_client.protocol import MAX_CLIENT_FRAME

from .errors import ConfigError
from .limits import parse_networks
from .ranges import CHECKS, CHOICES, RANGES, Range, parse_origins, time_limits
from .workers.settings import default_workers

__all__ = ["Settings", "ENV_PREFIX", "RANGES", "CHOICES", "OPTIONS", "Range", "env_name",
           "redacted_url", "parse_origins", "time_limits"]  # fmt: skip

ENV_PREFIX = "SPIDER_RACE_"

OPTIONS: dict[str, str] = {
    "host": "--host",
    "port": "--port",
    "redis_url": "--redis",
    "database_url": "--database",
    "data_dir": "--data-dir",
    "log_level": "--log-level",
    "log_format": "--log-format",
}
"""The settings ``spider-race serve`` also takes on its command line."""

REDIS_SCHEMES = ("redis", "rediss", "unix", "redis+cluster")
DATABASE_SCHEMES = ("postgresql", "postgres")


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
    database_url: str | None = None
    """Keep finished races, histories and ratings in this PostgreSQL (``postgresql://``).
    None: ``spider-race serve`` starts an embedded PostgreSQL with its data in
    ``data_dir``; a node made in-process with none keeps no archive (its finished races
    live ``results_ttl`` in Redis, as before the archive)."""
    data_dir: Path = Path("data")
    """The embedded Redis's and PostgreSQL's files and the generated token secret live
    here."""
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
    max_actions: int = 10_000
    """Actions a game may have; past it a move or undo is ``too_many_actions``."""
    max_time_limit: int = 4 * 3600
    max_countdown: int = 60
    hello_timeout: float = 10.0
    """A connection that has not said hello within this is closed."""
    idle_timeout: float = 600.0
    """A connection that sends nothing and watches no race for this long is closed."""
    ping_interval: float = 20.0
    ping_timeout: float = 20.0
    progress_interval: float = 0.1
    """Progress to a player within this of the last sent is held, and sent together at most
    this much later, the latest of each player (0: every progress at once)."""
    commit_spacing: float = 0.01
    """The least time between two writes of players' actions to Redis (0: none)."""
    store_layout: int = 1
    """How a player's actions are written to Redis: 1 as 0.2.0 reads them, 2 with two
    commands a move fewer; both are read (docs/server.md, "A player's keys")."""
    send_queue: int = 2000
    """Frames queued for a slow reader before its connection is closed."""
    send_bytes: int = 8 << 20
    """Bytes a slow reader's connection may have waiting (frames queued, the socket's
    write buffer, pongs included) before it is closed like one with ``send_queue`` frames
    (keep it above the largest frame: a finished race's ``joined``)."""
    node_send_bytes: int = 256 << 20
    """Bytes queued for slow readers on the whole node: a slow reader whose frame would
    pass it is closed."""
    snapshot_cache: int = 32 << 20
    """Bytes of finished races' snapshots kept encoded, shared by every ``joined`` of
    them (the least recently asked for go first; 0: none kept)."""
    address_connections: int = 100
    """Websocket connections open at once from one client address (more get HTTP 429)."""
    address_new_players: int = 30
    """Hellos without a token (each makes a new player) a minute from one address; past
    it the hello gets ``rate_limited`` and the connection is closed with 1013 and the
    seconds to wait (docs/server.md, "Limits")."""
    address_returns: int = 120
    """Hellos with a token or a session cookie (each asks the database, on a server that
    keeps accounts) a minute from one address; past it the hello gets ``rate_limited``
    and the connection is closed with 1013 and the seconds to wait."""
    address_creations: int = 30
    """Races created a minute from one address (``rate_limited`` past it)."""
    player_creations: int = 10
    """Races created a minute by one player (``rate_limited`` past it)."""
    player_open_races: int = 2
    """Public races of one player waiting in the lobby's list at once (a further public
    ``create_race`` is refused: ``too_many_races``)."""
    address_open_races: int = 5
    """Public races from one address waiting in the lobby's list at once (likewise)."""
    open_list_length: int = 100
    """Races one ``open_races`` reply lists at most (after its filters)."""
    address_wrong_joins: int = 30
    """Joins a minute from one address with a code that names no race; past it every
    join by code from there gets ``rate_limited`` until the bucket refills."""
    address_exports: int = 60
    """Finished races' records (``GET /races/<code>.json``) a minute from one address; past
    it the request gets 429 with ``Retry-After`` before any store is asked."""
    trusted_proxies: str = ""
    """Addresses and CIDRs of the deployment's load balancers, comma-separated: only
    their ``X-Forwarded-For`` or PROXY protocol line names a client's address (empty: no
    one's; the peer's address counts)."""
    fd_reserve: int = 64
    """Open files kept free: with fewer left under the process's limit, new connections
    get HTTP 503 (``/healthz`` is still answered)."""
    redis_maxmemory: str = "1gb"
    """The embedded Redis's ``maxmemory`` (with ``noeviction``: writes past it are
    refused, and the node answers ``unavailable``)."""
    write_timeout: float = 10.0
    """Seconds a connection closed for reading too slowly gets to take its queued frames
    and the close; then it is cut."""

    race_ttl: int = 6 * 3600
    """Seconds an unfinished race's keys live after they were last refreshed: by any race
    change, and by a player's first action and every 64th after (keep it above the longest
    time limit)."""
    results_ttl: int = 7 * 24 * 3600
    """Seconds a finished race's keys (results, replays) live in Redis when it is not
    archived (no database)."""
    archived_ttl: int = 3600
    """Seconds a finished race's keys stay in Redis once its record is in the database
    (reads of it go to the database after)."""
    archive_backlog_max: int = 10000
    """Finished races waiting for the database at most: past it, creating races and quick
    match answer ``unavailable`` (Redis memory stays bounded while the database is down)."""
    address_keep_days: int = 30
    """Days the address each player joined a rated race from is kept (the operators'
    report, ``spider-race admin report``); older ones are deleted."""
    database_pool: int = 10
    """Connections a node keeps to the database at most."""
    database_statement_timeout: float = 10.0
    """Seconds a database statement may take before it is cancelled."""
    stream_max: int = 20000
    """Events kept per race for catch-up (approximately); older ones give a snapshot."""
    tick: float = 0.05
    """How often a node looks for due countdowns and time limits of races it watches."""
    sweep_interval: float = 1.0
    """How often a node checks watched races for events it may have missed."""
    presence_ttl: float = 30.0
    """How long a node's claim that a connection watches a race lasts without refresh; a
    player of a running race without a live claim is ``away``. Nodes renew their claims,
    and sweep the running races they watch for players away or back, every third of it."""
    away_grace: int = 60
    """Seconds a player may be away from a running race, in all (every spell away summed),
    before they are out as ``abandoned`` (and a position offering only undo may last before
    the player is ``stuck``): the default of a race's ``away_grace`` option."""
    idle_limit: int = 180
    """Seconds a player may go without an action (move, deal or undo) in a running race,
    from the start or their last one, before they are out as ``idle``: the default of a
    race's ``idle_limit`` option (which may be 30 to 3,600)."""
    rated_idle_limit: int = 120
    """The ``idle_limit`` of every rated race, quick matches included (fixed: a rated
    ``create_race`` may not ask for another)."""
    rated_pair_per_day: int = 3
    """Rated races a pair may race in ``rated_pair_window`` and still rate each other."""
    rated_pair_window: float = 86400.0
    """The window of ``rated_pair_per_day``, seconds."""
    rated_time_limits: str = ""
    """The time limits a rated race may have, seconds, comma-separated, for every variant
    (empty: each variant's own set, docs/server.md)."""
    rematch_wait: float = 15.0
    """Seconds a finished race's rematch offer waits for its players after the first
    accepts; then the rematch is made with those who did."""
    pool_size: int = 3
    """Proven-winnable seeds kept ready per variant asked for (0: none kept; races
    waiting for one are still served)."""
    solve_budget: int = 200_000
    """Positions the solver may search to prove one seed winnable."""
    hint_budget: int = 20_000
    """Positions the solver may search for one hint."""
    pool_interval: float = 0.5
    """How often a node looks for seeds to prove (waiting races, pools below size)."""
    hints_per_race: int = 100
    """Hints one player may ask for in one race; more are refused (``rate_limited``)."""
    player_hints: int = 60
    """Hints a minute one player may ask for, every race together (``rate_limited``)."""
    address_hints: int = 300
    """Hints a minute from one client address, all its players together."""
    hint_quick_budget: int = 8_000
    """Positions searched for a hint asked for before its prefetch found it (at most
    ``hint_budget``): a budget answered within about half a second."""
    prefetch_per_race: int = 2_000
    """Hints searched before they are asked for (prefetches, at ``hint_budget``) in one
    race on one node, every player together (0: none)."""
    hint_cache_entries: int = 2_048
    """Hints kept per node, by full position, for the hints asked for later."""
    hint_cache_bytes: int = 4 << 20
    """Bytes of positions and moves those hints may hold."""

    # the solver's worker processes (:mod:`.workers`; the node's own process never
    # runs the solver)
    solver_workers: int = field(default_factory=default_workers)
    """Worker processes that run the solver (default: the cores less one, at least one)."""
    solver_warm: int = 1
    """Workers started with the node; the others start when jobs wait (0: none before the
    first job)."""
    solver_queue: int = 64
    """Solver jobs that may wait per priority (hints, races' proofs, refills); more are
    refused (``rate_limited``)."""
    hint_deadline: float = 10.0
    """Seconds one hint may run in its worker; then the worker is killed and the hint is
    the players' ranking of moves."""
    proof_deadline: float = 60.0
    """Seconds proving one deal may run in its worker before the worker is killed (the
    seed counts as not proven)."""
    solve_deadline: float = 300.0
    """Seconds one general search may run in its worker before the worker is killed."""
    par_deadline: float = 600.0
    """Seconds the search for one finished deal's par may run in its worker before the
    worker is killed (the deal then has no par)."""
    par_budget: int = 200_000
    """Positions the search for a finished deal's par may count (:func:`spider_engine.par.
    par`); a deal it does not settle within them has no par (0: no par is computed)."""
    proofs_per_identity: int = 2
    """Deals one player may have proven for them at once (races they created that wait
    for a proven deal, daily deals they asked for); more are refused (``rate_limited``)."""
    proofs_per_address: int = 4
    """The same per client address, all its players together."""
    solver_yield_after: int = 8
    """Solver jobs of higher priorities taken while a lower one waits before the lower one
    gets a turn (0: strict priorities)."""
    solver_jobs_per_worker: int = 200
    """Jobs a worker runs before a fresh one replaces it (its memory returned)."""
    solver_nice: int = 19
    """Niceness added to each worker process (19: the most): the node's event loop, and
    whatever else runs on the machine, wins a contended core; the solver takes what is
    left."""
    solver_stop_grace: float = 1.0
    """On stop, seconds workers get to exit before they are killed."""
    refill_share: float = 0.25
    """The most of a core that a worker spends on the pool's refills (the share of wall
    time it computes, resting in between; pars and hints do not rest): on a machine
    whose cores are shared, any busy core slows the node's event loop (1: no rest)."""

    drain: float = 5.0
    """Seconds between SIGTERM and closing the connections: ``/readyz`` answers 503 from
    the signal on, so that load balancers stop sending new players here, while the
    connections open are still served; then each is closed with 1012. 0: close at once."""

    durability: str = "primary"
    """When an action counts as saved, and its ack is sent: ``primary`` (once the primary
    applied it, with its AOF policy), ``fsync`` (once the primary's AOF is fsynced:
    ``WAITAOF 1 0``) or ``replica`` (once at least one replica has it: ``WAIT 1``)."""
    durability_timeout: float = 2.0
    """Seconds a batch of commits waits for ``fsync`` or ``replica``; past it each of its
    actions fails as ``unavailable`` (applied on the primary, never acked)."""
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
    match_confirm: float = 10.0
    """Seconds every matched player has to join a quick-match race (joining confirms the
    seat; the countdown starts once all did): past it the match is called off, those who
    did not join wait before queueing again, and those who did are first in line when
    they queue again."""
    match_penalty: float = 30.0
    """Seconds a player who missed a match (or left one before its start) waits before
    queueing again; each further miss or leave within a day doubles it, up to
    ``match_penalty_max``. Counted per player and per client address."""
    match_penalty_max: float = 1800.0
    """The longest wait ``match_penalty`` grows to."""

    token_max_age: int = 0
    """Seconds a session token is accepted after it was issued (every ``welcome`` issues
    a fresh one); 0: tokens do not expire."""
    public_origin: str = ""
    """The origins the page is served from (``https://spider.example``; several separated
    by commas): a websocket upgrade that brings an account's cookie, and a request that
    signs in or acts by that cookie, must come from one of them. Empty: the node's own
    ``http://host:port``. The cookie is ``Secure`` when the first is ``https``."""
    session_lifetime: int = 30 * 24 * 3600
    """Seconds an account's session lives after it was last used."""
    address_signups: int = 10
    """Accounts made an hour from one address (an IPv6 address: its /64)."""
    smtp_url: str = ""
    """The SMTP server that sends the accounts' mails (``smtp://host:port``, ``smtps://``
    for TLS, ``smtp+starttls://``; ``user:password@`` to log in); empty: no e-mail."""
    smtp_from: str = ""
    """The mails' sender; empty: ``noreply@`` the first public origin's host."""
    mail_link_lifetime: int = 3600
    """Seconds an e-mailed link (an address verified, a password reset) works."""
    email_mails: int = 3
    """Mails an hour sent to one e-mail address."""
    address_mails: int = 10
    """Mails an hour asked for from one address (an IPv6 address: its /64)."""
    passkey_challenge_lifetime: int = 300
    """Seconds a passkey's challenge (to sign up, sign in, add one) may be answered in."""
    argon2_time_cost: int = 2
    """Argon2id passes over the memory when a password is hashed or checked."""
    argon2_memory: int = 65536
    """Argon2id's memory, KiB (64 MiB). Changed, each password is hashed again with the
    new parameters at its owner's next sign-in."""
    argon2_parallelism: int = 1
    """Argon2id's lanes."""
    password_hashing: int = 4
    """Passwords hashed or checked at once on a node; one more is answered 503 at once."""
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
            parse: Any = {"int": int, "float": float, "Path": Path}.get(kind, str)
            try:
                values[f.name] = parse(raw)
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
    if name in ("redis_url", "database_url", "smtp_url") and isinstance(value, str):
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
    if name == "database_url":
        if value is None:
            return None
        scheme = urlsplit(value).scheme if isinstance(value, str) else ""
        if scheme not in DATABASE_SCHEMES:
            return "a URL of scheme " + ", ".join(s + "://" for s in DATABASE_SCHEMES)
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
    if name == "trusted_proxies":
        try:
            parse_networks(value) if isinstance(value, str) else parse_networks("?")
        except ValueError as e:
            return f"addresses and CIDRs separated by commas ({e})"
        return None
    if name == "redis_maxmemory":
        if not isinstance(value, str) or not re.fullmatch(
            r"[1-9][0-9]*(b|kb|mb|gb)?", value.lower()
        ):
            return "a size such as 512mb or 1gb"
        return None
    if name in CHECKS:
        return CHECKS[name](value)
    if name == "data_dir":
        if not str(value):
            return "a folder"
        return None
    return None  # pragma: no cover - every field is named above
