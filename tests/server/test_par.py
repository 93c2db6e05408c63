"""Par on the server: a finished race's par is searched in a solver worker, lands once
with a ``par`` event and in the race's snapshot; a daily race's stays hidden in its day."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from typing import Any

import redis.asyncio as aioredis

from spider_client import protocol as p
from spider_engine import Board, Move
from spider_engine.solver import solve
from spider_server import race as rules
from spider_server.runners.seeds import utc_day
from spider_server.store import keys
from tests.leakscan import LeakScanner
from tests.server.server_helpers import Client

VARIANT = "spider1"
BUDGET = 20_000
"""The par's budget here (a spider1 deal's par takes a few seconds with it)."""
PAR_WAIT = 90.0
FAST = {"rate": 1000.0, "burst": 1000}
"""Moves as fast as the test sends them."""


def _wins(seed: str, line: list[str]) -> bool:
    board = Board.deal(VARIANT, seed)
    for text in line:
        board.push(Move.from_text(text))
    return board.is_won()


async def _win(client: Client, code: str, seed: str) -> p.Finished:
    """Ready, then play the solver's line to a win; the ``finished`` event."""
    await client.ready(code)
    await client.expect("ack", lambda m: m.seq == 0 and m.code == code)
    line = solve(Board.deal(VARIANT, seed), budget=BUDGET).line
    assert line
    for seq, move in enumerate(line, start=1):
        ack = await client.move(code, seq, move.text())
        assert ack.type == "ack", ack
    finished: p.Finished = await client.expect("finished")
    assert finished.results[0].status == "won"
    return finished


async def _par_events(r: Any, code: str) -> list[dict[str, Any]]:
    """The ``par`` events stored in the race's stream."""
    import msgpack

    entries = await r.xrange(keys.events(code))
    data = [msgpack.unpackb(fields[b"d"], raw=False) for _, fields in entries]
    return [d for d in data if d.get("type") == "par"]


async def test_a_finished_race_gets_its_par_from_a_worker(
    redis_server: Any, server_node: Any
) -> None:
    node = await server_node(redis_server.url, par_budget=BUDGET, **FAST)
    seed = "par-e2e-1"
    a = await Client.connect(node.url, name="ann")
    code = (await a.create(variant=VARIANT, seed=seed, countdown=0, time_limit=600)).race.code
    w = await Client.connect(node.url, name="eve")
    await w.join(code, role="spectator")
    before = node.node.workers.completed
    finished = await _win(a, code, seed)
    first = [m.text() for m in solve(Board.deal(VARIANT, seed), budget=BUDGET).line]
    # at once, the winner's line as the provisional par: a commit of its own after the finish
    known = [await c.expect("par", timeout=PAR_WAIT) for c in (a, w)]
    assert known[0] == known[1]
    assert known[0].provisional and known[0].race == code and known[0].first is None
    assert known[0].line == first and known[0].moves == len(first)
    assert known[0].version > finished.version
    # then the search's par settles it
    events = [await c.expect("par", timeout=PAR_WAIT) for c in (a, w)]
    assert events[0] == events[1]
    par = events[0]
    assert not par.provisional and par.version > known[0].version
    assert par.race == code and not par.none
    assert par.line is not None and par.moves == len(par.line)
    assert _wins(seed, par.line)
    assert par.first == len(first) and par.moves <= par.first
    # the search ran in a worker process, and only once
    assert node.node.workers.completed == before + 1 and node.node.pars.computed == 1
    assert node.node.workers.cpu_seconds > 0
    # the finished race's snapshot carries it; showing it again searches nothing more
    late = await Client.connect(node.url, name="late")
    joined = await late.join(code, role="spectator")
    assert joined.race.par == p.ParInfo(moves=par.moves, line=par.line, first=par.first)
    await asyncio.sleep(0.3)
    assert node.node.pars.computed == 1
    r = aioredis.from_url(redis_server.url)
    assert [e.get("provisional") for e in await _par_events(r, code)] == [True, False]
    assert not await r.exists(keys.par_claim(code))  # dropped once the par landed
    # the par lives with the race: same TTL as its other keys
    meta_ttl, events_ttl = await r.ttl(keys.meta(code)), await r.ttl(keys.events(code))
    assert abs(meta_ttl - events_ttl) <= 1 and meta_ttl > 0
    await r.aclose()
    for c in (a, w, late):
        await c.close()


