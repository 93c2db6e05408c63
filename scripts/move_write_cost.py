"""What a move's write costs Valkey: the node's action script against leaner sketches.

The node's script runs in each of its layouts, beside sketches of leaner ones, a floor and
the echo baseline's transaction.

    python scripts/move_write_cost.py [--races 100] [--moves 20000] [--batch 7] [--rounds 3]
                                      [--rate R] [--aof on|off|both]

Starts the embedded server's binary (append-only file on, as a node's), makes ``--races``
running races of ten players, and commits ``--moves`` moves with each layout in script
calls of ``--batch`` moves (each of another race, as at one move a second with 1,000
players: about seven moves a call), the layouts in turns (ABC, CBA, ...). It prints the
server's CPU (user + system, from ``INFO cpu``) per move for each layout, its median over
the rounds, and the commands each layout runs a move. With ``--aof both`` each layout is
measured with the append-only file on and then off (``now/no-aof``, ...), in each round,
which shows what the file's writes cost (``--aof off``: off only):

- ``now``: the action script of ``spider_server.store.scripts`` with the arguments a node
  sends (``spider_server.store.commits``), in layout 1 (``SPIDER_RACE_STORE_LAYOUT``, the
  default): the game's fields, the action, its time, the ack, the entry, the event, the
  standing moves, the undo depth's copy in ``marks``.
- ``layout2``: the same script in layout 2: the time in the action's entry, no copy.
- ``compact``: the same check-and-set and the same facts, but the ack and the time in the
  game's hash and the action's entry, the standing moves and the depth's copy not written
  (derived from the actions): the game, the actions, the entry, the event.
- ``log``: the check-and-set, the game's seq and position, and one stream entry holding
  the event, the action, its time, the ack and the entry (the rest derived from the log).
- ``floor``: less than any layout can do: the player's seq checked and one write of the
  game holding everything (no race read, no event, nothing for another node): what a
  script call of a move's check-and-set costs at the least.
- ``echo``: the bench's echo baseline's Redis work, one ``MULTI``/``INCR``/``EXEC`` a move,
  each its own round trip (``--batch`` is ignored: the echo writes every message alone).

The last four are sketches for measuring, not formats a node reads: they show how
much of Valkey's cost a move's layout could take away, and how far that is from the
echo's (docs/server.md, "Where a move's CPU goes").
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from redis import Redis

from spider_server.embedded import RedisProcess
from spider_server.store import keys
from spider_server.store.commits import action_keys
from spider_server.store.scripts import COMMIT_ACTIONS

PLAYERS = 10
POSITION = "8C 9D|" * 110  # a position's text is about 700 bytes
ACK = b"\x85\xa4type\xa3ack\xa3seq\x05\xa6status\xa7playing" + b"x" * 40
ENTRY = b"\x84\xa4name\xa5p0001\xa5moves\x05" + b"y" * 30
EVENT = b"\x83\xa4type\xa8progress\xa6player\xa5p0001" + b"z" * 50

_TEMPLATE = """
-- KEYS per move: meta, events, game, nodes, then the layout's own; ARGV per move: seq,
-- player, action, time, ack, entry, audience, data, position
local maxlen, now = ARGV[2], ARGV[4]
local versions, moved, replies, k, b = {}, {}, {}, 0, 5
while b <= #ARGV do
  local meta, game = KEYS[k + 1], KEYS[k + 3]
  local version = versions[meta]
  if version == nil then  -- the race's state, and its other watchers, read once a call
    local m = redis.call('HMGET', meta, 'state', 'version')
    version = m[1] == 'running' and tonumber(m[2])
    versions[meta] = version
    redis.call('ZRANGEBYSCORE', KEYS[k + 4], now, '+inf', 'LIMIT', 0, 2)
  end
  local g = redis.call('HMGET', game, 'seq', 'status')
  if version and tonumber(g[1]) == tonumber(ARGV[b]) and g[2] == 'playing' then
    local seq = string.format('%d', tonumber(ARGV[b]) + 1)
    local fields = {}
    WRITES
    version = version + 1
    local v = string.format('%d', version)
    redis.call('XADD', KEYS[k + 2], 'MAXLEN', '~', maxlen, v .. '-0', 'v', v,
               'a', ARGV[b + 6], 'd', ARGV[b + 7], unpack(fields))
    versions[meta] = version
    if not moved[meta] then moved[meta] = true; moved[#moved + 1] = meta end
    replies[#replies + 1] = {1, version}
  else
    replies[#replies + 1] = {0, 'seq'}
  end
  k, b = k + STRIDE, b + 9
end
for _, meta in ipairs(moved) do
  redis.call('HSET', meta, 'version', string.format('%d', versions[meta]))
end
return replies
"""

COMPACT = _TEMPLATE.replace("STRIDE", "6").replace(
    "WRITES",
    """-- KEYS: players, actions
    redis.call('HSET', game, 'seq', seq, 'position', ARGV[b + 8], 'ack', ARGV[b + 4])
    redis.call('RPUSH', KEYS[k + 6], ARGV[b + 2] .. ' ' .. ARGV[b + 3])
    redis.call('HSET', KEYS[k + 5], ARGV[b + 1], ARGV[b + 5])""",
)
"""The game's hash holds the ack, the action's entry its time; the standing moves are
derived from the actions."""

LOG = _TEMPLATE.replace("STRIDE", "4").replace(
    "WRITES",
    """redis.call('HSET', game, 'seq', seq, 'position', ARGV[b + 8])
    fields = {'p', ARGV[b + 1], 'x', ARGV[b + 2], 't', ARGV[b + 3], 'k', ARGV[b + 4],
              'e', ARGV[b + 5]}""",
)
"""The race's stream entry holds the action, its time, the ack and the entry."""

FLOOR = """
local replies, k = {}, 0
for b = 5, #ARGV, 9 do
  local game = KEYS[k + 1]
  local g = redis.call('HMGET', game, 'seq', 'status')
  if tonumber(g[1]) == tonumber(ARGV[b]) and g[2] == 'playing' then
    redis.call('HSET', game, 'seq', string.format('%d', tonumber(ARGV[b]) + 1),
               'position', ARGV[b + 8], 'last', ARGV[b + 2] .. ' ' .. ARGV[b + 3],
               'ack', ARGV[b + 4])
    replies[#replies + 1] = {1, 0}
  else
    replies[#replies + 1] = {0, 'seq'}
  end
  k = k + 1
end
return replies
"""
"""The check-and-set and one write of the game a move: below what any layout keeps."""


def _commands(r: Redis) -> int:
    """Commands the server ran so far, the scripts' own calls included (the script calls
    and these reads of the statistics left out)."""
    stats = r.info("commandstats")
    return sum(
        int(v["calls"])
        for k, v in stats.items()
        if k not in ("cmdstat_evalsha", "cmdstat_eval", "cmdstat_info")
    )


def _cpu(r: Redis) -> float:
    info = r.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


class Layout:
    """One layout's script and the calls of a batch of moves in it."""

    def __init__(self, r: Redis, name: str, races: list[str]) -> None:
        self.r, self.name, self.races = r, name, races
        self.script = r.register_script(
            {
                "now": COMMIT_ACTIONS[1],
                "layout2": COMMIT_ACTIONS[2],
                "compact": COMPACT,
                "log": LOG,
                "floor": FLOOR,
                "echo": "return 0",  # not called: the echo's transactions are commands
            }[name]
        )
        self.seq: dict[tuple[str, str], int] = {}
        self.echoed = 0

    def setup(self) -> None:
        self.r.flushall()
        self.echoed = 0
        pipe = self.r.pipeline(transaction=False)
        for code in self.races:
            pipe.hset(keys.meta(code), mapping={"state": "running", "version": 0})
            for i in range(PLAYERS):
                pid = f"p{i}"
                # games under way, at seq 1 with a standing move: the keys' TTLs, refreshed
                # on a player's first action and every 64th, and the positions marked every
                # 32 standing moves are left out (0.19 commands a move in a long game)
                pipe.hset(keys.game(code, pid), mapping={"seq": 1, "status": "playing"})
                pipe.rpush(keys.stack(code, pid), "a0b")
                # and, as layout 1 wrote them at the first action, its time and the depth
                pipe.rpush(keys.times(code, pid), "1000")
                pipe.hset(keys.marks(code, pid), "n", 1)
                self.seq[(code, pid)] = 1
        pipe.execute()

    def call(self, moves: list[tuple[str, str]]) -> None:
        if self.name == "echo":
            for _ in moves:
                pipe = self.r.pipeline(transaction=True)
                pipe.incr("{bench}:echo")
                (count,) = pipe.execute()
                self.echoed += 1
                assert count == self.echoed, (count, self.echoed)  # every one counted once
            return
        key_list: list[str] = []
        args: list[Any] = [3600, 1000, "node1", "1796000000.0"]
        for code, pid in moves:
            seq = self.seq[(code, pid)]
            self.seq[(code, pid)] = seq + 1
            action, time_ms = "a1b", str(1000 * seq)
            if self.name in ("now", "layout2"):
                key_list += action_keys(code, pid, 2 if self.name == "layout2" else 1)
                a: list[Any] = [seq, pid, action, ACK, ENTRY, 1, "all", EVENT, time_ms]
                a += ["seq", seq + 1, "position", POSITION]
                args += [len(a), *a]
            elif self.name == "floor":
                key_list.append(keys.game(code, pid))
                args += [seq, pid, action, time_ms, ACK, ENTRY, "all", EVENT, POSITION]
            else:
                key_list += [keys.meta(code), keys.events(code), keys.game(code, pid)]
                key_list.append(keys.nodes(code))
                if self.name == "compact":
                    key_list += [keys.players(code), keys.actions(code, pid)]
                args += [seq, pid, action, time_ms, ACK, ENTRY, "all", EVENT, POSITION]
        replies = self.script(keys=key_list, args=args)
        assert all(int(reply[0]) == 1 for reply in replies), replies


def measure(layout: Layout, moves: int, batch: int, rate: float = 0) -> tuple[float, float]:
    """Server CPU microseconds, and commands, per move of ``layout``."""
    layout.setup()
    if layout.name == "echo":
        batch = 1  # a transaction of its own for every message
    races, n = layout.races, 0
    calls = []
    while n < moves:
        calls.append([(races[(n + i) % len(races)], f"p{(n + i) // len(races) % PLAYERS}")
                      for i in range(batch)])  # fmt: skip
        n += batch
    commands, before = _commands(layout.r), _cpu(layout.r)
    start = time.monotonic()
    for i, moves_of_call in enumerate(calls):
        if rate:  # paced: each call wakes the server from waiting, as a node's do
            time.sleep(max(0.0, start + i * batch / rate - time.monotonic()))
        layout.call(moves_of_call)
    used = _cpu(layout.r) - before
    return 1e6 * used / n, (_commands(layout.r) - commands) / n


def set_aof(r: Redis, on: bool) -> None:
    """The append-only file on or off, once the rewrite that turning it on starts is done
    (measured apart from a move's cost)."""
    r.config_set("appendonly", "yes" if on else "no")
    for _ in range(600):
        info = r.info("persistence")
        settled = not int(info["aof_rewrite_in_progress"]) and not int(
            info["aof_rewrite_scheduled"]
        )
        if settled and bool(int(info["aof_enabled"])) == on:
            return
        time.sleep(0.05)
    raise RuntimeError(f"the append-only file not {'on' if on else 'off'} within 30 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--races", type=int, default=100)
    parser.add_argument("--moves", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=float, default=0, help="moves a second (0: at once)")
    parser.add_argument("--aof", choices=("on", "off", "both"), default="on",
                        help="the append-only file on, off, or each layout with and without")  # fmt: skip
    opts = parser.parse_args()
    server = RedisProcess(Path(tempfile.mkdtemp()) / "redis")
    server.start()
    try:
        r = Redis(port=server.port)
        r.config_set("auto-aof-rewrite-percentage", 0)  # no rewrite forked in a measure
        races = [f"R{i:04d}" for i in range(opts.races)]
        names = ("now", "layout2", "compact", "log", "floor", "echo")
        layouts = [Layout(r, name, races) for name in names]
        files = {"on": [True], "off": [False], "both": [True, False]}[opts.aof]
        found: dict[str, list[float]] = {}
        counted: dict[str, float] = {}
        for rnd in range(opts.rounds):
            for layout in layouts if rnd % 2 == 0 else layouts[::-1]:
                for aof in files:
                    set_aof(r, aof)
                    name = layout.name if aof else f"{layout.name}/no-aof"
                    us, counted[name] = measure(layout, opts.moves, opts.batch, opts.rate)
                    found.setdefault(name, []).append(us)
                    print(f"round {rnd + 1}: {name:14s} {us:6.1f} us of Valkey CPU a move")
        base = statistics.median(found["now" if files[0] else "now/no-aof"])
        for name, runs in found.items():
            median = statistics.median(runs)
            print(
                f"{name:14s} median {median:6.1f} us a move ({median / base:.2f} of now), "
                f"{counted[name]:.1f} commands a move"
            )
    finally:
        server.kill()


if __name__ == "__main__":
    main()
