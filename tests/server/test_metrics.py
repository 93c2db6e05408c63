"""``/metrics``: read with ``prometheus_client``'s parsers, process metrics, OpenMetrics."""

from __future__ import annotations

import asyncio
import urllib.request

import pytest
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as openmetrics_families,
)
from prometheus_client.parser import text_string_to_metric_families

from spider_server.metrics import TEXT_CONTENT_TYPE, Gauges, Metrics
from tests.server.server_helpers import Client

OPENMETRICS = "application/openmetrics-text; version=1.0.0"


def _get(url: str, accept: str | None = None) -> tuple[str, str]:
    request = urllib.request.Request(url, headers={"Accept": accept} if accept else {})
    with urllib.request.urlopen(request, timeout=5) as r:
        return r.headers.get("Content-Type", ""), r.read().decode()


def _samples(text: str, parse=text_string_to_metric_families) -> dict[tuple[str, tuple], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in parse(text)
        for s in family.samples
    }


async def test_metrics_parse_and_carry_the_process(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    other = await server_node(redis_server.url)
    clients = [await Client.connect(node.url, name=f"c{i}") for i in range(2)]
    kind, text = await asyncio.to_thread(_get, node.http_url + "/metrics")
    assert kind == TEXT_CONTENT_TYPE
    families = {(f.name, f.type) for f in text_string_to_metric_families(text)}
    samples = _samples(text)
    # the node's own, with their types
    assert ("spider_connections", "gauge") in families
    assert ("spider_actions", "counter") in families
    assert ("spider_action_seconds", "histogram") in families
    assert samples[("spider_connections", ())] == 2
    assert samples[("spider_races", (("state", "running"),))] == 0
    # the process's: CPU, memory, open files, the garbage collector
    assert samples[("process_cpu_seconds_total", ())] > 0
    assert samples[("process_resident_memory_bytes", ())] > 1_000_000
    # sockets of the listener, the clients and Redis are among this process's files
    assert 5 < samples[("process_open_fds", ())] <= samples[("process_max_fds", ())]
    assert samples[("python_gc_collections_total", (("generation", "0"),))] > 0
    assert ("python_info", "gauge") in families
    # each node has its own registry: the other node counts its own connections
    _, text2 = await asyncio.to_thread(_get, other.http_url + "/metrics")
    assert _samples(text2)[("spider_connections", ())] == 0
    assert _samples(text2)[("process_open_fds", ())] > 0
    for c in clients:
        await c.close()


def test_counts_are_read_at_scrape_time() -> None:
    metrics = Metrics(gauges=lambda: Gauges({"open": 3}, {"spectator": 4}, (1, 9)))
    metrics.frames_total += 5
    metrics.actions_total["move"] += 2
    metrics.closed_total[1008] += 1
    metrics.action_seconds.observe(0.003)
    metrics.action_seconds.observe(7.0)
    samples = _samples(metrics.render())
    assert samples[("spider_frames_total", ())] == 5
    assert samples[("spider_actions_total", (("kind", "move"),))] == 2
    assert samples[("spider_closed_total", (("code", "1008"),))] == 1
    assert samples[("spider_races", (("state", "open"),))] == 3
    assert samples[("spider_subscriptions", (("role", "spectator"),))] == 4
    assert samples[("spider_backlog_frames", ())] == 9
    assert samples[("spider_action_seconds_bucket", (("le", "0.005"),))] == 1
    assert samples[("spider_action_seconds_bucket", (("le", "2.5"),))] == 1
    assert samples[("spider_action_seconds_bucket", (("le", "+Inf"),))] == 2
    assert samples[("spider_action_seconds_sum", ())] == pytest.approx(7.003)
    # values given to render win over the callback; integers stay integers in the text
    text = metrics.render({"running": 1}, None, (0, 0))
    assert 'spider_races{state="running"} 1' in text.splitlines()
    assert 'spider_races{state="open"} 0' in text.splitlines()
    metrics.frames_total += 1
    assert "spider_frames_total 6" in metrics.render().splitlines()


def test_openmetrics_when_the_scrape_asks_for_it() -> None:
    metrics = Metrics()
    metrics.connections, metrics.connections_total = 2, 7
    metrics.transitions_total["finish"] += 1
    body, kind = metrics.exposition(OPENMETRICS, {"running": 1}, {}, (0, 0))
    assert kind.startswith("application/openmetrics-text; version=1.0.0")
    text = body.decode()
    assert text.endswith("# EOF\n")
    # the strict parser accepts it: no clashing families, histograms complete
    samples = _samples(text, openmetrics_families)
    assert samples[("spider_connections", ())] == 2
    assert samples[("spider_connections_total", ())] == 7
    assert samples[("spider_transitions_total", (("kind", "finish"),))] == 1
    assert samples[("process_cpu_seconds_total", ())] > 0
    # the same series as in the text format
    plain = _samples(metrics.render({"running": 1}, {}, (0, 0)))
    ours = {key for key in plain if key[0].startswith("spider_")}
    assert len(ours) > 50 and ours <= set(samples)
    # anything else gets the text format
    for accept in (None, "", "text/plain", "*/*", "application/json"):
        assert metrics.exposition(accept)[1] == TEXT_CONTENT_TYPE


async def test_openmetrics_over_http(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    kind, text = await asyncio.to_thread(_get, node.http_url + "/metrics", OPENMETRICS)
    assert kind.startswith("application/openmetrics-text")
    assert ("process_open_fds", ()) in _samples(text, openmetrics_families)
