"""Running a node: ``spider-race serve`` and ``python -m spider_server``.

Without a Redis URL the node starts an embedded redis-server (AOF in the data folder) and
stops it on exit. SIGTERM or SIGINT: stop accepting, close every connection with 1012
(clients reconnect, to this node once it is back or to another), finish, exit 0.

Exit status: 0 after SIGTERM or SIGINT, 2 for a bad setting (one line on standard error
naming it, its value and its range), 1 for another error the server names.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from .embedded import RedisProcess, redis_password
from .errors import ConfigError, ServerError
from .logs import FORMATS, LEVELS
from .logs import configure as configure_logs
from .node import Node
from .settings import Settings
from .tokens import load_secret

__all__ = ["serve_command", "run", "main"]

log = logging.getLogger("spider_server")


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
    """Serve until SIGTERM or SIGINT (or until the task is cancelled)."""
    embedded: RedisProcess | None = None
    redis_url = settings.redis_url
    if redis_url is None:
        folder = settings.data_dir / "redis"
        embedded = RedisProcess(
            folder, maxmemory=settings.redis_maxmemory, password=redis_password(folder)
        )
        embedded.start()  # from the main thread: it dies with this process
        redis_url = embedded.url
        log.info("embedded redis-server on port %d, data in %s", embedded.port, embedded.data_dir)
    try:
        secret = load_secret(
            settings.secret, settings.data_dir, max_age=settings.token_max_age or None
        )
        node = Node(settings, redis_url=redis_url, secret=secret)
        await node.start()
        quiet_garbage_collector()
        log.info("node %s serving ws://%s:%d/ws", settings.node, settings.host, node.port)
        print(f"spider-race serving ws://{settings.host}:{node.port}/ws", flush=True)
        await node.serve_until_signalled(ready)
    finally:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


def _settings(
    host: str | None,
    port: int | None,
    redis: str | None,
    data_dir: str | None,
    log_level: str | None = None,
    log_format: str | None = None,
) -> Settings:
    return (
        Settings.from_env()
        .replace(
            host=host,
            port=port,
            redis_url=redis,
            data_dir=Path(data_dir) if data_dir else None,
            log_level=log_level,
            log_format=log_format,
        )
        .check()
    )


def serve_command(args: argparse.Namespace) -> int:
    """``spider-race serve``: ``args.host``, ``args.port``, ``args.redis``, ``args.data_dir``,
    ``args.log_level``, ``args.log_format`` (each None when not given). Returns the exit
    status."""
    try:
        settings = _settings(
            args.host,
            args.port,
            args.redis,
            args.data_dir,
            getattr(args, "log_level", None),
            getattr(args, "log_format", None),
        )
        configure_logs(settings.log_level, settings.log_format)
        asyncio.run(run(settings))
    except ConfigError as e:
        print(f"spider-race serve: {e}", file=sys.stderr)
        return 2
    except ServerError as e:
        print(f"spider-race serve: {e}", file=sys.stderr)
        return 1
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
        "--data-dir",
        default=None,
        metavar="DIR",
        help="data folder of the embedded Redis and the generated token secret (default data)",
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
