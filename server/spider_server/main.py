"""Running a node: ``spider-race serve`` and ``python -m spider_server``.

Without a Redis URL the node starts an embedded server (Valkey, AOF in the data folder)
and stops it on exit; with one, it checks at start that this Redis answers. The same for
the database: without a database URL it starts an embedded PostgreSQL (in the data
folder's ``postgres/``), with one it checks that this PostgreSQL answers. SIGTERM:
``/readyz`` answers 503 at once (load balancers send no new players), the connections
open are still served for ``SPIDER_RACE_DRAIN`` seconds, then every one is closed with
1012 (clients reconnect, to this node once it is back or to another), and the node exits
0. SIGINT (Ctrl-C), or a second signal while draining, closes at once.

A node that cannot start prints one line on standard error, ``spider-race serve: …``,
naming what is wrong and what to do, and exits with a status of its own
(:data:`EXIT_STATUSES`):

- 0: stopped by SIGTERM or SIGINT;
- 1: another error the server names;
- 2: a bad setting (naming it, its value and its range);
- 3: it cannot listen on its address and port (in use, not an address of this machine,
  no permission);
- 4: the Redis of ``--redis`` does not answer at start, or refuses the node;
- 5: the embedded server cannot start, or the data folder cannot be used;
- 6: the PostgreSQL of ``--database`` does not answer at start, or refuses the node (its
  schema is newer than the node knows).
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import gc
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from .embedded import RedisProcess, redis_password
from .errors import (
    ArchiveError,
    ConfigError,
    EmbeddedDatabaseError,
    EmbeddedRedisError,
    ServerError,
)
from .logs import FORMATS, LEVELS
from .logs import configure as configure_logs
from .node import Node
from .pgembedded import PostgresProcess
from .settings import Settings, redacted_url
from .store import archive, redisconn
from .tokens import load_secret

__all__ = [
    "EXIT_DATABASE",
    "EXIT_EMBEDDED",
    "EXIT_ERROR",
    "EXIT_LISTEN",
    "EXIT_REDIS",
    "EXIT_SETTING",
    "EXIT_STATUSES",
    "StartError",
    "serve_command",
    "run",
    "main",
]

log = logging.getLogger("spider_server")

EXIT_ERROR = 1
EXIT_SETTING = 2
EXIT_LISTEN = 3
EXIT_REDIS = 4
EXIT_EMBEDDED = 5
EXIT_DATABASE = 6
EXIT_STATUSES: dict[int, str] = {
    0: "stopped by SIGTERM or SIGINT",
    EXIT_ERROR: "another error the server names",
    EXIT_SETTING: "a bad setting",
    EXIT_LISTEN: "cannot listen on its address and port",
    EXIT_REDIS: "the Redis of --redis does not answer, or refuses the node",
    EXIT_EMBEDDED: "the embedded server cannot start, or the data folder cannot be used",
    EXIT_DATABASE: "the PostgreSQL of --database does not answer, or refuses the node",
}
"""Every exit status of ``spider-race serve``, and what it means (docs/server.md's table)."""


class StartError(ServerError):
    """The node cannot start: ``str()`` is the one line to print, ``status`` the exit
    status (one of :data:`EXIT_STATUSES`)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def quiet_garbage_collector() -> None:
    """Shorter, rarer pauses of the cyclic garbage collector, which stops everything while
    it runs: what start-up made (modules, classes, the node) lives as long as the process
    and is left out of every collection from now on, and the youngest generation is
    collected after 20,000 allocations instead of 700 (each connection and move makes
    short-lived objects in bursts). See ``spider_gc_pause_seconds`` in ``/metrics``."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)


async def run(settings: Settings, *, ready: asyncio.Event | None = None) -> None:
    """Serve until SIGTERM or SIGINT (or until the task is cancelled). :class:`StartError`
    when the node cannot start: the embedded server or the data folder fails, the Redis of
    ``settings.redis_url`` or the PostgreSQL of ``settings.database_url`` does not answer,
    or the address cannot be listened on. The node is given the database's URL (the
    embedded one's when there is none) in its settings."""
    embedded: RedisProcess | None = None
    database: PostgresProcess | None = None
    redis_url = settings.redis_url
    if redis_url is None:
        folder = settings.data_dir / "redis"
        try:
            embedded = RedisProcess(
                folder, maxmemory=settings.redis_maxmemory, password=redis_password(folder)
            )
            embedded.start()  # from the main thread: it dies with this process
        except EmbeddedRedisError as e:
            raise StartError(
                EXIT_EMBEDDED,
                f"the embedded server cannot start: {e} (its data folder is --data-dir or "
                "SPIDER_RACE_DATA_DIR, plus redis/; a Redis of your own is --redis)",
            ) from None
        redis_url = embedded.url
        log.info(
            "embedded %s on port %d, data in %s", embedded.server, embedded.port, embedded.data_dir
        )
    try:
        if embedded is None:
            await _check_redis(redis_url)
        secret = _secret(settings)
        database_url = settings.database_url
        if database_url is None:
            database = _start_database(settings)
            database_url = database.url
        else:
            await _check_database(database_url)
        settings = settings.replace(database_url=database_url)
        node = Node(settings, redis_url=redis_url, secret=secret)
        try:
            await node.start()
        except OSError as e:
            await node.close()
            raise StartError(EXIT_LISTEN, _cannot_listen(settings, e)) from None
        except ArchiveError as e:  # the database's schema is newer than this node
            await node.close()
            raise StartError(EXIT_DATABASE, f"the database refuses this node: {e}") from None
        quiet_garbage_collector()
        log.info("node %s serving ws://%s:%d/ws", settings.node, settings.host, node.port)
        print(f"spider-race serving ws://{settings.host}:{node.port}/ws", flush=True)
        await node.serve_until_signalled(ready)
    finally:
        if database is not None:
            await asyncio.to_thread(database.stop)
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


def _start_database(settings: Settings) -> PostgresProcess:
    """The embedded PostgreSQL in the data folder's ``postgres/``, started (from the main
    thread: it dies with this process)."""
    try:
        database = PostgresProcess(settings.data_dir / "postgres")
        database.start()
    except EmbeddedDatabaseError as e:
        raise StartError(
            EXIT_EMBEDDED,
            f"the embedded PostgreSQL cannot start: {e} (its data folder is --data-dir or "
            "SPIDER_RACE_DATA_DIR, plus postgres/; a PostgreSQL of your own is --database "
            "or SPIDER_RACE_DATABASE_URL)",
        ) from None
    log.info(
        "embedded %s on port %d, data in %s", database.server, database.port, database.data_dir
    )
    return database


async def _check_database(url: str) -> None:
    problem = await archive.not_answering(url)
    if problem is not None:
        raise StartError(
            EXIT_DATABASE,
            f"PostgreSQL at {redacted_url(url)} {problem}: start it, or give the URL of a "
            "PostgreSQL that runs (with its user, password and database) in --database or "
            "SPIDER_RACE_DATABASE_URL",
        )


async def _check_redis(url: str) -> None:
    problem = await redisconn.not_answering(url)
    if problem is not None:
        raise StartError(
            EXIT_REDIS,
            f"Redis at {redacted_url(url)} {problem}: start it, or give the URL of a Redis "
            "that runs (with its user and password) in --redis or SPIDER_RACE_REDIS",
        )


def _secret(settings: Settings) -> bytes:
    try:
        return load_secret(
            settings.secret, settings.data_dir, max_age=settings.token_max_age or None
        )
    except OSError as e:
        raise StartError(
            EXIT_EMBEDDED,
            f"cannot keep the token secret in {settings.data_dir}: {e.strerror or e}; give a "
            "writable folder in --data-dir (SPIDER_RACE_DATA_DIR), or set SPIDER_RACE_SECRET",
        ) from None


def _cannot_listen(settings: Settings, error: OSError) -> str:
    """The one line for a failed listen: the address, why, and what to do."""
    where = f"{settings.host}:{settings.port}"
    if error.errno == errno.EADDRINUSE:
        why = "the port is in use; stop what listens there, or choose another port"
        return f"cannot listen on {where}: {why} with --port (SPIDER_RACE_PORT)"
    if error.errno == errno.EADDRNOTAVAIL:
        why = "the address is not one of this machine's; choose another"
        return f"cannot listen on {where}: {why} with --host (SPIDER_RACE_HOST)"
    if error.errno == errno.EACCES:
        why = "permission denied (ports below 1024 need privileges); choose another port"
        return f"cannot listen on {where}: {why} with --port (SPIDER_RACE_PORT)"
    reason = " ".join(str(error.strerror or error).split())
    return (
        f"cannot listen on {where}: {reason}; check --host and --port "
        "(SPIDER_RACE_HOST, SPIDER_RACE_PORT)"
    )


def _settings(
    host: str | None,
    port: int | None,
    redis: str | None,
    data_dir: str | None,
    log_level: str | None = None,
    log_format: str | None = None,
    database: str | None = None,
) -> Settings:
    return (
        Settings.from_env()
        .replace(
            host=host,
            port=port,
            redis_url=redis,
            database_url=database,
            data_dir=Path(data_dir) if data_dir else None,
            log_level=log_level,
            log_format=log_format,
        )
        .check()
    )


def serve_command(args: argparse.Namespace) -> int:
    """``spider-race serve``: ``args.host``, ``args.port``, ``args.redis``,
    ``args.database``, ``args.data_dir``, ``args.log_level``, ``args.log_format`` (each None
    when not given). Returns the exit status."""
    try:
        settings = _settings(
            args.host,
            args.port,
            args.redis,
            args.data_dir,
            getattr(args, "log_level", None),
            getattr(args, "log_format", None),
            getattr(args, "database", None),
        )
        configure_logs(settings.log_level, settings.log_format)
        asyncio.run(run(settings))
    except ConfigError as e:
        print(f"spider-race serve: {e}", file=sys.stderr)
        return EXIT_SETTING
    except StartError as e:
        print(f"spider-race serve: {e}", file=sys.stderr)
        return e.status
    except ServerError as e:
        print(f"spider-race serve: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:  # pragma: no cover - SIGINT is handled inside
        pass
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spider_server", description="Run a spider-race server node."
    )
    _add_arguments(parser)
    return serve_command(parser.parse_args(argv))


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``spider-race serve`` and ``python -m spider_server``; each wins over
    its environment variable (see :mod:`spider_server.settings`)."""
    parser.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port (default 8765)")
    parser.add_argument(
        "--redis", default=None, metavar="URL", help="use this Redis instead of an embedded one"
    )
    parser.add_argument(
        "--database",
        default=None,
        metavar="URL",
        help="use this PostgreSQL (postgresql://...) instead of an embedded one",
    )
    parser.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="data folder of the embedded Redis and PostgreSQL and the generated token "
        "secret (default data)",
    )
    parser.add_argument(
        "--log-level",
        default=None,
        choices=LEVELS,
        type=str.lower,
        help="least severe log records written (default info)",
    )
    parser.add_argument(
        "--log-format",
        default=None,
        choices=FORMATS,
        type=str.lower,
        help="text lines, or one JSON object per line (default text)",
    )
