"""Behind deploy/haproxy.cfg, a node that trusts the balancer counts each client by the
address HAProxy saw, and a client cannot name another address by sending its own
``X-Forwarded-For`` (HAProxy sets it)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import urllib.request
from pathlib import Path

from tests.faults.test_deploy import DEPLOY, _free_port, _need
from tests.server.attack_helpers import handshake, http_status


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=5) as r:
        return str(r.read().decode())


async def test_haproxy_names_the_client_and_the_node_counts_it(
    redis_server, server_node, tmp_path: Path
) -> None:
    haproxy = _need("haproxy")
    node = await server_node(redis_server.url, trusted_proxies="127.0.0.1", address_connections=2)
    port = _free_port()
    env = {
        **os.environ,
        "SPIDER_LB_BIND": f"127.0.0.1:{port}",
        "SPIDER_NODE1": f"127.0.0.1:{node.node.port}",
        "SPIDER_NODE2": f"127.0.0.1:{node.node.port}",
    }
    log = open(tmp_path / "haproxy.log", "wb")  # noqa: SIM115 - kept open for the process
    lb = subprocess.Popen(
        [haproxy, "-db", "-f", str(DEPLOY / "haproxy.cfg")], env=env, stdout=log, stderr=log
    )
    socks = []
    try:
        for _ in range(100):
            try:
                if "ok" in await asyncio.to_thread(_get, f"http://127.0.0.1:{port}/healthz"):
                    break
            except OSError:
                await asyncio.sleep(0.1)
        statuses = []
        for i in range(3):
            # each claims to be someone else: HAProxy replaces the header with what it saw
            spoof = {"X-Forwarded-For": f"198.51.100.{i + 1}"}
            sock, head = await asyncio.to_thread(handshake, port, headers=spoof)
            socks.append(sock)
            statuses.append(http_status(head))
        assert statuses == [101, 101, 429]
        assert node.node.metrics.refused_total["address"] == 1
        assert node.node.addresses.connections == {"127.0.0.1": 2}
    finally:
        for sock in socks:
            sock.close()
        lb.terminate()
        lb.wait(10)
        log.close()
