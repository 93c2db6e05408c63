"""Redis clients as the server makes them: one Redis, or a Redis Cluster.

A URL ``redis://host:port/db`` (or ``rediss://``, ``unix://``) is one Redis; a URL
``redis+cluster://host:port[,host:port...]`` is a Redis Cluster reached through any of
the listed masters (the client learns the others and the slots from them). Every key of
one race shares the hash tag ``{race:<code>}``, so each race's scripts and transactions
touch one slot, and the same server code runs on both.

:func:`connect` is the one place where the clients' connection and retry settings live;
the server bench's baseline uses it too, so that both measure the same client.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import inspect
import math
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

import redis as _redis_package
from hiredis import pack_command as _hiredis_pack
from redis.asyncio import ConnectionPool, Redis, RedisCluster
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import (
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import (
    AuthenticationError,
    BusyLoadingError,
    RedisClusterException,
    RedisError,
    ResponseError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from ..errors import ConfigError

try:  # the hiredis reader's "no whole reply yet", to take replies that came together
    from redis._parsers.hiredis import NOT_ENOUGH_DATA as _NOT_ENOUGH_DATA
except ImportError:  # pragma: no cover - another redis-py: one reply a read
    _NOT_ENOUGH_DATA = None

__all__ = [
    "CLUSTER_SCHEME",
    "POOL_SIZE",
    "SUPPORTED",
    "CommandLink",
    "check_redis",
    "connect",
    "is_cluster",
    "not_answering",
    "raise_if_cancelled",
    "read_message",
    "reply_reader",
    "take_buffered",
]

SUPPORTED = "redis-py 5 to 8 with hiredis 2 or later"
"""The redis-py releases whose private attributes this module uses (checked at start)."""

CLUSTER_SCHEME = "redis+cluster"
POOL_SIZE = 4096
"""Connections to one Redis a client opens at most (commands beyond fail as
``unavailable``). Few are in use at once: the commits of many players share one."""


_PACKABLE = frozenset({str, bytes, int})


class _FastPack:
    """Commands packed by hiredis (in C) rather than in Python: the same bytes for the
    arguments the server sends (text, bytes, integers); anything else as before. Every
    move's script call has some 30 arguments (what it saves: README, "Under load")."""

    def pack_command(self, *args: Any) -> list[bytes]:
        head = args[0] if args else None
        if type(head) is str and " " not in head and _PACKABLE.issuperset(map(type, args)):
            return [_hiredis_pack(args)]
        packed: list[bytes] = super().pack_command(*args)  # type: ignore[misc]
        return packed


class FastConnection(_FastPack, Connection):
    pass


class FastSSLConnection(_FastPack, SSLConnection):
    pass


class FastUnixConnection(_FastPack, UnixDomainSocketConnection):
    pass


_FAST = {
    Connection: FastConnection,
    SSLConnection: FastSSLConnection,
    UnixDomainSocketConnection: FastUnixConnection,
}


def is_cluster(url: str) -> bool:
    """Whether ``url`` names a Redis Cluster (``redis+cluster://``)."""
    return urlsplit(url).scheme == CLUSTER_SCHEME


def _cluster_nodes(url: str) -> list[ClusterNode]:
    netloc = urlsplit(url).netloc.rsplit("@", 1)[-1]
    nodes = []
    for part in netloc.split(","):
        host, _, port = part.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ConfigError(f"cluster URL {url!r}: each node is host:port")
        nodes.append(ClusterNode(host.strip("[]"), int(port)))
    return nodes


def connect(url: str, *, health: bool = False) -> Any:
    """A client for ``url`` (:class:`redis.asyncio.Redis` or
    :class:`redis.asyncio.RedisCluster`, both with the same commands).

    The main client retries a command after a lost connection (every write of the server
    is a check-and-set, so a retry after a lost reply is safe) with a short backoff: when
    Redis is away a request fails (``unavailable``) within a second. With ``health`` it asks
    once, within a second, without retries (for ``/healthz``).
    """
    if health:
        options: dict[str, Any] = {"socket_timeout": 1, "socket_connect_timeout": 1}
    else:
        options = {
            "socket_timeout": 10,
            "socket_connect_timeout": 1,
            "health_check_interval": 15,
            # 4 retries, 0.04 + 0.08 + 0.16 + 0.25 s apart: about half a second in all
            "retry": Retry(ExponentialBackoff(cap=0.25, base=0.02), 4),
            "retry_on_error": [RedisConnectionError, RedisTimeoutError],
        }
    if not is_cluster(url):
        pool = ConnectionPool.from_url(url, max_connections=POOL_SIZE, **options)
        pool.connection_class = _FAST.get(pool.connection_class, pool.connection_class)
        return Redis.from_pool(pool)
    parts = urlsplit(url)
    options.pop("health_check_interval", None)
    if health:
        options["retry"] = Retry(ExponentialBackoff(cap=0.1, base=0.01), 0)
    return RedisCluster(
        startup_nodes=_cluster_nodes(url),
        username=parts.username,
        password=parts.password,
        **options,
    )


