"""What the node's metrics cost: per count on the hot path, and per scrape.

    python scripts/metrics_cost.py [--baseline OTHER/metrics.py] [--n 1000000]

Times, in nanoseconds per call (best of five runs), what a move does to the metrics
(``frames_total += 1``, ``actions_total["move"] += 1``, ``action_seconds.observe(...)``)
with :class:`spider_server.metrics.Metrics`, with ``prometheus_client``'s own ``Counter``
and ``Histogram`` for comparison, and, with ``--baseline``, with the ``Metrics`` class of
another version of ``metrics.py``; then the time of one ``/metrics`` text.
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram

from spider_server.metrics import Metrics

BOUNDS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


def best_ns(job: Callable[[int], None], n: int) -> float:
    """Nanoseconds per iteration of ``job(n)``, the best of five runs, less the loop's own."""

    def empty(n: int) -> None:
        for _ in range(n):
            pass

    def run(f: Callable[[int], None]) -> float:
        times = []
        for _ in range(5):
            t = time.perf_counter_ns()
            f(n)
            times.append(time.perf_counter_ns() - t)
        return min(times) / n

    return max(0.0, run(job) - run(empty))


def node_jobs(metrics: Any) -> dict[str, Callable[[int], None]]:
    def frames(n: int) -> None:
        for _ in range(n):
            metrics.frames_total += 1

    def actions(n: int) -> None:
        for _ in range(n):
            metrics.actions_total["move"] += 1

    def observe(n: int) -> None:
        o = metrics.action_seconds.observe
        for _ in range(n):
            o(0.0031)

    return {"int += 1": frames, "Counter[key] += 1": actions, "observe": observe}


def library_jobs() -> dict[str, Callable[[int], None]]:
    registry = CollectorRegistry()
    frames = Counter("frames", "", registry=registry)
    actions = Counter("actions", "", ["kind"], registry=registry)
    seconds = Histogram("seconds", "", buckets=BOUNDS, registry=registry)

    def inc(n: int) -> None:
        for _ in range(n):
            frames.inc()

    def labelled(n: int) -> None:
        for _ in range(n):
            actions.labels("move").inc()

    def observe(n: int) -> None:
        o = seconds.observe
        for _ in range(n):
            o(0.0031)

    return {"int += 1": inc, "Counter[key] += 1": labelled, "observe": observe}


def load_baseline(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("baseline_metrics", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Metrics()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default=None, help="another version's metrics.py")
    parser.add_argument("--n", type=int, default=1_000_000, help="calls per run")
    args = parser.parse_args()
    columns: dict[str, dict[str, Callable[[int], None]]] = {"Metrics": node_jobs(Metrics())}
    if args.baseline:
        columns["baseline"] = node_jobs(load_baseline(args.baseline))
    columns["prometheus_client"] = library_jobs()
    print(f"{'ns per call':<20}" + "".join(f"{name:>20}" for name in columns))
    for job in ("int += 1", "Counter[key] += 1", "observe"):
        cells = [best_ns(jobs[job], args.n) for jobs in columns.values()]
        print(f"{job:<20}" + "".join(f"{cell:>20.1f}" for cell in cells))
    metrics = Metrics()
    started = time.perf_counter()
    for _ in range(200):
        metrics.render({"running": 10}, {"player": 100}, (0, 0))
    print(f"one /metrics text: {(time.perf_counter() - started) / 200 * 1e6:.0f} µs")


if __name__ == "__main__":
    main()
