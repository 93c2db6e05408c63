"""``spider-race bench signin``: what a sign-in costs, as figures anyone can rerun.

Everything runs on this machine in a temporary folder: the bench server's embedded Redis, an
embedded PostgreSQL (the server's :class:`spider_server.pgembedded.PostgresProcess`) and one
node process with the accounts' settings of the environment (``SPIDER_RACE_ARGON2_*``: the
node's defaults unless set), started as ``spider-race serve`` starts one.

It prints the Argon2id parameters, then:

- ``hash_cpu_ms`` and ``verify_cpu_ms``: one hashing and one check of a password in this
  process with the same parameters (CPU time, the median of ``--hashes`` of each);
- over HTTP, ``--accounts`` sign-ups then ``--signins`` sign-ins (each right, ``--clients``
  at once, from as many addresses as accounts, so that no limit refuses them), each side's
  node CPU per request (``node_cpu_ms_per_signup``, ``node_cpu_ms_per_signin``: the node
  process's CPU time over the requests, its threads that hash included) and requests a
  second (``signins_per_s``: the wall time of the sign-ins);
- ``node_cpu_ms_per_failed_signin``: as many sign-ins with a wrong password (spread over the
  accounts and addresses, within the backoff's free attempts), which must cost about what a
  right one does (a failure is not cheaper to try).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import sys
import time
import urllib.error
import urllib.request
from typing import Any

__all__ = ["run"]

PASSWORD = "correct horse battery staple"


def _show(name: str, value: float) -> None:
    print(f"{name}: {value:.4g}")


def hashing_figures(settings: Any, count: int) -> dict[str, float]:
    """CPU milliseconds of one hash and one verify with the node's parameters (medians)."""
    from argon2 import PasswordHasher, Type

    hasher = PasswordHasher(
        time_cost=settings.argon2_time_cost,
        memory_cost=settings.argon2_memory,
        parallelism=settings.argon2_parallelism,
        type=Type.ID,
    )
    hashes: list[float] = []
    verifies: list[float] = []
    hashed = hasher.hash(PASSWORD)
    for _ in range(max(1, count)):
        began = time.process_time()
        hasher.hash(PASSWORD)
        hashes.append(time.process_time() - began)
        began = time.process_time()
        hasher.verify(hashed, PASSWORD)
        verifies.append(time.process_time() - began)
    return {
        "hash_cpu_ms": statistics.median(hashes) * 1000,
        "verify_cpu_ms": statistics.median(verifies) * 1000,
    }


def _post(http_url: str, path: str, name: str, password: str, address: str) -> int:
    """One POST with ``Authorization: Basic``, as if from ``address``; its status."""
    token = base64.b64encode(f"{name}:{password}".encode()).decode()
    request = urllib.request.Request(
        http_url + path,
        method="POST",
        headers={"Authorization": f"Basic {token}", "X-Forwarded-For": address},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as r:
            r.read()
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


async def _requests(
    http_url: str, path: str, calls: list[tuple[str, str, str]], clients: int
) -> list[int]:
    """``calls`` (name, password, address) to ``path``, ``clients`` at a time."""
    queue = list(reversed(calls))
    statuses: list[int] = []

    async def client() -> None:
        while queue:
            name, password, address = queue.pop()
            statuses.append(await asyncio.to_thread(_post, http_url, path, name, password, address))

    await asyncio.gather(*(client() for _ in range(max(1, clients))))
    return statuses


async def _measured(
    pid: int, http_url: str, path: str, calls: list[tuple[str, str, str]], clients: int
) -> tuple[list[int], float, float]:
    """The statuses, the node's CPU seconds and the wall seconds of ``calls``."""
    from .bench_server.tools import process_cpu

    cpu_from, began = process_cpu(pid), time.perf_counter()
    statuses = await _requests(http_url, path, calls, clients)
    cpu_to, took = process_cpu(pid), time.perf_counter() - began
    spent = 0.0 if cpu_from is None or cpu_to is None else cpu_to - cpu_from
    return statuses, spent, took


async def bench(args: argparse.Namespace, procs: Any, stops: list[Any]) -> int:
    from spider_server.pgembedded import PostgresProcess
    from spider_server.settings import Settings

    from .bench_archive.node import node_args
    from .bench_server.processes import SECRET
    from .bench_server.tools import free_port

    settings = Settings.from_env()
    print(
        f"argon2id: time_cost {settings.argon2_time_cost}, memory {settings.argon2_memory} KiB, "
        f"parallelism {settings.argon2_parallelism}; {settings.password_hashing} at once a node"
    )
    for name, value in hashing_figures(settings, args.hashes).items():
        _show(name, value)

    database = PostgresProcess(procs.folder / "postgres")
    stops.append(database.stop)
    await asyncio.to_thread(database.start)
    redis_url = procs.start_redis()
    port = free_port()
    env = {
        **os.environ,
        "SPIDER_RACE_SECRET": SECRET,
        "SPIDER_RACE_DATA_DIR": str(procs.folder / "node"),
        "SPIDER_RACE_TRUSTED_PROXIES": "127.0.0.1",
        "SPIDER_RACE_ADDRESS_SIGNUPS": "1000000",
    }
    child = procs.spawn(node_args(port, redis_url, database.url), env=env, log="node.log")
    http_url = f"http://127.0.0.1:{port}"
    for _ in range(1200):
        if child.poll() is not None:
            raise RuntimeError((procs.folder / "node.log").read_text())
        try:
            with urllib.request.urlopen(http_url + "/healthz", timeout=1):
                break
        except OSError:
            await asyncio.sleep(0.05)
    accounts = [
        (f"racer{i}", PASSWORD, f"198.51.{i // 250}.{i % 250 + 1}") for i in range(args.accounts)
    ]
    statuses, spent, _ = await _measured(
        child.pid, http_url, "/account/signup", accounts, args.clients
    )
    signed_up = sum(1 for s in statuses if 200 <= s < 300)
    print(f"signups: {signed_up} of {len(accounts)}")
    _show("node_cpu_ms_per_signup", spent * 1000 / max(1, len(accounts)))
    signins = [accounts[i % len(accounts)] for i in range(args.signins)]
    statuses, spent, took = await _measured(
        child.pid, http_url, "/account/signin", signins, args.clients
    )
    print(f"signins_ok: {sum(1 for s in statuses if 200 <= s < 300)} of {len(signins)}")
    _show("node_cpu_ms_per_signin", spent * 1000 / max(1, len(signins)))
    _show("signins_per_s", len(signins) / took if took else float("nan"))
    wrong = [(name, "not the password at all", address) for name, _, address in signins]
    del wrong[4 * len(accounts) :]  # within each account's free attempts from its address
    statuses, spent, _ = await _measured(
        child.pid, http_url, "/account/signin", wrong, args.clients
    )
    print(f"failed_signins_refused: {statuses.count(401)} of {len(wrong)}")
    _show("node_cpu_ms_per_failed_signin", spent * 1000 / max(1, len(wrong)))
    procs.stop(child)
    return 0 if signed_up == len(accounts) else 1


def run(args: argparse.Namespace) -> int:
    """``spider-race bench signin``; stopped with Ctrl-C, it stops its processes too."""
    from .bench_server.processes import Processes

    procs = Processes()
    stops: list[Any] = []
    try:
        return asyncio.run(bench(args, procs, stops))
    except KeyboardInterrupt:
        print("spider-race bench signin: stopped", file=sys.stderr)
        return 130
    finally:
        for stop in stops:
            stop()
        procs.close()
