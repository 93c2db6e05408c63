"""Plain HTTP on the node's port (the probes, /metrics, the page), SIGTERM and its drain,
time limits, countdowns, Redis restarts."""

from __future__ import annotations

import asyncio
import gc
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from spider_client import protocol as p
from spider_engine import Board
from tests.server.server_helpers import Client, Player, start_race

TEXT = "text/plain; charset=utf-8"


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


async def test_readyz_follows_redis_and_healthz_does_not(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    assert await asyncio.to_thread(_get, node.http_url + "/readyz") == (200, TEXT, "ok\n")
    assert await asyncio.to_thread(_get, node.http_url + "/healthz") == (200, TEXT, "ok\n")
    redis_server.kill()
    not_ready = (503, TEXT, "redis is not answering\n")
    assert await asyncio.to_thread(_get, node.http_url + "/readyz") == not_ready
    # liveness: the process answers; a Redis outage must not get every node restarted
    assert (await asyncio.to_thread(_get, node.http_url + "/healthz"))[0] == 200
    # a request while Redis is down gets "unavailable", and the node stays up
    c = await Client.connect(node.url, name="x")
    reply = await c.request(p.CreateRace(req=0))
    assert reply.type == "error" and reply.error == "unavailable"
    redis_server.restart()
    assert (await asyncio.to_thread(_get, node.http_url + "/readyz"))[0] == 200
    assert (await c.create(variant="spider1")).race.state == "open"


async def test_metrics_and_not_found(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, (a,), _ = await start_race(node.url, players=1)
    pa = Player(a, code, (await a.join(code)).view, seed=1)
    await pa.step()
    await a.send_raw(b"\xc1")
    await a.expect("error")
    status, kind, text = await asyncio.to_thread(_get, node.http_url + "/metrics")
    assert status == 200 and kind.startswith("text/plain")
    lines = set(text.splitlines())
    assert "spider_connections 1" in lines
    assert 'spider_races{state="running"} 1' in lines
    assert 'spider_actions_total{kind="move"} 1' in lines
    assert 'spider_errors_total{code="bad_frame"} 1' in lines
    assert any(line.startswith("spider_action_seconds_bucket") for line in lines)
    assert "spider_action_seconds_count 1" in lines
    # the collector's pauses are timed while the node runs
    before = node.node.metrics.gc_seconds.count
    gc.collect()
    assert node.node.metrics.gc_seconds.count >= before + 1
    _, _, text = await asyncio.to_thread(_get, node.http_url + "/metrics")
    counts = [line for line in text.splitlines() if line.startswith("spider_gc_pause_seconds_c")]
    assert len(counts) == 1 and int(counts[0].split()[1]) >= before + 1
    # the loop's lag is measured every 100 ms
    lags = node.node.metrics.loop_lag.count
    await asyncio.sleep(0.35)
    assert node.node.metrics.loop_lag.count >= lags + 2
    assert (await asyncio.to_thread(_get, node.http_url + "/nothing"))[0] == 404


async def test_sigterm_closes_with_1012_and_exits_0(
    redis_server, server_process, server_node
) -> None:
    proc = await server_process(redis_server.url)
    a = await Client.connect(proc.url, name="a")
    code = (await a.create(variant="spider1", countdown=0)).race.code
    await a.ready(code)
    pa = Player(a, code, (await a.expect("ack", lambda m: m.seq == 0)).view, seed=2)
    await pa.step()
    w = await Client.connect(proc.url, name="w")
    await w.join(code, role="spectator")
    status = await asyncio.to_thread(proc.terminate)
    assert status == 0
    assert await a.closed_with() == 1012
    assert await w.closed_with() == 1012
    # nothing acknowledged is lost: another node serves the same game
    node = await server_node(redis_server.url)
    again = await Client.connect(node.url, token=a.token)
    joined = await again.join(code)
    assert joined.seq == 1 and joined.view == pa.view


async def test_sigterm_fails_readiness_first_then_closes_after_the_drain(
    redis_server, server_process, tmp_path: Path
) -> None:
    drain = 3.0
    proc = await server_process(redis_server.url, cli=True, SPIDER_RACE_DRAIN=f"{drain:g}")
    a = await Client.connect(proc.url, name="a")
    assert (await a.create(variant="spider1")).race.state == "open"
    assert (await asyncio.to_thread(_get, proc.http_url + "/readyz"))[0] == 200
    signalled = time.monotonic()
    proc.process.send_signal(signal.SIGTERM)
    ready = await _readyz_until(proc.http_url, 503)
    assert ready == (503, TEXT, "draining\n")
    # readiness failed while the client is still connected, and served
    assert a.ws.close_code is None
    assert (await a.create(variant="spider1")).race.state == "open"
    assert (await asyncio.to_thread(_get, proc.http_url + "/healthz"))[0] == 200
    # then, once the drain period is over, the connection is told to reconnect
    assert await a.closed_with() == 1012
    assert time.monotonic() - signalled >= drain
    assert await asyncio.to_thread(proc.process.wait, 20) == 0
    log = (tmp_path / "proc1.log").read_text()
    assert "draining: /readyz answers 503, connections are closed in 3 s" in log


@pytest.mark.parametrize("signals", [("SIGTERM", "SIGTERM"), ("SIGINT",)])
async def test_ctrl_c_or_a_second_signal_closes_at_once(
    redis_server, server_process, signals: tuple[str, ...]
) -> None:
    proc = await server_process(redis_server.url, SPIDER_RACE_DRAIN="3600")
    a = await Client.connect(proc.url, name="a")
    for name in signals[:-1]:  # draining for an hour
        proc.process.send_signal(getattr(signal, name))
        assert (await _readyz_until(proc.http_url, 503))[0] == 503
    proc.process.send_signal(getattr(signal, signals[-1]))
    assert await a.closed_with(timeout=10) == 1012
    assert await asyncio.to_thread(proc.process.wait, 20) == 0


async def _readyz_until(http_url: str, status: int) -> tuple[int, str, str]:
    """``/readyz``'s answer once it has ``status`` (or the last one, after 5 s)."""
    deadline = time.monotonic() + 5
    while True:
        answer = await asyncio.to_thread(_get, http_url + "/readyz")
        if answer[0] == status or time.monotonic() > deadline:
            return answer
        await asyncio.sleep(0.02)


async def test_time_limit_ends_the_race(redis_server, server_node) -> None:
    node1 = await server_node(redis_server.url)
    node2 = await server_node(redis_server.url)
    a = await Client.connect(node1.url, name="a")
    code = (await a.create(variant="spider1", countdown=1, time_limit=1)).race.code
    b = await Client.connect(node2.url, name="b")
    await b.join(code)
    await a.ready(code)
    await b.ready(code)
    for c in (a, b):
        countdown = await c.expect("countdown")
        started = await c.expect("started")
        assert started.started_at == countdown.starts_at
        assert started.ends_at == started.started_at + 1
    dealt = (await a.expect("ack", lambda m: m.seq == 0)).view
    pa = Player(a, code, dealt, seed=3)
    await pa.step()
    finished = [await c.expect("finished") for c in (a, b)]
    assert finished[0].version == finished[1].version
    statuses = {r.player: r.status for r in finished[0].results}
    assert statuses == {a.player: "timeout", b.player: "timeout"}
    # rules.md §7a: by progress, not by the classic score. a's action raised a's progress
    # (a ranks above b, who made no move) unless it was a deal that laid no card on the next
    # one (then they tie, in join order)
    deal, now = Board.from_text(dealt), Board.from_text(pa.view)
    raised = now.variant.progress(now, 0) > deal.variant.progress(deal, 0)
    assert [(r.player, r.rank) for r in finished[0].results] == [
        (a.player, 1),
        (b.player, 2 if raised else 1),
    ]
    err = await a.move(code, 2, pa.pick() or "+")
    assert err.type == "error" and err.error == "finished"
    # exactly one node performed each transition
    starts = (
        node1.node.metrics.transitions_total["start"]
        + node2.node.metrics.transitions_total["start"]
    )
    finishes = (
        node1.node.metrics.transitions_total["finish"]
        + node2.node.metrics.transitions_total["finish"]
    )
    assert (starts, finishes) == (1, 1)


async def test_race_nobody_watches_finishes_when_someone_joins(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    a = await Client.connect(node.url, name="a")
    code = (await a.create(variant="spider1", countdown=0, time_limit=1)).race.code
    await a.ready(code)
    await a.expect("started")
    await a.close()
    await asyncio.sleep(1.2)  # past the time limit, with no connection watching
    w = await Client.connect(node.url, name="w")
    joined = await w.join(code, role="spectator")
    assert joined.race.state == "finished"
    assert joined.race.results[0].status == "timeout"


async def test_redis_restart_mid_race_loses_nothing(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    code, (a, b), (w,) = await start_race(node.url, players=2, spectators=1)
    pa = Player(a, code, (await a.join(code)).view, seed=4)
    pb = Player(b, code, (await b.join(code)).view, seed=5)
    for _ in range(3):
        await pa.step()
    redis_server.restart()  # a clean restart: the AOF has every acknowledged action
    for _ in range(3):
        await pb.step()
    for _ in range(2):
        await pa.step()
    # events still reach everyone (pub/sub reconnects; the sweep fills what was missed)
    await w.expect("progress", lambda m: m.player.player == a.player and m.player.moves == 5)
    await pa.resign()
    await pb.resign()
    f = await w.expect("finished")
    assert len(f.replays[a.player]) == 6 and len(f.replays[b.player]) == 4


async def test_open_race_everyone_left_is_deleted(redis_server, server_node) -> None:
    from redis import Redis

    node = await server_node(redis_server.url)
    a = await Client.connect(node.url, name="a")
    code = (await a.create(variant="spider1")).race.code
    b = await Client.connect(node.url, name="b")
    await b.join(code)
    assert (await b.request(p.Leave(req=0, code=code))).type == "done"
    left = await a.expect("player_left")
    assert left.player == b.player
    assert (await a.request(p.Leave(req=0, code=code))).type == "done"
    r = Redis.from_url(redis_server.url)
    assert (
        r.exists(f"{{race:{code}}}:meta", f"{{race:{code}}}:events", f"{{race:{code}}}:players")
        == 0
    )
    r.close()
    c = await Client.connect(node.url, name="c")
    assert (await c.request(p.Join(req=0, code=code))).error == "not_found"


async def test_static_files_only_from_the_package(redis_server, server_node) -> None:
    from spider_server.transport import http

    node = await server_node(redis_server.url)
    for path in ("/../app.py", "/%2e%2e/app.py", "/.hidden", "/static/../../x"):
        assert (await asyncio.to_thread(_get, node.http_url + path))[0] == 404
    index = http.STATIC / "index.html"
    if index.exists():
        status, kind, body = await asyncio.to_thread(_get, node.http_url + "/")
        assert status == 200 and kind.startswith("text/html") and body == index.read_text()


async def test_a_node_started_before_its_redis_waits_for_it(redis_server, server_node) -> None:
    redis_server.kill()
    node = await server_node(redis_server.url)
    assert (await asyncio.to_thread(_get, node.http_url + "/readyz"))[0] == 503
    assert (await asyncio.to_thread(_get, node.http_url + "/healthz"))[0] == 200
    redis_server.restart()
    assert (await asyncio.to_thread(_get, node.http_url + "/readyz"))[0] == 200
    code, (a,), (w,) = await start_race(node.url, players=1, spectators=1)
    pa = Player(a, code, (await a.join(code)).view, seed=9)
    await pa.step()
    await w.expect("progress", lambda m: m.player.moves == 1)
