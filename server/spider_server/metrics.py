"""The node's metrics for ``GET /metrics``, exposed through ``prometheus_client``.

Counters and gauges are this node's own (a deployment sums them over its nodes); races by
state are the races this node's connections watch. Beside them the scrape carries the
process's CPU time, memory, open and allowed file descriptors and start time
(``process_*``, where the system has ``/proc``), the garbage collector's counts
(``python_gc_*``) and the interpreter (``python_info``).

The hot path pays nothing for this: what a move counts is a plain ``int`` attribute or a
:class:`collections.Counter` entry incremented in place, and a :class:`Histogram` is a list
of ints, as before. A collector reads them only when ``/metrics`` is scraped. Each
:class:`Metrics` has its own :class:`prometheus_client.CollectorRegistry` (never the
library's global one), so several nodes in one process keep apart.

The text is Prometheus's text format 0.0.4 unless the scrape's ``Accept`` header asks for
OpenMetrics (``application/openmetrics-text``; see :meth:`Metrics.exposition`). In
OpenMetrics the counter ``spider_connections_total`` is typed ``unknown``: as a counter
its family would be named ``spider_connections``, which is the open-connections gauge.
The series and their names are the same in both formats.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.exposition import choose_encoder
from prometheus_client.metrics_core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
    UnknownMetricFamily,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

__all__ = [
    "ARCHIVE_BOUNDS",
    "ArchiveCounts",
    "DatabaseCounts",
    "Gauges",
    "Histogram",
    "Metrics",
    "SolverCounts",
    "TEXT_CONTENT_TYPE",
]

TEXT_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The content type of :meth:`Metrics.render`'s text (what a scrape gets by default)."""

RACE_STATES = ("open", "countdown", "running", "finished")
ROLES = ("player", "spectator")
TRANSITIONS = ("start", "finish")
ACTIONS = ("move", "undo", "resign", "duplicate")
ARCHIVE_BOUNDS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, 1800.0, 3600.0)
"""Bounds (seconds) of ``spider_archive_seconds``: from a race's finish to its archive."""


class Histogram:
    """A cumulative histogram with fixed bucket bounds (seconds). ``observe`` is a bisect
    and three additions; the buckets are summed only when scraped."""

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.sum += value
        self.count += 1

    def buckets(self) -> list[tuple[str, float]]:
        """The cumulative buckets, ``+Inf`` last."""
        buckets: list[tuple[str, float]] = []
        total = 0
        for bound, n in zip(self.bounds, self.counts, strict=False):
            total += n
            buckets.append((floatToGoString(bound), total))
        buckets.append(("+Inf", self.count))
        return buckets

    def family(self, name: str, documentation: str) -> HistogramMetricFamily:
        """The histogram now, as ``prometheus_client`` exposes it."""
        return HistogramMetricFamily(
            name, documentation, buckets=self.buckets(), sum_value=self.sum
        )


@dataclass(frozen=True)
class Gauges:
    """What a node reads at scrape time: races its connections watch by state, connections
    following a race by role, and (connections backlogged, frames queued for them)."""

    races_by_state: Mapping[str, int] = field(default_factory=dict)
    subscriptions: Mapping[str, int] = field(default_factory=dict)
    backlog: tuple[int, int] = (0, 0)


class SolverCounts(Protocol):
    """What the scrape reads of the solver's workers: plain ints."""

    @property
    def queued(self) -> int: ...
    @property
    def running(self) -> int: ...

    completed: int
    refused: int
    timed_out: int
    cancelled: int
    failed: int
    preempted: int
    spawned: int

    @property
    def cpu_by_kind(self) -> Mapping[str, float]: ...


class DatabaseCounts(Protocol):
    """What the scrape reads of the database's connections: the pool, each query's time."""

    query_seconds: dict[str, Histogram]

    def pool_counts(self) -> tuple[int, int]: ...


