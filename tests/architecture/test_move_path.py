"""One move's path through a real node goes through each of the server's modules once, in
one span: the transport reads the frame, the session handles it, the rules decide, the
store commits, the mover's ack is sent, the events go to the hub, its watches, and the
transport's write side; no module is entered again once it has returned, except the
transport's write side (and what it calls), which takes the ack and then each event, any
number of times. Calls that one entry into a module makes into another one after another
(``keys.meta`` then ``keys.players``) are one entry (:data:`ONE_ENTRY_PER_CALLER`). The
frames the move runs on (the node's connection handler, the transport's read loop) are on
the stack throughout: their modules never return, so calls back into them are not seen.

The move is traced with :func:`sys.setprofile` on a real node (real Redis, real websocket
clients on loopback), in the task that reads the mover's connection only (the node runs in
the test's event loop; other tasks, such as the store's batched commits, are not the
move's path), from the frame's arrival until that task waits for the next frame, the ack
and the events out. Only the functions whose code lives in the server package count; each
frame is mapped to its module (``spider_server.session.actions``). What the task was
still doing for an earlier frame when the trace began is left out.

A coroutine that waits (``await``) reports a ``return`` and, when it goes on, a ``call``
of the same frame object: a frame is on the stack from its first ``call`` until it really
ends (a ``return`` that is not a suspension: a later ``call`` of the same frame, or the
frame stopped at a ``yield``, says it was one), so a module whose coroutine merely waited
is not entered again when it goes on. A generator (``for _ in cas_tries()``) suspended at
a ``yield`` is on the stack in the same way, until it ends.
"""

from __future__ import annotations

import asyncio
import dis
import inspect
import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import spider_server
from spider_client import protocol as p
from spider_engine import Board
from tests.server.server_helpers import TIMEOUT, Client, Player, start_race

WRITE_SIDE = {"spider_server.transport.writing", "spider_server.transport.frames"}
"""The transport's write side: the modules a move may enter again and again from the ack
on (the ack, then each event to each subscriber; what they call is free too): the
connection's writes, and the frames built once for all their recipients (the hub builds
each event's frame, then hands it to the subscriptions)."""

ACK = ("spider_server.transport.writing", "Connection.send_ack")
"""Where the mover's ack is sent (module, qualified name): from its call on, the write side
may be entered again."""

READ_LOOP = ("spider_server.transport.reading", "read_frames")
"""The transport's loop that reads a connection's frames (module, qualified name): the task
running it for the mover's connection is the one traced."""

PASSED_THROUGH = ("spider_server.session", "spider_server.store", "spider_server.fanout.hub")
"""Packages or modules the move's path must go through (a trace without them saw no move)."""

WARM_UP_MOVES = 1
"""Moves the player makes before the one traced: with one, the traced move is a game's
next move as most are (the session decides it on the race and game its last commit left,
without reading them from Redis; the store knows the keys it touches); with none, the
player's first move, which reads them first."""

ONE_ENTRY_PER_CALLER = True
"""Calls that one entry into a module makes into another module one after another
(``keys.meta`` then ``keys.players`` from ``commit_action``; ``offer`` to each subscription
from the hub) enter it once. False: each is an entry of its own, so that any module called
twice, even by the same function, fails (the rule read to the letter)."""

SERVER = Path(spider_server.__file__).resolve().parent

_SUSPENDING = {dis.opmap["YIELD_VALUE"]}
_RESUMABLE = inspect.CO_COROUTINE | inspect.CO_GENERATOR | inspect.CO_ITERABLE_COROUTINE
_RESUMABLE |= inspect.CO_ASYNC_GENERATOR


# -- the rule, on a list of events ---------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """A ``call`` or ``return`` of a frame of the server's code, in the traced task."""

    kind: str
    """``call`` (a new frame, or one that goes on after waiting) or ``return`` (it ended,
    or it waits)."""
    frame: int
    """The frame's number in the trace (one per frame object)."""
    module: str
    function: str
    caller: int | None
    """The nearest server frame below it on the stack (its number), at a ``call``."""
    suspended: bool = False
    """A ``return`` at a ``yield``/``await``: the frame waits; it has not ended."""


@dataclass(frozen=True)
class Entry:
    """A module entered from another one (or from outside the server): the path's steps."""

    depth: int
    module: str
    function: str
    again: bool
    """It had returned already: the rule's failure."""