def test_the_node_imports_no_par_code() -> None:
    """The node's own process never runs par: none of its modules imports the engine's
    par (only the solver's worker, :mod:`spider_server.workers.child`, does, when it runs
    a par job)."""
    probe = (
        "import sys, spider_server.node, spider_server.main, spider_server.runners.par;"
        "print('spider_engine.par' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


async def test_a_node_killed_before_its_par_lands_leaves_it_to_another(
    redis_server: Any, server_node: Any, server_process: Any
) -> None:
    env = {f"SPIDER_RACE_{k.upper()}": str(v) for k, v in FAST.items()}
    env.update(SPIDER_RACE_PAR_BUDGET=str(BUDGET), SPIDER_RACE_PRESENCE_TTL="2")
    node1 = await server_process(redis_server.url, **env)
    node2 = await server_node(redis_server.url, par_budget=BUDGET, presence_ttl=2, **FAST)
    seed = "par-kill-1"
    a = await Client.connect(node1.url, name="ann")
    code = (await a.create(variant=VARIANT, seed=seed, countdown=0, time_limit=600)).race.code
    await _win(a, code, seed)
    node1.kill()  # the node that committed the finish (and started the par) is gone
    r = aioredis.from_url(redis_server.url)
    # before its par settled (the provisional one may have landed)
    assert all(e.get("provisional") for e in await _par_events(r, code))
    # someone shows the race's end on the other node: that node gets the par, once
    b = await Client.connect(node2.url, name="bob")
    joined = await b.join(code, role="spectator")
    assert joined.race.state == "finished"
    assert joined.race.par is None or joined.race.par.provisional
    par = await b.expect("par", lambda m: not m.provisional, timeout=PAR_WAIT)
    assert not par.none and par.line is not None and _wins(seed, par.line)
    assert par.moves is not None and par.first is not None and par.moves <= par.first
    c = await Client.connect(node2.url, name="cy")
    assert (await c.join(code, role="spectator")).race.par == p.ParInfo(
        moves=par.moves, line=par.line, first=par.first
    )
    await asyncio.sleep(0.3)
    assert [e.get("provisional") for e in await _par_events(r, code)][-1:] == [False]
    assert sum(not e.get("provisional") for e in await _par_events(r, code)) == 1
    assert node2.node.pars.computed == 1
    await r.aclose()
    for client in (b, c):
        await client.close()


async def test_a_daily_races_par_is_kept_for_the_day_and_hidden_during_it(
    redis_server: Any, server_node: Any, daily_seeds: Any
) -> None:
    node = await server_node(redis_server.url, pool_size=0, par_budget=BUDGET, **FAST)
    r = aioredis.from_url(redis_server.url)
    a = await Client.connect(node.url, name="ann")
    reply = await a.request(p.DailyRace(req=0, variant=VARIANT))
    assert reply.type == "joined", reply
    code, day = reply.race.code, reply.race.daily
    assert day == utc_day(time.time())
    if reply.race.preparing:
        await a.expect("prepared", timeout=20)
    seed = (await r.get(keys.daily(VARIANT, day))).decode()
    finished = await _win(a, code, seed)
    assert finished.seed is None
    # the day's par is kept once per variant and day, and with the race
    kept = None
    for _ in range(int(PAR_WAIT * 10)):
        race = await node.node.store.races.load_race(code)
        if race is not None and race.par is not None:
            kept = await node.node.store.par.daily_par(VARIANT, day)
            break
        await asyncio.sleep(0.1)
    assert kept is not None and race is not None and race.par == kept
    assert kept.line is not None and _wins(seed, kept.line)
    # during the day: no par event, none in the snapshot, no card in any frame
    again = await a.join(code, role="spectator")
    assert again.race.par is None
    await a.drain(0.3)
    assert not [m for m in a.received if m.type == "par"]
    scanner = LeakScanner(VARIANT, secrets=(seed,))
    assert scanner.feed_all(a.player, "player", a.frames) == []
    assert rules.race_info(race, now=time.time()).par is None
    # after the day, the snapshot shows it
    assert rules.race_info(race, now=rules.day_end(day) + 1).par == kept
    await r.aclose()
    await a.close()


async def test_a_winnable_races_proof_is_its_par_at_once_when_nobody_won(
    redis_server: Any, server_node: Any
) -> None:
    """A winnable race's deal was proven with a winning line: kept with the seed, it is the
    race's provisional par as soon as the race ends, though nobody won; then the search's."""
    node = await server_node(redis_server.url, pool_size=0, par_budget=BUDGET, **FAST)
    a = await Client.connect(node.url, name="ann")
    joined = await a.create(variant=VARIANT, winnable=True, countdown=0, time_limit=600)
    code = joined.race.code
    await a.ready(code)
    await a.expect("prepared", timeout=60)  # a bound for a busy machine
    await a.expect("ack", lambda m: m.seq == 0 and m.code == code)
    await a.send(p.Resign(code=code, seq=1))
    finished = await a.expect("finished")
    assert finished.results[0].status == "resigned"
    r = aioredis.from_url(redis_server.url)
    proof = await node.node.store.par.proof(VARIANT, finished.seed)
    assert proof is not None and _wins(finished.seed, proof)  # the proof's line, kept
    known = await a.expect("par", timeout=PAR_WAIT)
    assert known.provisional and known.line == proof and known.moves == len(proof)
    par = await a.expect("par", timeout=PAR_WAIT)
    assert not par.provisional and par.moves is not None and par.moves <= len(proof)
    assert par.line is not None and _wins(finished.seed, par.line)
    # the proof lives with a TTL of its own, not for ever
    assert 0 < await r.ttl(keys.proof(VARIANT, finished.seed)) <= keys.PROOF_TTL
    await r.aclose()
    await a.close()


async def test_a_hints_line_is_the_par_at_once_when_nobody_won(
    redis_server: Any, server_node: Any
) -> None:
    """A hint's search found a winning line from the player's position: their standing
    moves then that line win the deal, and they are the provisional par at the finish."""
    node = await server_node(redis_server.url, pool_size=0, par_budget=BUDGET, **FAST)
    seed = "b"  # a deal the hints' search wins from its first positions
    a = await Client.connect(node.url, name="ann")
    code = (
        await a.create(variant=VARIANT, seed=seed, hints=True, countdown=0, time_limit=600)
    ).race.code
    await a.ready(code)
    await a.expect("ack", lambda m: m.seq == 0 and m.code == code)
    r = aioredis.from_url(redis_server.url)
    # a move, taken back, and made again: the actions are three, one move stands
    first = solve(Board.deal(VARIANT, seed), budget=BUDGET).line[0].text()
    assert (await a.move(code, 1, first)).type == "ack"
    await a.send(p.Undo(code=code, seq=2))
    await a.expect("ack", lambda m: m.seq == 2)
    assert (await a.move(code, 3, first)).type == "ack"
    reply = await a.request(p.Hint(req=0, code=code), ("hint_reply", "error"), timeout=120)
    assert reply.type == "hint_reply" and reply.verdict == "won", reply
    kept: list[str] | None = None
    for _ in range(200):  # kept just after the reply, in the hint's own task
        kept = next(iter(await node.node.store.races.hint_lines(code)), None)
        if kept is not None:
            break
        await asyncio.sleep(0.05)
    # the standing move, then the hint's line from there: it wins the deal
    assert kept is not None and kept[:2] == [first, reply.move], kept
    assert _wins(seed, kept)
    # a line from a position the player has left is not kept, nor a longer one
    races = node.node.store.races
    assert not await races.keep_hint_line(code, a.player, Board.deal(VARIANT, seed).text(), ["x"])
    game = await races.load_game(code, a.player)
    assert game is not None
    assert not await races.keep_hint_line(code, a.player, game.position, kept + ["s"])
    await a.send(p.Resign(code=code, seq=4))
    finished = await a.expect("finished")
    assert finished.results[0].status == "resigned"
    known = await a.expect("par", timeout=PAR_WAIT)
    assert known.provisional and known.line == kept
    par = await a.expect("par", timeout=PAR_WAIT)
    assert not par.provisional and par.moves is not None and par.moves <= len(kept)
    # the hints' lines live and go with the race
    assert await r.ttl(keys.hint_lines(code)) > 0
    await r.aclose()
    await a.close()


async def test_a_par_search_that_failed_starts_again_when_the_race_is_shown(
    redis_server: Any, server_node: Any
) -> None:
    """The search's worker dies: the par is left to the race's next showing, which starts
    it again, though the finished race's snapshot is kept and shared by then."""
    import os
    import signal

    node = await server_node(redis_server.url, par_budget=BUDGET, **FAST)
    a = await Client.connect(node.url, name="ann")
    code = (await a.create(variant=VARIANT, seed="par-again-1", countdown=0)).race.code
    await a.ready(code)
    await a.expect("ack", lambda m: m.seq == 0 and m.code == code)
    await a.send(p.Resign(code=code, seq=1))  # nobody won, no proof: no provisional par
    await a.expect("finished")
    watcher = await Client.connect(node.url, name="eve")
    assert (await watcher.join(code, role="spectator")).race.par is None  # kept, shared
    pars, workers = node.node.pars, node.node.workers
    for _ in range(600):
        if workers.running:
            break
        await asyncio.sleep(0.05)
    assert workers.running and code in pars.pending
    for pid in workers.pids():
        os.kill(pid, signal.SIGKILL)  # the search dies: its claim is dropped
    for _ in range(600):
        if code not in pars.pending:
            break
        await asyncio.sleep(0.05)
    assert code not in pars.pending and pars.computed == 0
    # shown again: the search starts again, and the par lands
    late = await Client.connect(node.url, name="late")
    await late.join(code, role="spectator")
    par = await late.expect("par", timeout=PAR_WAIT)
    assert not par.provisional and par.line is not None and _wins("par-again-1", par.line)
    for c in (a, watcher, late):
        await c.close()
