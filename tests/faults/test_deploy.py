"""deploy/: the compose file, the Redis configuration, the systemd unit, and the compose
file's topology run with real processes: two nodes behind Debian's HAProxy on loopback."""

from __future__ import annotations

import asyncio
import configparser
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import yaml

from tests.server.server_helpers import Client, Player

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def _need(program: str) -> str:
    """The program's path; without it a CI run fails loudly (.ci/run installs it) and a
    local run skips."""
    path = shutil.which(program)
    if path is None:
        if os.environ.get("CI"):
            pytest.fail(f"{program} is not installed: .ci/run installs it with apt-get")
        pytest.skip(f"{program} is not installed (apt-get install -y {program})")
    return path


def test_compose_file_is_well_formed() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"redis", "postgres", "node1", "node2", "haproxy"}
    volumes = set(compose.get("volumes") or {})
    for name, service in services.items():
        assert "image" in service or "build" in service, name
        for dep in service.get("depends_on") or []:
            assert dep in services, (name, dep)
        for mount in service.get("volumes") or []:
            source = mount.split(":", 1)[0]
            if source.startswith("./"):
                assert (DEPLOY / source).exists(), (name, source)
            else:
                assert source in volumes, (name, source)
    for node in ("node1", "node2"):
        command = services[node]["command"]
        assert command[:2] == ["spider-race", "serve"]
        assert command[command.index("--redis") + 1] == "redis://redis:6379/0"
        env = services[node]["environment"]
        assert "SPIDER_RACE_SECRET" in env and env["SPIDER_RACE_NODE"] == node
    assert (DEPLOY / services["node1"]["build"]["dockerfile"].split("/")[-1]).exists()
    _check_compose_database(services)
    lb = services["haproxy"]["environment"]
    assert lb["SPIDER_NODE1"] == "node1:8765" and lb["SPIDER_NODE2"] == "node2:8765"
    # docker compose's own check, where there is one
    if (
        shutil.which("docker")
        and subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0
    ):
        env = {**os.environ, "SPIDER_RACE_SECRET": "x"}
        done = subprocess.run(
            ["docker", "compose", "-f", str(DEPLOY / "compose.yaml"), "config", "-q"],
            env=env,
            capture_output=True,
        )
        assert done.returncode == 0, done.stderr


def _major(image: str) -> int:
    """The major version of an image's tag (``postgres:18`` -> 18)."""
    return int(image.rsplit(":", 1)[1].split(".")[0].split("-")[0])


def _check_compose_database(services: dict[str, Any]) -> None:
    """PostgreSQL 18 with its data in a volume, a password from the environment (or the
    env file) and a health check; every node archives into it once it is healthy."""
    pg = services["postgres"]
    assert pg["image"].split(":")[0] == "postgres" and _major(pg["image"]) == 18
    env = pg["environment"]
    assert env["POSTGRES_USER"] == "spider" and env["POSTGRES_DB"] == "spider"
    assert env["POSTGRES_PASSWORD"].startswith("${SPIDER_RACE_DATABASE_PASSWORD:?")
    assert "postgres-data:/var/lib/postgresql" in pg["volumes"]  # the 18 image's layout
    assert pg["healthcheck"]["test"][:2] == ["CMD", "pg_isready"]
    nodes = [name for name in services if name.startswith("node")]
    assert nodes
    from spider_server.settings import Settings

    for node in nodes:
        given = services[node]["environment"]["SPIDER_RACE_DATABASE_URL"]
        assert "${SPIDER_RACE_DATABASE_PASSWORD:?" in given, node  # the same password
        url = re.sub(r"\$\{SPIDER_RACE_DATABASE_PASSWORD:\?[^}]*\}", "pw", given)
        parts = urlsplit(url)
        assert parts.scheme == "postgresql" and parts.hostname == "postgres", node
        assert parts.port == 5432 and parts.path == "/spider", node
        assert parts.username == "spider" and parts.password == "pw", node
        assert services[node]["depends_on"]["postgres"]["condition"] == "service_healthy"
        settings = Settings.from_env({"SPIDER_RACE_DATABASE_URL": url})
        assert settings.database_url == url  # a URL the nodes take