def walk(
    events: list[Event],
    write_side: Iterable[str],
    ack: tuple[str, str],
    *,
    one_entry_per_caller: bool = True,
) -> list[Entry]:
    """The modules entered, in order, each marked when it is entered again after it had
    returned (none of its frames on the stack any more), unless it is the write side (or
    called from within it) after the ack, or (``one_entry_per_caller``) it is called from
    the same entry into the calling module as the one it last returned to (a function
    calling ``keys.meta`` then ``keys.players``, or the comprehension inside it, enters
    ``keys`` once). A ``call`` of a frame seen before is that frame going on after waiting,
    not a new entry; a ``return`` followed later by a ``call`` of the same frame is a wait."""
    write_side = set(write_side)
    resumed_later: set[int] = set()
    waits: set[int] = set()  # indexes of the returns that are waits
    for i in range(len(events) - 1, -1, -1):
        e = events[i]
        if e.kind == "call":
            resumed_later.add(e.frame)
        elif e.suspended or e.frame in resumed_later:
            waits.add(i)
    live: dict[int, str] = {}
    callers: dict[int, int | None] = {}
    span: dict[int, int] = {}
    """Frame -> the frame through which its module was entered (itself, or the span of its
    caller in the same module)."""
    depth: dict[int, int] = {}
    writing: set[int] = set()
    """Frames of the write side entered from the ack on, and the frames they called."""
    count: Counter[str] = Counter()
    left_to: dict[str, int | None] = {}
    """Module that returned -> the span it returned to (the entry into the module that had
    called it)."""
    seen: set[int] = set()
    acked = False
    entries: list[Entry] = []
    for i, e in enumerate(events):
        if e.kind == "call":
            if e.frame in seen:
                continue  # it goes on after waiting
            seen.add(e.frame)
            if (e.module, e.function) == ack:
                acked = True
            caller = live.get(e.caller) if e.caller is not None else None
            on = e.caller if caller is not None else None
            d = (-1 if on is None else depth[on]) + (e.module != caller)
            depth[e.frame] = d
            callers[e.frame] = on
            span[e.frame] = e.frame if on is None or e.module != caller else span[on]
            if acked and (e.module in write_side or on in writing):
                writing.add(e.frame)
            again = (
                count[e.module] == 0
                and e.module in left_to
                and e.frame not in writing
                and not (one_entry_per_caller and on is not None and left_to[e.module] == span[on])
            )
            if e.module != caller or again:
                entries.append(Entry(d, e.module, e.function, again))
            live[e.frame] = e.module
            count[e.module] += 1
        elif e.frame in live and i not in waits:
            module = live.pop(e.frame)
            count[module] -= 1
            if not count[module]:
                on = callers[e.frame]
                left_to[module] = None if on is None else span[on]
    return entries


def describe(entries: list[Entry]) -> str:
    return "\n".join(
        f"{'  ' * e.depth}{e.module}  {e.function}"
        + ("    <-- entered again after it had returned" if e.again else "")
        for e in entries
    )


def test_the_rule_on_a_made_up_path() -> None:
    """Waits are not entries; a module entered again from elsewhere after it returned is
    (several calls from the one frame it returned to are one entry, unless asked not to be);
    the write side, and what it calls, is free from the ack on."""

    def call(n: int, module: str, caller: int | None, fn: str = "f") -> Event:
        return Event("call", n, module, fn, caller)

    def ret(n: int, module: str, suspended: bool = False) -> Event:
        return Event("return", n, module, "f", None, suspended)

    events = [
        call(1, "t", None, "run"),
        call(2, "s", 1),
        call(3, "st", 2),
        ret(3, "st", suspended=True),  # waits: its caller and the reader wait too
        ret(2, "s", suspended=True),
        ret(1, "t", suspended=True),
        call(1, "t", None, "run"),  # goes on: the same frames, no new entry
        call(2, "s", 1),
        call(3, "st", 2),
        call(4, "t", 3, "send_ack"),
        call(5, "f", 4),
        ret(5, "f"),
        ret(4, "t"),
        call(6, "h", 3),
        call(7, "t", 6, "send"),
        call(8, "f", 7),  # under the write side, after the ack: free
        ret(8, "f"),
        ret(7, "t"),
        call(9, "f", 6),  # the hub itself, in the module the write side used: again
        ret(9, "f"),
        ret(6, "h"),
        ret(3, "st"),
        call(10, "st", 2),  # the store again, from the frame it returned to
        ret(10, "st"),
        call(11, "x", 2),
        call(12, "st", 11),  # the store again, from elsewhere
        ret(12, "st"),
        ret(11, "x"),
        ret(2, "s"),
        ret(1, "t"),  # waits for the next frame: called again later (not in this list)
    ]
    path = [
        ("t", "run", False),
        ("s", "f", False),
        ("st", "f", False),
        ("t", "send_ack", False),
        ("f", "f", False),
        ("h", "f", False),
        ("t", "send", False),
        ("f", "f", False),
        ("f", "f", True),
        ("st", "f", False),
        ("x", "f", False),
        ("st", "f", True),
    ]
    entries = walk(events, {"t"}, ("t", "send_ack"))
    assert [(e.module, e.function, e.again) for e in entries] == path
    assert [e.depth for e in entries] == [0, 1, 2, 3, 4, 3, 4, 5, 4, 2, 2, 3]
    path[9] = ("st", "f", True)
    entries = walk(events, {"t"}, ("t", "send_ack"), one_entry_per_caller=False)
    assert [(e.module, e.function, e.again) for e in entries] == path


