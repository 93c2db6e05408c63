"""The bench's own processes: an embedded Redis, the server node and the baseline's echo
server, started and stopped; the echo server and the spectators' workers are
``python -m spider_race.bench_server`` (:data:`WORKER_MODULE`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .tools import free_port

__all__ = ["SECRET", "WORKER_MODULE", "Processes"]

SECRET = "spider-race-bench-secret"
"""The secret of the bench's own server."""

WORKER_MODULE = "spider_race.bench_server"
"""What ``python -m`` runs for the echo server and the spectators' workers."""


PORT_TRIES = 5
"""Ports a server or echo process is started on, in turn, when the one it was given was
taken before it listened (another program's, between the look for a free one and the
bind)."""
PORT_TAKEN = ("the port is in use", "address already in use")
"""What a process that could not listen says (the node's words, then the system's)."""


class PortTaken(RuntimeError):
    """A child process ended because its port was taken."""


def _healthy(http_url: str) -> bool:
    try:
        with urllib.request.urlopen(http_url + "/healthz", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


def _listening(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


class Processes:
    """The bench's own processes: an embedded Redis, the server, the baseline's echo
    server; everything is stopped on exit (:meth:`close`)."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="spider-bench-"))
        # other users may pass through (not list): as root, the server's embedded
        # PostgreSQL runs as an unprivileged user, who must reach its folder in here
        self.folder.chmod(0o711)
        self.redis: Any = None
        self.database: Any = None
        self.children: list[subprocess.Popen[bytes]] = []

    def start_redis(self) -> str:
        """Start the embedded Redis (in the bench's folder); its URL."""
        from spider_server.embedded import RedisProcess

        self.redis = RedisProcess(self.folder / "redis")
        self.redis.start()
        return str(self.redis.url)

    def spawn(self, args: list[str], *, env: dict[str, str], log: str) -> subprocess.Popen[bytes]:
        """Start a child process, its output in the file ``log`` of the bench's folder."""
        out = open(self.folder / log, "wb")  # noqa: SIM115 - kept open for the child
        child = subprocess.Popen(args, env=env, stdout=out, stderr=subprocess.STDOUT)
        self.children.append(child)
        return child

    async def _until_ready(
        self, child: subprocess.Popen[bytes], log: str, ready: Callable[[], Awaitable[bool]]
    ) -> bool:
        """Look every 50 ms (400 times at most) whether ``child`` is ready; raise with its
        log if it ends first. Whether it became ready."""
        for _ in range(400):
            if child.poll() is not None:
                text = (self.folder / log).read_text()
                if any(words in text.lower() for words in PORT_TAKEN):
                    raise PortTaken(text)
                raise RuntimeError(text)
            if await ready():
                return True
            await asyncio.sleep(0.05)
        return False

    async def start_server(
        self,
        redis_url: str,
        *,
        max_players: int,
        ping_interval: float | None = None,
        settings: dict[str, str] | None = None,
    ) -> tuple[str, int]:
        """A server node process (a raised rate limit, races of ``max_players`` at least
        16, pings every ``ping_interval`` seconds when given, more ``SPIDER_RACE_*``
        ``settings``), once its ``/healthz`` answers; its websocket URL and pid."""
        env = {
            **os.environ,
            "SPIDER_RACE_SECRET": SECRET,
            "SPIDER_RACE_NODE": "bench",
            "SPIDER_RACE_RATE": "100000",
            "SPIDER_RACE_BURST": "100000",
            # every bench client comes from this machine's one address
            "SPIDER_RACE_ADDRESS_CONNECTIONS": "1000000",
            "SPIDER_RACE_ADDRESS_NEW_PLAYERS": "1000000",
            "SPIDER_RACE_ADDRESS_CREATIONS": "1000000",
            "SPIDER_RACE_PLAYER_CREATIONS": "1000000",
            "SPIDER_RACE_ADDRESS_WRONG_JOINS": "1000000",
            "SPIDER_RACE_MAX_PLAYERS": str(max(16, max_players)),
            "SPIDER_RACE_DRAIN": "0",  # no load balancer to drain from: SIGTERM closes at once
        }
        server_path = os.environ.get("SPIDER_BENCH_SERVER_PATH")
        if server_path:  # ``bench versus``: the node's code from another tree
            env["PYTHONPATH"] = server_path
        if ping_interval is not None:
            env["SPIDER_RACE_PING_INTERVAL"] = f"{ping_interval:g}"
        env.update(settings or {})
        if "SPIDER_RACE_DATABASE_URL" not in env:  # the nodes of one bench share one database
            env["SPIDER_RACE_DATABASE_URL"] = self.start_database()
        for _ in range(PORT_TRIES):  # a free port may be taken before the node listens
            port = free_port()
            args = [sys.executable, "-m", "spider_server", "--port", str(port)]
            args += ["--redis", redis_url, "--data-dir", str(self.folder / "server")]
            child = self.spawn(args, env=env, log="server.log")
            http = f"http://127.0.0.1:{port}"

            async def answers(http: str = http) -> bool:
                return await asyncio.to_thread(_healthy, http)

            try:
                healthy = await self._until_ready(child, "server.log", answers)
            except PortTaken:
                continue
            if healthy:
                return f"ws://127.0.0.1:{port}/ws", child.pid
            raise RuntimeError("the server did not become healthy")
        raise RuntimeError(f"no free port kept for the server in {PORT_TRIES} tries")

    def start_database(self) -> str:
        """The bench's embedded PostgreSQL (started once, in its folder); its URL."""
        from spider_server.pgembedded import PostgresProcess

        if self.database is None:
            self.database = PostgresProcess(self.folder / "postgres")
            self.database.start()
        return str(self.database.url)

    async def start_echo(self, redis_url: str) -> tuple[str, subprocess.Popen[bytes]]:
        """The baseline's echo server (:func:`.baseline.echo_server`), once it listens;
        its websocket URL and process."""
        for _ in range(PORT_TRIES):  # a free port may be taken before the echo listens
            port = free_port()
            args = [sys.executable, "-m", WORKER_MODULE, "echo", str(port), redis_url]
            child = self.spawn(args, env=dict(os.environ), log="echo.log")

            async def listening(port: int = port) -> bool:
                return _listening(port)

            try:
                started = await self._until_ready(child, "echo.log", listening)
            except PortTaken:
                continue
            if started:
                return f"ws://127.0.0.1:{port}/", child
            raise RuntimeError("the echo server did not start")
        raise RuntimeError(f"no free port kept for the echo server in {PORT_TRIES} tries")

    def stop(self, child: subprocess.Popen[bytes]) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        if child.poll() is None:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()

    def close(self) -> None:
        """Stop every child and Redis, and remove the bench's folder."""
        for child in self.children:
            self.stop(child)
        if self.redis is not None:
            self.redis.stop()
        if self.database is not None:
            self.database.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
