"""The standalone checker verifies a real finished race, and catches tampering."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgpack

from spider_engine import Board
from tests.server.server_helpers import Client, Player, start_race

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "verify_race.py"


def _run(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(path), *args], capture_output=True, text=True, timeout=60
    )


def _progress(view: str) -> tuple[int, int, int]:
    """A view's progress (rules.md §7a), turned-up cards counted from 0 face down."""
    board = Board.from_text(view)
    return board.variant.progress(board, 0)


async def test_verify_race_script(redis_server, server_node, tmp_path: Path) -> None:
    node = await server_node(redis_server.url)
    code, (a, b), (w,) = await start_race(node.url, players=2, spectators=1, variant="spider2")
    started = await w.expect("started")
    pa = Player(a, code, (await a.join(code)).view, seed=31)
    pb = Player(b, code, (await b.join(code)).view, seed=32)
    for _ in range(6):
        await pa.step()
        await pb.step()
    await pa.undo()
    await pa.resign()
    # b plays on until its progress differs from a's, so that the two ranks are apart
    # by what the results show (a tampered order is then caught)
    for _ in range(100):
        if _progress(pb.view) != _progress(pa.view):
            break
        await pb.step()
    assert _progress(pb.view) != _progress(pa.view)
    await pb.resign()
    await w.expect("finished")
    frame = next(f for f in w.frames if msgpack.unpackb(f)["type"] == "finished")
    finished = msgpack.unpackb(frame)
    path = tmp_path / "finished.json"
    path.write_text(json.dumps(finished))
    done = _run(path, "--commitment", started.commitment)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all checks passed" in done.stdout
    # a finished race's snapshot (a late joiner's reply) verifies too
    late = await Client.connect(node.url, name="late")
    await late.join(code, role="spectator")
    snap = msgpack.unpackb(next(f for f in late.frames if msgpack.unpackb(f)["type"] == "joined"))
    (tmp_path / "snap.json").write_text(json.dumps(snap))
    assert _run(tmp_path / "snap.json").returncode == 0
    # tampering of every kind is caught
    tampered = {
        "seed": lambda d: d.__setitem__("seed", d["seed"] + "0"),
        "score": lambda d: d["results"][0].__setitem__("score", d["results"][0]["score"] + 1),
        "action": lambda d: d["replays"][a.player].insert(0, "+"),
        "board": lambda d: d["boards"].__setitem__(b.player, d["boards"][a.player]),
        "rank": lambda d: [r.__setitem__("rank", 3 - r["rank"]) for r in d["results"]],
    }
    for label, change in tampered.items():
        data = json.loads(json.dumps(finished))
        change(data)
        bad = tmp_path / f"{label}.json"
        bad.write_text(json.dumps(data))
        done = _run(bad)
        assert done.returncode == 1, (label, done.stdout)
        assert "FAIL" in done.stdout
    assert _run(path, "--commitment", "00" * 32).returncode == 1