class ArchiveCounts(Protocol):
    """What the scrape reads of the archive (the node's
    :class:`~.runners.archiver.Archiver`): its backlog as last counted, the races written,
    and the finish-to-archive times not read yet (the scrape takes them)."""

    backlog: int
    archived: int
    lag: list[float]

    @property
    def archive(self) -> DatabaseCounts | None: ...


class Metrics:
    """What one node counts, and its registry of collectors.

    ``gauges``, when given, is called at every scrape that does not pass the gauges'
    values itself (see :meth:`exposition`). ``process=False`` leaves out the process,
    garbage collector and platform collectors.
    """

    def __init__(self, *, gauges: Callable[[], Gauges] | None = None, process: bool = True) -> None:
        self.connections = 0
        self.connections_total = 0
        self.frames_total = 0
        self.actions_total: Counter[str] = Counter()
        self.errors_total: Counter[str] = Counter()
        self.races_created_total = 0
        self.transitions_total: Counter[str] = Counter()
        self.closed_total: Counter[int] = Counter()
        self.refused_total: Counter[str] = Counter()
        """Connections and requests refused or closed by a limit, by which one
        (``too_slow``, ``address``, ``open_files``, ``new_players``, ``creations``,
        ``wrong_joins``, ``hints``)."""
        self.hints_total: Counter[str] = Counter()
        """Hints by how they were found (``cache``, ``prefetch``: a prefetch under way,
        ``quick``: searched when asked, ``ranking``: the workers gave no answer) and
        prefetches (``prefetched``: started, ``prefetch_capped``: not started, the race's
        prefetches spent)."""
        self.action_seconds = Histogram(
            (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
        )
        self.gc_seconds = Histogram((0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5))
        """Pauses of Python's cyclic garbage collector (while they last, nothing else runs)."""
        self.loop_lag = Histogram((0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5))
        """How late a timer of the event loop fires: how long work held the loop."""
        self.solver: SolverCounts | None = None
        """The solver's workers (the node's :class:`~.workers.SolverWorkers`), read when
        scraped."""
        self.archive: ArchiveCounts | None = None
        """The archive, read when scraped (its metrics only when it has a database)."""
        self.archive_seconds = Histogram(ARCHIVE_BOUNDS)
        """From a race's finish to its record in the database (the archive's ``lag``)."""
        self.gauges = gauges
        self.registry = CollectorRegistry(auto_describe=False)
        """This node's registry: the node's own collector, then the process's."""
        self._collector = _NodeCollector(self)
        self.registry.register(self._collector)
        if process:
            ProcessCollector(registry=self.registry)
            GCCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)

    def render(
        self,
        races_by_state: Mapping[str, int] | None = None,
        subscriptions: Mapping[str, int] | None = None,
        backlog: tuple[int, int] | None = None,
    ) -> str:
        """Every metric in the text format 0.0.4 (:data:`TEXT_CONTENT_TYPE`)."""
        body, _ = self.exposition(None, races_by_state, subscriptions, backlog)
        return body.decode("utf-8")

    def exposition(
        self,
        accept: str | None,
        races_by_state: Mapping[str, int] | None = None,
        subscriptions: Mapping[str, int] | None = None,
        backlog: tuple[int, int] | None = None,
    ) -> tuple[bytes, str]:
        """The scrape's body and its content type, in the format the ``Accept`` header
        asks for: OpenMetrics 1.0.0 for ``application/openmetrics-text``, else the text
        format 0.0.4 (:data:`TEXT_CONTENT_TYPE`). The gauges are the values given; when none is
        given, those of the ``gauges`` callback (or zeros without one)."""
        if races_by_state is None and subscriptions is None and backlog is None:
            gauges = self.gauges() if self.gauges is not None else Gauges()
        else:
            gauges = Gauges(races_by_state or {}, subscriptions or {}, backlog or (0, 0))
        encoder, content_type = choose_encoder(accept or "")
        openmetrics = content_type.startswith("application/openmetrics-text")
        if not openmetrics:
            encoder, content_type = _text, TEXT_CONTENT_TYPE
        self._collector.scrape = gauges
        self._collector.openmetrics = openmetrics
        try:
            body = encoder(self.registry)
        finally:
            self._collector.scrape = Gauges()
            self._collector.openmetrics = False
        return body, content_type