async def not_answering(url: str) -> str | None:
    """Why Redis at ``url`` cannot serve the node, checked once (within about a second,
    with the health client of :func:`connect`): None when it answers PING (or answers
    that it is loading its data), else one line, ``does not answer (<why>)`` or ``refuses
    the node (<why>)``."""
    client = connect(url, health=True)
    try:
        await client.ping()
    except BusyLoadingError:
        return None
    except (AuthenticationError, ResponseError) as e:
        return f"refuses the node ({_one_line(e)})"
    except (RedisError, RedisClusterException, OSError) as e:
        return f"does not answer ({_one_line(e) or type(e).__name__})"
    finally:
        with contextlib.suppress(Exception):
            await client.aclose()
    return None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()).rstrip(".")


class CommandLink:
    """A connection of its own on which commands are pipelined: each batch is written at
    once, and one task reads every reply, in order. For the commits of a node's players:
    no pool checkout and no pipeline object per batch, and the replies come back in the
    order the commands ran. Any failure of the connection (or no reply within
    ``timeout`` seconds) fails every command still waiting, with a connection or timeout
    error, and the next batch connects again."""

    def __init__(self, redis: Redis, timeout: float = 10.0, *, name: str = "") -> None:
        self._pool = redis.connection_pool
        self._timeout = timeout
        self._name = "".join(
            c if c.isascii() and c.isprintable() and c != " " else "_" for c in name
        )
        """The connection's name in Redis (``CLIENT SETNAME``, which takes no spaces;
        empty: none), as ``CLIENT LIST`` shows it."""
        self._conn: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._connecting = asyncio.Lock()
        self._closed = False

    async def run(self, commands: Sequence[Sequence[Any]]) -> list[Any]:
        """The replies to ``commands``, in order: an error reply, or the link's failure
        before the reply came, as an exception in its place (not raised). Raises only
        when it cannot connect (nothing was sent)."""
        loop = asyncio.get_running_loop()
        conn = self._conn if self._conn is not None else await self._connect()
        futures = [loop.create_future() for _ in commands]
        self._waiting.extend(futures)
        try:
            # below the client: the batch is written at once on the link's own connection,
            # and _read takes the replies in order (no pool checkout, no pipeline object)
            conn._writer.writelines(conn.pack_commands(commands))
        except Exception as e:
            self._fail(RedisConnectionError(f"writing to Redis failed: {e}"))
        try:
            async with asyncio.timeout(self._timeout):
                return list(await asyncio.gather(*futures, return_exceptions=True))
        except TimeoutError:
            error = RedisTimeoutError(f"Redis did not reply within {self._timeout:g} s")
            self._fail(error)
            return [error for _ in futures]

    async def _connect(self) -> Any:
        async with self._connecting:
            if self._closed:
                raise RedisConnectionError("the link is closed")
            if self._conn is None:
                conn = self._pool.make_connection()
                await conn.connect()
                if self._name:
                    await conn.send_command("CLIENT", "SETNAME", self._name)
                    await conn.read_response()
                self._conn = conn
                self._reader = asyncio.get_running_loop().create_task(self._read(conn))
            return self._conn

    async def _read(self, conn: Any) -> None:
        reader = reply_reader(conn)
        if _NOT_ENOUGH_DATA is None:
            reader = None
        try:
            while self._conn is conn:
                try:
                    reply = await conn.read_response(timeout=math.inf, disconnect_on_error=False)
                except ResponseError as e:
                    reply = e
                self._answer(conn, reply)
                # the replies that came with it, straight from the reader
                while reader is not None and self._conn is conn:
                    more = reader.gets()
                    if more is _NOT_ENOUGH_DATA:
                        break
                    self._answer(conn, more)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            if self._conn is conn:
                self._fail(e if isinstance(e, RedisError) else RedisConnectionError(str(e)))

    def _answer(self, conn: Any, reply: Any) -> None:
        if self._conn is not conn:
            return
        if not self._waiting:  # a reply nobody asked for: the stream is not to be trusted
            self._fail(RedisConnectionError("a reply came that no command waited for"))
            return
        future = self._waiting.popleft()
        if not future.done():
            if isinstance(reply, Exception):
                future.set_exception(reply)
            else:
                future.set_result(reply)

    def _fail(self, error: Exception) -> None:
        """Drop the connection; every command waiting fails with ``error``."""
        conn, self._conn = self._conn, None
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
        if conn is not None:
            task = asyncio.get_running_loop().create_task(conn.disconnect())
            _disconnecting.add(task)
            task.add_done_callback(_disconnecting.discard)
        waiting, self._waiting = self._waiting, collections.deque()
        for future in waiting:
            if not future.done():
                future.set_exception(error)

    async def aclose(self) -> None:
        self._closed = True
        reader = self._reader
        self._fail(RedisConnectionError("the link is closed"))
        if reader is not None:
            with contextlib.suppress(BaseException):
                await reader


