"""A Redis Cluster of masters on loopback for the bench (the embedded server's binary, in
cluster mode): each master a share of the slots, then ``CLUSTER MEET``, as ``valkey-cli
--cluster create`` does. No replicas and no persistence: the bench measures CPU time."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

__all__ = ["Shards", "start_shards"]


class Shards:
    """The masters' processes (stopped by :meth:`stop`)."""

    def __init__(self, ports: list[int], procs: list[subprocess.Popen[bytes]]) -> None:
        self.ports = ports
        self.procs = procs

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in self.ports)

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.procs]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


async def _until(what: str, check: object, timeout: float = 30.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        try:
            if await check():  # type: ignore[operator]
                return
        except Exception:
            pass
        await asyncio.sleep(0.05)
    raise RuntimeError(f"the cluster: {what} did not happen within {timeout:g} s")


async def start_shards(folder: Path, masters: int = 3) -> Shards:
    """Start ``masters`` masters in ``folder``; returns once each sees the cluster ok."""
    from redis.asyncio import Redis

    from spider_server.embedded import find_redis_server, free_cluster_ports

    server = find_redis_server()
    ports = free_cluster_ports(masters)
    procs = []
    for port in ports:
        data = folder / f"shard-{port}"
        data.mkdir(parents=True)
        args = [server, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data)]
        args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
        args += ["--appendonly", "no", "--save", "", "--daemonize", "no"]
        procs.append(subprocess.Popen(args, stdout=subprocess.DEVNULL))
    shards = Shards(ports, procs)
    clients = [Redis(port=port) for port in ports]
    try:
        for r in clients:
            await _until("a master answering", r.ping)
        for i, r in enumerate(clients):
            await r.execute_command("CLUSTER", "SET-CONFIG-EPOCH", i + 1)
            first, last = i * 16384 // masters, (i + 1) * 16384 // masters - 1
            await r.execute_command("CLUSTER", "ADDSLOTSRANGE", first, last)
        for r in clients[1:]:
            await r.execute_command("CLUSTER", "MEET", "127.0.0.1", ports[0])

        async def ok() -> bool:
            for r in clients:
                info = await r.execute_command("CLUSTER", "INFO")
                text = info.decode() if isinstance(info, bytes) else str(info)
                if "cluster_state:ok" not in text or f"cluster_known_nodes:{masters}" not in text:
                    return False
            return True

        await _until("the cluster being ok", ok)
    except BaseException:
        shards.stop()
        raise
    finally:
        for r in clients:
            await r.aclose()
    return shards