class _NodeCollector(Collector):
    """The node's own metrics, read from :class:`Metrics` at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics
        self.scrape = Gauges()
        self.openmetrics = False

    def collect(self) -> Iterator[Metric]:
        m, g = self.metrics, self.scrape
        yield GaugeMetricFamily(
            "spider_connections", "Open websocket connections on this node.", m.connections
        )
        doc = "Websocket connections accepted by this node."
        if self.openmetrics:  # a counter family here would clash with the gauge above
            yield UnknownMetricFamily("spider_connections_total", doc, m.connections_total)
        else:
            yield CounterMetricFamily("spider_connections_total", doc, m.connections_total)
        yield CounterMetricFamily(
            "spider_frames_total", "Frames received from clients.", m.frames_total
        )
        yield _labelled(
            GaugeMetricFamily,
            "spider_races",
            "Races watched by this node's connections, by state.",
            "state",
            ((state, g.races_by_state.get(state, 0)) for state in RACE_STATES),
        )
        yield _labelled(
            GaugeMetricFamily,
            "spider_subscriptions",
            "Connections following a race on this node, by role.",
            "role",
            ((role, g.subscriptions.get(role, 0)) for role in ROLES),
        )
        yield GaugeMetricFamily(
            "spider_backlogged_connections",
            "Connections with frames waiting for their reader now (the socket takes no"
            " more; a reader that stopped stays in it).",
            g.backlog[0],
        )
        yield GaugeMetricFamily(
            "spider_backlog_frames", "Frames queued for those connections.", g.backlog[1]
        )
        yield CounterMetricFamily(
            "spider_races_created_total", "Races created through this node.", m.races_created_total
        )
        yield _labelled(
            CounterMetricFamily,
            "spider_transitions_total",
            "Race starts and finishes this node performed.",
            "kind",
            ((kind, m.transitions_total[kind]) for kind in TRANSITIONS),
        )
        yield _labelled(
            CounterMetricFamily,
            "spider_actions_total",
            "Player actions applied (moves, deals, undos, resigns).",
            "kind",
            ((kind, m.actions_total[kind]) for kind in ACTIONS),
        )
        yield _labelled(
            CounterMetricFamily,
            "spider_errors_total",
            "Error replies sent, by code.",
            "code",
            sorted(m.errors_total.items()),
        )
        yield _labelled(
            CounterMetricFamily,
            "spider_closed_total",
            "Connections this node closed, by close code.",
            "code",
            ((str(code), n) for code, n in sorted(m.closed_total.items())),
        )
        yield _labelled(
            CounterMetricFamily,
            "spider_refused_total",
            "Connections and requests refused or closed by a limit, by limit.",
            "limit",
            sorted(m.refused_total.items()),
        )
        yield _labelled(
            CounterMetricFamily,
            "spider_hints",
            "Hints answered by how they were found, and prefetches started or capped.",
            "how",
            sorted(m.hints_total.items()),
        )
        if m.solver is not None:
            yield from _solver_families(m.solver)
        if m.archive is not None and m.archive.archive is not None:
            yield from _archive_families(m, m.archive, m.archive.archive)
        yield m.action_seconds.family(
            "spider_action_seconds", "Time from receiving an action to sending its ack."
        )
        yield m.gc_seconds.family(
            "spider_gc_pause_seconds", "Pauses of the garbage collector in this process."
        )
        yield m.loop_lag.family(
            "spider_loop_lag_seconds", "How late a 100 ms timer of the event loop fires."
        )


def _solver_families(w: SolverCounts) -> Iterator[Metric]:
    yield GaugeMetricFamily(
        "spider_solver_jobs_queued", "Solver jobs waiting for a worker process.", w.queued
    )
    yield GaugeMetricFamily(
        "spider_solver_jobs_running", "Solver jobs a worker process runs now.", w.running
    )
    for name, doc, value in (
        ("completed", "Solver jobs answered.", w.completed),
        ("refused", "Solver jobs refused by a quota or a full queue.", w.refused),
        ("timed_out", "Solver jobs past their deadline (their worker killed).", w.timed_out),
        ("cancelled", "Solver jobs dropped because nobody waited any more.", w.cancelled),
        ("failed", "Solver jobs whose worker died or whose solver raised.", w.failed),
        ("preempted", "Solver jobs stopped (queued again) for a more urgent job.", w.preempted),
    ):
        yield CounterMetricFamily(f"spider_solver_jobs_{name}_total", doc, value)
    yield CounterMetricFamily(
        "spider_solver_workers_started_total", "Solver worker processes started.", w.spawned
    )
    cpu = CounterMetricFamily(
        "spider_solver_cpu_seconds",
        "CPU time the worker processes spent on jobs, by kind (stopped: jobs told to stop).",
        labels=["kind"],
    )
    for kind, seconds in sorted(w.cpu_by_kind.items()):
        cpu.add_metric([kind], seconds)
    yield cpu


def _archive_families(m: Metrics, a: ArchiveCounts, db: DatabaseCounts) -> Iterator[Metric]:
    yield GaugeMetricFamily(
        "spider_archive_backlog",
        "Finished races waiting to be written to the database (as last counted).",
        a.backlog,
    )
    yield CounterMetricFamily(
        "spider_archive_written", "Finished races this node wrote to the database.", a.archived
    )
    lag, a.lag[:] = list(a.lag), []
    for seconds in lag:
        m.archive_seconds.observe(seconds)
    yield m.archive_seconds.family(
        "spider_archive_seconds", "Time from a race's finish to its record in the database."
    )
    used, idle = db.pool_counts()
    yield _labelled(
        GaugeMetricFamily,
        "spider_database_pool_connections",
        "The node's connections to the database, by state.",
        "state",
        [("used", used), ("idle", idle)],
    )
    queries = HistogramMetricFamily(
        "spider_database_query_seconds",
        "Time of the database's queries, by name.",
        labels=["query"],
    )
    for name, histogram in sorted(db.query_seconds.items()):
        queries.add_metric([name], histogram.buckets(), histogram.sum)
    yield queries


def _labelled(
    kind: type[CounterMetricFamily] | type[GaugeMetricFamily],
    name: str,
    documentation: str,
    label: str,
    values: Iterator[tuple[str, int]] | list[tuple[str, int]],
) -> Metric:
    family = kind(name, documentation, labels=[label])
    for value, n in values:
        family.add_metric([value], n)
    return family


def _text(registry: Collector) -> bytes:
    """The text format 0.0.4 of every metric ``registry`` collects. As
    :func:`prometheus_client.generate_latest`, except that an integer sample is written as
    an integer (``spider_connections 3``, as the node always wrote it, not ``3.0``)."""
    out: list[str] = []
    for metric in registry.collect():
        name, kind = metric.name, metric.type
        if kind == "counter":
            name += "_total"
        elif kind == "info":
            name, kind = name + "_info", "gauge"
        elif kind == "stateset":
            kind = "gauge"
        elif kind == "gaugehistogram":
            kind = "histogram"
        elif kind == "unknown":
            kind = "untyped"
        doc = metric.documentation.replace("\\", r"\\").replace("\n", r"\n")
        out.append(f"# HELP {name} {doc}\n# TYPE {name} {kind}\n")
        for sample in metric.samples:
            value = sample.value
            text = str(value) if type(value) is int else floatToGoString(value)
            if sample.labels:
                labels = ",".join(
                    f'{key}="{_escape(label)}"' for key, label in sorted(sample.labels.items())
                )
                out.append(f"{sample.name}{{{labels}}} {text}\n")
            else:
                out.append(f"{sample.name} {text}\n")
    return "".join(out).encode("utf-8")


def _escape(value: str) -> str:
    return value.replace("\\", r"\\").replace("\n", r"\n").replace('"', r"\"")
