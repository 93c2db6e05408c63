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

from typing import Any
from urllib.parse import urlsplit

from hiredis import pack_command as _hiredis_pack
from redis.asyncio import ConnectionPool, Redis, RedisCluster
from redis.asyncio.cluster import ClusterNode
from redis.asyncio.connection import (
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from .errors import ConfigError

__all__ = ["CLUSTER_SCHEME", "POOL_SIZE", "connect", "is_cluster"]

CLUSTER_SCHEME = "redis+cluster"
POOL_SIZE = 4096
"""Connections to one Redis a client opens at most (commands beyond fail as
``unavailable``). Few are in use at once: the commits of many players share one."""


_PACKABLE = frozenset({str, bytes, int})


class _FastPack:
    """Commands packed by hiredis (in C) rather than in Python: the same bytes for the
    arguments the server sends (text, bytes, integers); anything else as before."""

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
