"""Real clusters on loopback (Valkey's cluster mode, the embedded server's binary): masters
with replicas, built the way ``valkey-cli --cluster create`` builds them (an epoch and a
range of slots each, ``CLUSTER MEET``, then ``CLUSTER REPLICATE``)."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from redis import Redis

__all__ = ["Cluster", "start_cluster"]


@dataclass
class Cluster:
    """The processes of a cluster started by :func:`start_cluster`."""

    masters: list[int]
    replicas: dict[int, int]
    """The port of each master's replica, by the master's port."""
    procs: dict[int, subprocess.Popen[bytes]] = field(default_factory=dict)
    args: dict[int, list[str]] = field(default_factory=dict)

    @property
    def ports(self) -> list[int]:
        return [*self.masters, *self.replicas.values()]

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.ports)

    def live(self) -> list[int]:
        return [port for port, proc in self.procs.items() if proc.poll() is None]

    def master_of(self, key: str) -> int:
        """The port of the live master that serves ``key``'s slot now."""
        for port in self.live():
            r = Redis(port=port)
            slot = int(r.execute_command("CLUSTER", "KEYSLOT", key))
            for line in r.execute_command("CLUSTER", "NODES").decode().splitlines():
                parts = line.split()
                if "myself" in parts[2] and "master" in parts[2]:
                    for spec in parts[8:]:
                        low, _, high = spec.partition("-")
                        if low.isdigit() and int(low) <= slot <= int(high or low):
                            return port
        raise AssertionError(f"no live master serves {key}")

    def restart(self, port: int) -> None:
        """Start the (stopped) server of ``port`` again on its folder: a master that was
        failed over comes back as a replica of the one that took over."""
        self.procs[port].wait()
        self.procs[port] = subprocess.Popen(self.args[port], stdout=subprocess.DEVNULL)

    def role(self, port: int) -> str:
        return str(Redis(port=port).info("replication")["role"])

    def stop(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
            proc.wait()


def _wait(what: str, check: Callable[[], object], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:
            pass
        time.sleep(0.05)
    raise AssertionError(f"the cluster: {what} did not happen within {timeout:g} s")


def _replicate(port: int, master_id: str) -> object:
    return Redis(port=port).execute_command("CLUSTER", "REPLICATE", master_id)


def start_cluster(
    folder: Path, *, masters: int = 3, replicas: bool = True, node_timeout: int = 1000
) -> Cluster:
    """Start ``masters`` masters (each a share of the slots), each with a replica, with
    AOF and ``cluster-node-timeout`` ``node_timeout`` ms (a replica takes over that long
    after its master stops answering); returns once every node sees the cluster ok."""
    from spider_server.embedded import find_redis_server, free_cluster_ports

    server = find_redis_server()
    ports = free_cluster_ports(masters * (2 if replicas else 1))
    cluster = Cluster(
        masters=ports[:masters],
        replicas=dict(zip(ports[:masters], ports[masters:], strict=False)) if replicas else {},
    )
    try:
        for port in ports:
            data = folder / f"cluster-{port}"
            data.mkdir(parents=True)
            args = [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data)]
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            args += ["--cluster-node-timeout", str(node_timeout)]
            args += ["--cluster-replica-validity-factor", "0"]
            args += ["--appendonly", "yes", "--save", "", "--daemonize", "no"]
            cluster.args[port] = args
            cluster.procs[port] = subprocess.Popen(args, stdout=subprocess.DEVNULL)
        for port in ports:
            _wait(f"{port} answering", Redis(port=port).ping, 20)
        for i, port in enumerate(cluster.masters):
            node = Redis(port=port)
            node.execute_command("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
            first, last = i * 16384 // masters, (i + 1) * 16384 // masters - 1
            node.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
        for port in ports[1:]:
            Redis(port=port).execute_command("CLUSTER", "MEET", "127.0.0.1", ports[0])

        def known() -> bool:
            infos = [Redis(port=p).execute_command("CLUSTER", "INFO").decode() for p in ports]
            return all(f"cluster_known_nodes:{len(ports)}" in info for info in infos)

        _wait("every node knowing the others", known)
        for master, replica in cluster.replicas.items():
            master_id = Redis(port=master).execute_command("CLUSTER", "MYID").decode()
            _wait(f"{replica} replicating {master}", partial(_replicate, replica, master_id))

        def ok() -> bool:
            for p in ports:
                if (
                    "cluster_state:ok"
                    not in Redis(port=p).execute_command("CLUSTER", "INFO").decode()
                ):
                    return False
            return all(
                Redis(port=r).info("replication").get("master_link_status") == "up"
                for r in cluster.replicas.values()
            )

        _wait("the cluster being ok, every replica linked", ok)
    except BaseException:
        cluster.stop()
        raise
    return cluster