# -- tracing a real node -------------------------------------------------------------------


class PathTracer:
    """A profile function recording the server's calls and returns in one task, until
    that task's read loop waits for the next frame with nothing under it, after the ack
    was sent (what came before the frame whose handling sent it is left out)."""

    def __init__(self, task: asyncio.Task[Any], chain: list[FrameType]) -> None:
        self.task = task
        at = [i for i, f in enumerate(chain) if _where(f) == READ_LOOP]
        assert at, f"the task runs no {READ_LOOP}"
        self.reader = chain[at[0]]
        self.done = asyncio.Event()
        self.error: BaseException | None = None
        self._events: list[Event] = []
        self._start = 0
        """Where the frame that is traced begins in :attr:`_events` (the loop waited for
        it there)."""
        self._acked = False
        self._resumed_at: dict[int, int] = {}
        """Frame -> the instruction it began or went on at, at its last ``call``."""
        self._numbers: dict[int, int] = {}
        self._frames: list[FrameType] = []  # kept alive: their ids stay theirs
        self._modules: dict[CodeType, str | None] = {}
        self._above = {self._number(f) for f in chain[: at[0] + 1]}
        """The read loop and what runs it."""
        self._under = {
            self._number(f) for f in chain[at[0] + 1 :] if self._module(f.f_code) is not None
        }
        """Server frames under the read loop that have not ended (the handling of a frame)."""

    @property
    def events(self) -> list[Event]:
        """The events of the traced frame, from the loop going on with it."""
        return self._events[self._start :]

    def _module(self, code: CodeType) -> str | None:
        try:
            return self._modules[code]
        except KeyError:
            module = self._modules[code] = _module_of(code)
            return module

    def _number(self, frame: FrameType) -> int:
        n = self._numbers.get(id(frame))
        if n is None:
            n = self._numbers[id(frame)] = len(self._frames)
            self._frames.append(frame)
        return n

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event not in ("call", "return") or self.done.is_set():
            return
        try:
            module = self._module(frame.f_code)
            if module is None or asyncio.current_task() is not self.task:
                return
            self._record(frame, event, module)
        except BaseException as e:  # never into the node's code: kept, the test fails
            self.error = e
            self.done.set()

    def _record(self, frame: FrameType, event: str, module: str) -> None:
        n = self._number(frame)
        name = frame.f_code.co_qualname
        if event == "call":
            caller = frame.f_back
            while caller is not None and self._module(caller.f_code) is None:
                caller = caller.f_back
            if n not in self._above:
                self._under.add(n)  # again when it goes on after waiting: no matter
            self._resumed_at[n] = frame.f_lasti
            if (module, name) == ACK:
                self._acked = True
            number = None if caller is None else self._number(caller)
            self._events.append(Event("call", n, module, name, number))
            return
        suspended = _waits(frame, self._resumed_at.get(n))
        self._events.append(Event("return", n, module, name, None, suspended))
        if not suspended:
            self._under.discard(n)
        elif frame is self.reader and not self._under:  # it waits for the next frame
            if self._acked:
                self.done.set()
            else:  # the trace's frame begins when the loop goes on
                self._start = len(self._events)

    def forget(self) -> None:
        self._frames.clear()