_disconnecting: set[asyncio.Task[Any]] = set()


# -- below the client: replies that came together ---------------------------------------------


def reply_reader(conn: Any) -> Any:
    """The hiredis reader of a connection (holding the replies already received), or None
    when the client reads otherwise."""
    reader = getattr(getattr(conn, "_parser", None), "_reader", None)
    return reader if callable(getattr(reader, "gets", None)) else None


async def read_message(
    pubsub: PubSub, *, timeout: float, ignore_subscribe_messages: bool = False
) -> Any:
    """``pubsub.get_message(...)`` for a loop that reads a subscription until its task is
    cancelled: CancelledError when the task was cancelled during the read. The client's read
    has been seen to swallow the cancel (about one node close in six), and such a loop then
    ran on, holding the node's shutdown until its deadline."""
    message = await pubsub.get_message(
        ignore_subscribe_messages=ignore_subscribe_messages, timeout=timeout
    )
    raise_if_cancelled()
    return message


def raise_if_cancelled() -> None:
    """CancelledError when the running task has been asked to cancel. A loop that goes on
    after an error of a Redis call checks it: a cancel that reaches a call as its own read
    timeout fires comes out as the client's timeout error (seen as about one node close in
    six), and the loop, taking it for a passing outage, would run on until the node's
    shutdown deadline."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def take_buffered(pubsub: PubSub, take: Callable[[bytes, bytes], None]) -> None:
    """Hand ``take`` (channel, data) of every message that came with the last one read,
    straight from the reply reader rather than through the client's layers one message a
    call (1,000 spectators of a race on other nodes get a burst of events per turn)."""
    reader = reply_reader(pubsub.connection)
    while reader is not None:
        reply = reader.gets()
        if isinstance(reply, list) and len(reply) == 3 and reply[0] == b"message":
            take(reply[1], reply[2])
        elif isinstance(reply, (list, bytes)):  # (un)subscribe, pong: the client's
            message = await pubsub.handle_message(reply, ignore_subscribe_messages=True)
            if message is not None and message.get("type") == "message":
                take(message["channel"], message["data"])
        elif isinstance(reply, Exception):  # an error reply: as the client would raise it
            raise reply
        else:  # no whole reply left (the reader's marker for that)
            return


def check_redis() -> None:
    """ConfigError unless the installed redis-py and hiredis have what this module reads
    below the client's API (a connection's ``_writer`` and ``_parser._reader``, the
    hiredis parser's "not enough data" marker, ``pack_commands``, ``read_response``'s
    ``disconnect_on_error``, a pub/sub's ``connection`` and ``handle_message``)."""
    missing = []
    try:
        from redis._parsers.hiredis import _AsyncHiredisParser

        if "_reader" not in getattr(_AsyncHiredisParser, "__slots__", ()) and not hasattr(
            _AsyncHiredisParser(socket_read_size=65536), "_reader"
        ):
            missing.append("_AsyncHiredisParser._reader")
    except Exception as e:
        missing.append(f"the hiredis parser ({e})")
    if _NOT_ENOUGH_DATA is None:
        missing.append("redis._parsers.hiredis.NOT_ENOUGH_DATA")
    conn = Connection()
    if not hasattr(conn, "_writer"):
        missing.append("Connection._writer")
    if not hasattr(conn, "_parser"):
        missing.append("Connection._parser")
    if not callable(getattr(conn, "pack_commands", None)):
        missing.append("Connection.pack_commands")
    if "disconnect_on_error" not in inspect.signature(conn.read_response).parameters:
        missing.append("Connection.read_response(disconnect_on_error=)")
    if not callable(getattr(PubSub, "handle_message", None)):
        missing.append("PubSub.handle_message")
    pubsub = PubSub(ConnectionPool())
    if not hasattr(pubsub, "connection"):
        missing.append("PubSub.connection")
    if missing:
        version = getattr(_redis_package, "__version__", "?")
        raise ConfigError(
            f"redis-py {version} is not supported: the server reads replies below its API "
            f"and needs {', '.join(missing)}; install {SUPPORTED}"
        )
