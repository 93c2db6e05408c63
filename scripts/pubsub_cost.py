"""What a message costs a single (non-cluster) server: PUBLISH against SPUBLISH.

    python scripts/pubsub_cost.py [--n 100000]

Starts the embedded server's binary on a free port, subscribes one reader to a race's
channel (``SUBSCRIBE`` or ``SSUBSCRIBE``), publishes ``--n`` event-sized messages in
pipelines of 1,000, and prints the server's CPU (user + system, from ``INFO cpu``) per
message for each command, twice each, alternating. The server keeps plain ``PUBLISH`` on a
single server (``spider_server.fanout.shards``): both cost the same there.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from redis import Redis

from spider_server.embedded import RedisProcess

CHANNEL = "{race:ABCDE}:ch"
PAYLOAD = b"123:all:" + b"x" * 60


def _cpu(r: Redis) -> float:
    info = r.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def measure(port: int, command: str, n: int) -> float:
    """Server CPU microseconds per message of ``command``, one subscriber reading."""
    r = Redis(port=port)
    sub = Redis(port=port).pubsub()
    sharded = command == "SPUBLISH"
    (sub.ssubscribe if sharded else sub.subscribe)(CHANNEL)
    got = [0]

    def drain() -> None:
        while got[0] < n:
            m = sub.get_sharded_message(timeout=1) if sharded else sub.get_message(timeout=1)
            if m and m["type"] in ("message", "smessage"):
                got[0] += 1

    reader = threading.Thread(target=drain)
    reader.start()
    time.sleep(0.2)
    before = _cpu(r)
    pipe = r.pipeline(transaction=False)
    for i in range(n):
        pipe.execute_command(command, CHANNEL, PAYLOAD)
        if i % 1000 == 999:
            pipe.execute()
    pipe.execute()
    reader.join()
    used = _cpu(r) - before
    sub.close()
    return 1e6 * used / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    n = parser.parse_args().n
    server = RedisProcess(Path(tempfile.mkdtemp()) / "redis")
    server.start()
    try:
        for command in ("PUBLISH", "SPUBLISH", "PUBLISH", "SPUBLISH"):
            print(f"{command:9s} {measure(server.port, command, n):.2f} us of server CPU a message")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