def _module_of(code: CodeType) -> str | None:
    """The server module a function's code belongs to (None: not the server's)."""
    try:
        path = Path(code.co_filename).resolve()
    except (OSError, ValueError):
        return None
    if not path.is_relative_to(SERVER) or path.suffix != ".py":
        return None
    parts = list(path.relative_to(SERVER.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _where(frame: FrameType) -> tuple[str | None, str]:
    """(module, qualified name) of a frame's function."""
    return _module_of(frame.f_code), frame.f_code.co_qualname


def _waits(frame: FrameType, resumed_at: int | None) -> bool:
    """Whether a frame that returns is a coroutine or generator stopping at a ``yield`` (or
    an ``await`` that waits), to go on later. A ``return`` at the very ``yield`` it went on
    at (``resumed_at``) is an exception thrown in there that ended it (a generator closed,
    a task cancelled), not a wait."""
    code = frame.f_code
    lasti = frame.f_lasti
    if not code.co_flags & _RESUMABLE or lasti < 0 or lasti == resumed_at:
        return False
    return code.co_code[lasti] in _SUSPENDING


def _chain(task: asyncio.Task[Any]) -> Iterator[FrameType]:
    """The frames of a waiting task's coroutines, outermost first."""
    awaited: Any = task.get_coro()
    while awaited is not None:
        frame = getattr(awaited, "cr_frame", None) or getattr(awaited, "gi_frame", None)
        if frame is None:
            return
        yield frame
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)


def _reading_task(client: Client) -> tuple[asyncio.Task[Any], list[FrameType]]:
    """The task that reads the client's connection on the node (it runs :data:`READ_LOOP`
    for the websocket whose peer is the client's end), and its frames."""
    from websockets.asyncio.server import ServerConnection

    local = client.ws.local_address[:2]

    def peer_of(frames: list[FrameType]) -> Any:
        for frame in frames:
            for value in frame.f_locals.values():
                for candidate in (value, *getattr(value, "__dict__", {}).values()):
                    if isinstance(candidate, ServerConnection):
                        return tuple(candidate.remote_address[:2])
        return None

    found = []
    for task in asyncio.all_tasks():
        frames = list(_chain(task))
        if any(_where(f) == READ_LOOP for f in frames) and peer_of(frames) == local:
            found.append((task, frames))
    assert len(found) == 1, f"{len(found)} tasks run {READ_LOOP} for the mover's connection"
    return found[0]


def _plain_move(view: str) -> str:
    """A legal move of the board that is not a deal (``+``)."""
    return next(m for m in Board.from_text(view).legal_moves.texts() if m != "+")


async def _trace_one_move(url: str) -> list[Event]:
    """Start a race of two players on the node at ``url``, make the first player's warm-up
    moves, then trace their next one (the clients are closed with the node)."""
    code, (a, b), _ = await start_race(url, players=2, seed="1")
    mover = Player(a, code, next(m for m in a.received if m.type == "ack").view)
    for _ in range(WARM_UP_MOVES):
        await mover.step(_plain_move(mover.view))
        await b.expect("progress", lambda m: m.player.player == a.player)
    move = _plain_move(mover.view)
    seq = mover.seq + 1
    tracer = PathTracer(*_reading_task(a))
    sys.setprofile(tracer)
    try:
        await a.send(p.MoveAction(code=code, seq=seq, move=move))
        ack = await a.expect(("ack", "error"), lambda m: m.seq == seq)
        assert ack.type == "ack", ack
        await b.expect(
            "progress", lambda m: m.player.player == a.player and m.player.moves == ack.moves
        )
        await asyncio.wait_for(tracer.done.wait(), TIMEOUT)
    finally:
        sys.setprofile(None)
    if tracer.error is not None:
        raise tracer.error
    events = tracer.events
    tracer.forget()
    return events


async def test_one_move_enters_each_module_once(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    events = await _trace_one_move(node.url)
    entries = walk(events, WRITE_SIDE, ACK, one_entry_per_caller=ONE_ENTRY_PER_CALLER)
    path = describe(entries)
    modules = {e.module for e in events}
    for wanted in PASSED_THROUGH:
        assert any(m == wanted or m.startswith(wanted + ".") for m in modules), (
            f"the move's trace never went through {wanted}:\n{path}"
        )
    again = sorted({e.module for e in entries if e.again})
    assert not again, (
        f"modules entered again after they had returned: {', '.join(again)}\n"
        f"the move's path (module entered, function; indented by nesting):\n{path}"
    )