def _kubernetes() -> dict[tuple[str, str], dict[str, Any]]:
    docs: dict[tuple[str, str], dict[str, Any]] = {}
    for name in ("spider-race.yaml", "secret.example.yaml"):
        for doc in yaml.safe_load_all((DEPLOY / "kubernetes" / name).read_text()):
            key = (doc["kind"], doc["metadata"]["name"])
            assert key not in docs, key
            docs[key] = doc
    return docs


def test_kubernetes_manifests_wire_valkey_postgres_and_the_nodes() -> None:
    docs = _kubernetes()
    secret = docs[("Secret", "spider-race")]
    keys = set(secret["stringData"])
    for kind, name in docs:
        if kind in ("StatefulSet", "Deployment"):
            labels = docs[(kind, name)]["spec"]["template"]["metadata"]["labels"]
            assert docs[(kind, name)]["spec"]["selector"]["matchLabels"] == labels
    pg = docs[("StatefulSet", "postgres")]["spec"]
    (container,) = pg["template"]["spec"]["containers"]
    assert container["image"].split(":")[0] == "postgres" and _major(container["image"]) == 18
    pg_env = {e["name"]: e for e in container["env"]}
    assert pg_env["POSTGRES_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"] in keys
    assert {"name": "data", "mountPath": "/var/lib/postgresql"} in container["volumeMounts"]
    assert pg["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    assert "pg_isready" in container["readinessProbe"]["exec"]["command"]
    assert docs[("Service", "postgres")]["spec"]["selector"] == {"app": "postgres"}
    valkey = docs[("StatefulSet", "redis")]["spec"]["template"]["spec"]["containers"][0]
    assert valkey["image"] == "valkey/valkey:9" and "noeviction" in valkey["args"]
    (node,) = docs[("Deployment", "spider-race")]["spec"]["template"]["spec"]["containers"]
    assert node["command"][:2] == ["spider-race", "serve"]
    env = {e["name"]: e for e in node["env"]}
    assert env["SPIDER_RACE_REDIS"]["value"] == "redis://redis:6379/0"
    for name in ("SPIDER_RACE_DATABASE_URL", "SPIDER_RACE_SECRET"):
        ref = env[name]["valueFrom"]["secretKeyRef"]
        assert ref["name"] == "spider-race" and ref["key"] in keys, name
    url = urlsplit(secret["stringData"]["database-url"])
    assert url.scheme == "postgresql" and url.hostname == "postgres" and url.path == "/spider"
    assert node["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert node["readinessProbe"]["httpGet"]["path"] == "/readyz"
    from spider_server.settings import Settings

    grace = docs[("Deployment", "spider-race")]["spec"]["template"]["spec"]
    assert grace["terminationGracePeriodSeconds"] > Settings().drain


def test_compose_runs_the_tests_valkey_and_the_image_installs_the_lock() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    redis = compose["services"]["redis"]
    assert redis["image"] == "valkey/valkey:9" and redis["command"][0] == "valkey-server"
    from spider_server.embedded import find_redis_server

    version = subprocess.run([find_redis_server(), "--version"], capture_output=True, text=True)
    assert "Valkey server v=9." in version.stdout  # the tests' server: the same major
    steps = [
        " ".join(line.split())
        for line in (DEPLOY / "Dockerfile").read_text().replace("\\\n", " ").splitlines()
        if line and not line.startswith("#")
    ]
    assert "COPY requirements.lock /tmp/requirements.lock" in steps
    install = next(step for step in steps if step.startswith("RUN pip install"))
    assert "--require-hashes -r /tmp/requirements.lock" in install
    assert "--no-deps /tmp/wheels/*.whl" in install and "pip check" in install
    health = next(step for step in steps if step.startswith("HEALTHCHECK"))
    assert "/healthz" in health and "/readyz" not in health  # liveness restarts a container


def test_haproxy_checks_readiness_within_the_drain() -> None:
    from spider_server.settings import Settings

    lines = [line.split() for line in (DEPLOY / "haproxy.cfg").read_text().splitlines()]
    send = next(words for words in lines if words[:2] == ["http-check", "send"])
    assert send[send.index("uri") + 1] == "/readyz"
    server = next(words for words in lines if words[:2] == ["default-server", "check"])
    inter = float(server[server.index("inter") + 1].removesuffix("s"))
    fall = int(server[server.index("fall") + 1])
    # a draining node is marked down before its connections are closed
    assert inter * fall < Settings().drain


def test_redis_conf_starts_a_persistent_redis(tmp_path: Path) -> None:
    from spider_server.embedded import find_redis_server, free_port

    port = free_port()
    # the file as it is, but for the folder (Redis enters "dir" as it reads it)
    text = (DEPLOY / "redis.conf").read_text().replace("\ndir /data\n", f"\ndir {tmp_path}\n")
    assert f"dir {tmp_path}" in text
    (tmp_path / "redis.conf").write_text(text)
    args = [find_redis_server(), str(tmp_path / "redis.conf"), "--port", str(port)]
    args += ["--bind", "127.0.0.1", "--daemonize", "no"]
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        from redis import Redis

        r = Redis(port=port)
        for _ in range(100):
            try:
                r.ping()
                break
            except Exception:
                if proc.poll() is not None:
                    pytest.fail(proc.stdout.read().decode() if proc.stdout else "exited")
                import time

                time.sleep(0.05)
        assert r.config_get("appendonly")["appendonly"] == "yes"
        assert r.config_get("appendfsync")["appendfsync"] == "everysec"
        assert r.config_get("maxmemory-policy")["maxmemory-policy"] == "noeviction"
        r.close()
    finally:
        proc.kill()
        proc.wait()


def test_systemd_unit() -> None:
    unit = configparser.ConfigParser(strict=False, interpolation=None)
    unit.optionxform = str  # type: ignore[assignment,method-assign]
    unit.read(DEPLOY / "spider-race@.service")
    assert set(unit.sections()) == {"Unit", "Service", "Install"}
    service = unit["Service"]
    assert "spider-race serve" in service["ExecStart"] and "%i" in service["ExecStart"]
    assert service["KillSignal"] == "SIGTERM" and service["Restart"] == "always"
    assert int(service["LimitNOFILE"]) >= 65536


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return str(r.read().decode())


@contextlib.asynccontextmanager
async def _haproxy(nodes: list[Any], tmp_path: Path) -> AsyncIterator[str]:
    """Debian's HAProxy running ``deploy/haproxy.cfg`` in front of two node processes,
    once it passes a request to one; the balancer's websocket URL. Its output (state
    changes of the servers among it) goes to ``haproxy.log`` in ``tmp_path``."""
    haproxy = _need("haproxy")
    port = _free_port()
    env = {
        **os.environ,
        "SPIDER_LB_BIND": f"127.0.0.1:{port}",
        "SPIDER_NODE1": f"127.0.0.1:{nodes[0].port}",
        "SPIDER_NODE2": f"127.0.0.1:{nodes[1].port}",
    }
    check = subprocess.run([haproxy, "-c", "-f", str(DEPLOY / "haproxy.cfg")], env=env)
    assert check.returncode == 0
    log = open(tmp_path / "haproxy.log", "wb")  # noqa: SIM115 - kept open for the process
    lb = subprocess.Popen(
        [haproxy, "-db", "-f", str(DEPLOY / "haproxy.cfg")], env=env, stdout=log, stderr=log
    )
    try:
        for _ in range(100):
            try:
                if "ok" in await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/healthz"):
                    break
            except OSError:
                await asyncio.sleep(0.1)
        yield f"ws://127.0.0.1:{port}/ws"
    finally:
        lb.terminate()
        lb.wait(10)
        log.close()


async def test_two_nodes_behind_haproxy(redis_server, server_process, tmp_path: Path) -> None:
    node1 = await server_process(redis_server.url)
    node2 = await server_process(redis_server.url)
    async with _haproxy([node1, node2], tmp_path) as url:
        # one player lands on each node (least connections)
        a = await Client.connect(url, name="alice")
        b = await Client.connect(url, name="bob")
        assert {a.welcome.node, b.welcome.node} == {"proc1", "proc2"}
        code = (await a.create(variant="spider1", countdown=0)).race.code
        await b.join(code)
        w = await Client.connect(url, name="watcher")
        await w.join(code, role="spectator")
        await a.ready(code)
        await b.ready(code)
        pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=1)
        pb = Player(b, code, (await b.expect("ack", lambda m: m.seq == 0)).view, seed=2)
        await pa.step()
        await pb.step()
        for c in (a, b):
            await w.expect("progress", lambda m, c=c: m.player.player == c.player)
        # each node's /metrics shows a player of the race
        for node in (node1, node2):
            text = await asyncio.to_thread(_get, node.http_url + "/metrics")
            lines = set(text.splitlines())
            assert 'spider_subscriptions{role="player"} 1' in lines, text
            assert 'spider_races{state="running"} 1' in lines
        for c in (a, b, w):
            await c.close()


async def test_a_draining_node_gets_no_new_players_through_haproxy(
    redis_server, server_process, tmp_path: Path
) -> None:
    drain = 8.0  # above the checks' 2 s x 2, with room for a slow machine
    node1 = await server_process(redis_server.url, SPIDER_RACE_DRAIN=f"{drain:g}")
    node2 = await server_process(redis_server.url)
    async with _haproxy([node1, node2], tmp_path) as url:
        first = [await Client.connect(url, name=f"p{i}") for i in range(2)]
        assert {c.welcome.node for c in first} == {"proc1", "proc2"}
        (staying,) = [c for c in first if c.welcome.node == "proc1"]
        signalled = time.monotonic()
        node1.process.send_signal(signal.SIGTERM)
        log = tmp_path / "haproxy.log"
        while "node1 is DOWN" not in log.read_text():
            assert time.monotonic() - signalled < drain, log.read_text()
            await asyncio.sleep(0.1)
        # node1 drains: its player is still connected, and every new one goes to node2
        # (with node1 up, least connections would give it one of these three)
        later = [await Client.connect(url, name=f"q{i}") for i in range(3)]
        assert [c.welcome.node for c in later] == ["proc2"] * 3
        assert staying.ws.close_code is None
        assert time.monotonic() - signalled < drain
        assert await staying.closed_with() == 1012
        assert await asyncio.to_thread(node1.process.wait, 20) == 0
        for c in [*first, *later]:
            await c.close()


# -- presence through the deploy's topology: real client processes ------------------------

PRESENCE_ENV = {"SPIDER_RACE_PRESENCE_TTL": "1.5"}
"""Short presence lifetimes for the nodes (the races' own away_grace is 10 s)."""


class PlayerProcess:
    """A player as its own process (``tests/faults/presence_client.py``): commands in on
    its standard input, what it sees out as JSON lines."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[dict[str, Any]] = []
        self._new = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, url: str, name: str, *args: str) -> PlayerProcess:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.faults.presence_client",
            url,
            name,
            *args,
            cwd=ROOT,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        async for line in self.process.stdout:
            self.lines.append(json.loads(line))
            self._new.set()

    async def first(self, predicate: Any, timeout: float = 60) -> dict[str, Any]:
        """The first line that ``predicate`` holds for (waiting for it)."""
        async with asyncio.timeout(timeout):
            while True:
                for line in self.lines:
                    if predicate(line):
                        return line
                self._new.clear()
                await self._new.wait()

    def events(self, kind: str, player: str | None = None) -> list[dict[str, Any]]:
        return [
            e
            for e in self.lines
            if e.get("event") == kind and (player is None or e.get("player") == player)
        ]

    async def do(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(f"{command}\n".encode())
        await self.process.stdin.drain()
        done = len([line for line in self.lines if line.get("ok") == command])
        await self.first(lambda _: len([x for x in self.lines if x.get("ok") == command]) > done)

    def kill(self) -> None:
        self.process.kill()

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        await self.process.wait()
        self._reader.cancel()


async def _three_players(url: str) -> tuple[str, list[PlayerProcess], list[dict[str, Any]]]:
    """A running race of three player processes through ``url``: its code, the players and
    who each is (their first line)."""
    alice = await PlayerProcess.start(url, "alice", "--create", "3", "--grace", "10")
    code = (await alice.first(lambda line: "code" in line))["code"]
    players = [alice] + [
        await PlayerProcess.start(url, n, "--join", code) for n in ("bob", "carol")
    ]
    for pl in players:
        await pl.first(lambda line: "code" in line)
    for pl in players:
        await pl.do("ready")
    for pl in players:
        await pl.do("move")
    return code, players, [pl.lines[0] for pl in players]


async def test_presence_of_three_client_processes_behind_haproxy(
    redis_server, server_process, tmp_path: Path
) -> None:
    """A client killed: the others see it away at once; a player who comes back within
    the grace plays on and everyone sees them back; one who does not is abandoned after
    the grace, and the race ends when the others finish (not at its time limit)."""
    node1 = await server_process(redis_server.url, **PRESENCE_ENV)
    node2 = await server_process(redis_server.url, **PRESENCE_ENV)
    async with _haproxy([node1, node2], tmp_path) as url:
        code, (alice, bob, carol), (a, b, c) = await _three_players(url)
        try:
            assert {a["node"], b["node"], c["node"]} == {"proc1", "proc2"}
            # bob's process is killed and he comes back within the grace
            bob.kill()
            for pl in (alice, carol):
                await pl.first(lambda e: e.get("event") == "away" and e["player"] == b["player"])
            bob = await PlayerProcess.start(url, "bob", "--join", code, "--token", b["token"])
            for pl in (alice, carol):
                await pl.first(lambda e: e.get("event") == "back" and e["player"] == b["player"])
            await bob.do("move")  # he plays on
            # carol's is killed for good: away, then abandoned after the grace
            carol.kill()
            for pl in (alice, bob):
                await pl.first(lambda e: e.get("event") == "away" and e["player"] == c["player"])
                out = await pl.first(
                    lambda e: e.get("event") == "progress" and e["player"] == c["player"]
                )
                assert out["status"] == "abandoned"
            assert not alice.events("finished")
            await alice.do("resign")
            await bob.do("move")
            await bob.do("resign")  # the last one still in: the race ends now
            for pl in (alice, bob):
                finished = await pl.first(lambda e: e.get("event") == "finished")
                assert finished["results"] == {
                    a["player"]: "resigned",
                    b["player"]: "resigned",
                    c["player"]: "abandoned",
                }
                assert not pl.events("progress", b["player"]) or all(
                    e["status"] == "resigned" for e in pl.events("progress", b["player"])
                )
        finally:
            for pl in (alice, bob, carol):
                await pl.close()


async def test_a_node_killed_under_client_processes_behind_haproxy(
    redis_server, server_process, tmp_path: Path
) -> None:
    """The node holding players' sockets is SIGKILLed; their clients live and reconnect
    through HAProxy: everyone sees them away and then back, and nobody is abandoned."""
    node1 = await server_process(redis_server.url, **PRESENCE_ENV)
    node2 = await server_process(redis_server.url, **PRESENCE_ENV)
    async with _haproxy([node1, node2], tmp_path) as url:
        code, players, who = await _three_players(url)
        try:
            doomed = {w["player"] for w in who if w["node"] == "proc1"}
            assert doomed and len(doomed) < 3
            node1.kill()
            for pl in players:
                for pid in doomed:
                    await pl.first(
                        lambda e, pid=pid: e.get("event") == "back" and e["player"] == pid
                    )
            await asyncio.sleep(12)  # past node 1's claims and the grace
            for pl in players:
                await pl.do("move")
            for pl in players:
                await pl.do("resign")
            for pl in players:
                finished = await pl.first(lambda e: e.get("event") == "finished")
                assert set(finished["results"].values()) == {"resigned"}  # nobody abandoned
                for pid in doomed:
                    kinds = [
                        e["event"] for e in pl.lines if e.get("player") == pid and "event" in e
                    ]
                    assert kinds[:2] == ["away", "back"], kinds
                    assert "abandoned" not in [e.get("status") for e in pl.events("progress", pid)]
        finally:
            for pl in players:
                await pl.close()
