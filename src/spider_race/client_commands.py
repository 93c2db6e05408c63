"""The client side of ``spider-race``: ``bot``, ``play``, ``watch`` and ``demo``.

- ``bot CODE`` joins the race as a player, marks ready, plays it with the chosen bot until
  its game is over and prints its result (and the ranking when the race is over).
- ``play [CODE]`` and ``watch CODE`` open the terminal UI (:mod:`spider_race.tui`).
- ``demo`` starts a server with its own Redis (unless ``--url``), makes a race of bots with
  live boards on, and shows it as a spectator: in the terminal UI, or with ``--headless``
  as lines of text, exiting 0 when the race is over. It works on every variant; a bot that
  fails resigns at once (so the race still ends) and the demo exits 1.

Exit status: 0 when the job is done, 1 when the server could not be reached or refused.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import AsyncIterator
from typing import Any, TextIO

from spider_client import BadRequest, Client, SpiderClientError, make_bot, play_race
from spider_client import protocol as p
from spider_client.events import Disconnected, Reconnected
from spider_client.strategies import RANDOM_MAX_MOVES

from .credentials import token_for
from .quick_bot import run_quick_bot
from .words import error_text, plural

__all__ = ["run", "run_bot", "run_demo", "local_server", "format_event", "format_results"]


def run(args: argparse.Namespace) -> int:
    """Run the command ``args.command`` (``bot``, ``play``, ``watch`` or ``demo``)."""
    if args.command == "bot":
        token = None if args.guest else token_for(args.url, args.credentials)
        if args.quick is not None:
            return _run_async(
                run_quick_bot(
                    args.url,
                    args.quick,
                    strategy=args.strategy,
                    name=args.name,
                    games=args.games,
                    token=token,
                )
            )
        if args.code is None:
            print("spider-race bot: give a race's code, or --quick VARIANT", file=sys.stderr)
            return 2
        return _run_async(
            run_bot(
                args.url,
                args.code,
                strategy=args.strategy,
                name=args.name,
                max_moves=args.max_moves,
                token=token,
            )
        )
    if args.command in ("play", "watch"):
        return _run_tui(args)
    if args.command == "demo":
        return _run_async(
            run_demo(
                bots=args.bots,
                variant=args.variant,
                url=args.url,
                headless=args.headless,
                seed=args.seed,
            )
        )
    raise ValueError(f"not a client command: {args.command}")


def _run_async(job: Any) -> int:
    """Run a command's coroutine; SIGTERM cancels it, so that what it started (the demo's
    server) is stopped on the way out."""

    async def main() -> int:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
        try:
            return int(await job)
        finally:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signal.SIGTERM)

    try:
        return asyncio.run(main())
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 130
    except SpiderClientError as e:
        print(f"spider-race: {error_text(e)}", file=sys.stderr)
        if isinstance(e, BadRequest) and "a program plays with a bot account" in str(e):
            print(
                "spider-race: a person's account runs no bot: --guest plays as a new guest,"
                " or give a bot account's API token in SPIDER_RACE_TOKEN",
                file=sys.stderr,
            )
        return 1


def _run_tui(args: argparse.Namespace) -> int:
    try:
        from .tui import RaceApp
    except ImportError:
        print(
            "spider-race: the terminal UI needs textual: pip install 'spider-race[tui]'",
            file=sys.stderr,
        )
        return 1
    if args.command == "watch":
        token = token_for(args.url, args.credentials)
        options = {"token": token} if token is not None else {}
        app = RaceApp(
            url=args.url, code=args.code.upper(), role="spectator", client_options=options
        )
    else:
        code = args.code.upper() if args.code else None
        app = RaceApp(url=args.url, name=args.name, code=code)
    result = app.run()
    return result if isinstance(result, int) else 0


# -- bot ------------------------------------------------------------------------------------


async def run_bot(
    url: str | list[str],
    code: str,
    *,
    strategy: str = "greedy",
    name: str | None = None,
    max_moves: int | None = None,
    token: str | None = None,
    out: TextIO | None = None,
) -> int:
    """Join race ``code`` at ``url`` as a player (saying it is a bot) and play it with a
    ``strategy`` bot (``random`` resigns after ``max_moves`` moves, by default
    :data:`~spider_client.strategies.RANDOM_MAX_MOVES`); print the result. ``token``: the
    player it plays as (an account's session: the account's name stands), else a new
    guest named ``name``. Returns the exit status."""
    out = out or sys.stdout
    hello = name or f"{strategy} bot"
    async with await Client.connect(url, name=hello, token=token, bot=True) as client:
        await client.join(code.upper())
        race = await play_race(client, make_bot(strategy, max_moves=max_moves), until="game")
        me = client.me
        if me is not None:
            print(
                f"{me.name}: {me.status} — {plural(me.runs, 'run')},"
                f" {plural(me.turned_up, 'card')} turned up, {plural(me.moves, 'move')},"
                f" score {me.score}",
                file=out,
            )
        if race.results:
            print(format_results(race.results), file=out)
    return 0


# -- demo -----------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


DEMO_SERVER_ENV = {"SPIDER_RACE_RATE": "1000", "SPIDER_RACE_BURST": "2000"}
"""The demo's own server lets bots play as fast as they can (unless the environment says
otherwise); a server for people keeps its default rate limit."""


@contextlib.asynccontextmanager
async def local_server(*, startup_timeout: float = 60.0) -> AsyncIterator[str]:
    """Run ``spider-race serve`` (with its own Redis and PostgreSQL, in a temporary data
    folder) on a free loopback port for the duration; yields its websocket URL. The server
    is stopped with SIGTERM (killed if it does not exit) and the folder removed."""
    port = _free_port()
    with tempfile.TemporaryDirectory(prefix="spider-race-demo-") as data_dir:
        # other users may pass through (not list): as root, the server's embedded
        # PostgreSQL runs as an unprivileged user, who must reach its folder in here
        os.chmod(data_dir, 0o711)
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "spider_race.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--data-dir",
                data_dir,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={**DEMO_SERVER_ENV, **os.environ, "PYTHONUNBUFFERED": "1"},
        )
        url = f"ws://127.0.0.1:{port}/ws"
        try:
            await _wait_for_server(url, process, startup_timeout)
            yield url
        finally:
            process.terminate()
            try:
                await asyncio.to_thread(process.wait, 15)
            except subprocess.TimeoutExpired:
                process.kill()
                await asyncio.to_thread(process.wait)
            if process.stderr is not None:
                process.stderr.close()


async def _wait_for_server(url: str, process: subprocess.Popen[bytes], timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        if process.poll() is not None:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise SpiderClientError(f"the server exited with status {process.returncode}: {err}")
        try:
            client = await Client.connect(url, name="probe")
        except SpiderClientError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.1)
            continue
        await client.close()
        return


DEMO_ACTIONS = {"greedy": 3000, "random": RANDOM_MAX_MOVES}
"""Actions a demo bot makes at most before it resigns (the greedy bot gives up sooner when
nothing comes of its moves; a random one would wander for long)."""

DEMO_TIME_LIMIT = 900
"""The demo race's time limit in seconds: headless bots play without pauses and finish long
before it; in the terminal UI, where they pause 0.1 s between actions, too."""

DEMO_NAMES = ["Ada", "Brian", "Charles", "Dorothy", "Edsger", "Frances", "Grace", "Hedy"]


def demo_bots(count: int) -> list[tuple[str, str]]:
    """Names and strategies of the demo's bots: greedy and random in turn."""
    bots = []
    for i in range(count):
        strategy = "greedy" if i % 3 != 1 else "random"
        name = DEMO_NAMES[i % len(DEMO_NAMES)] + (
            f" {i // len(DEMO_NAMES) + 1}" if i >= len(DEMO_NAMES) else ""
        )
        bots.append((f"{name} {strategy}", strategy))  # a name has no brackets
    return bots


async def run_demo(
    *,
    bots: int = 3,
    variant: str = "spider1",
    url: str | None = None,
    headless: bool = False,
    seed: str | None = None,
    out: TextIO | None = None,
) -> int:
    """A race of ``bots`` bots with live boards on, watched as a spectator: in the terminal
    UI, or (``headless``) printed as text until the race is over. Starts a local server
    unless ``url`` is given. Returns the exit status: 0 when the race finished, 1 when it
    finished but a bot failed (it resigned at once, see standard error)."""
    out = out or sys.stdout
    if bots < 1:
        print("spider-race: a demo needs at least one bot", file=sys.stderr)
        return 2
    async with contextlib.AsyncExitStack() as stack:
        if url is None:
            print("starting a local server with its own Redis…", file=out, flush=True)
            url = await stack.enter_async_context(local_server())
            print(f"server at {url}", file=out, flush=True)
        roster = demo_bots(bots)
        players: list[Client] = []
        for name, _ in roster:
            client = await Client.connect(url, name=name, bot=True)
            players.append(await stack.enter_async_context(client))
        options: dict[str, Any] = {
            "variant": variant,
            "live_boards": True,
            "max_players": max(bots, 2),
            "time_limit": DEMO_TIME_LIMIT,
            "countdown": 1 if headless else 3,
        }
        if seed is not None:
            options["seed"] = seed
        code = await players[0].create_race(**options)
        for client in players[1:]:
            await client.join(code)
        delay = 0.0 if headless else 0.1
        tasks: list[asyncio.Task[Any]] = []
        failed: list[str] = []

        async def play(client: Client, name: str, strategy: str, seed: int) -> None:
            limit = DEMO_ACTIONS[strategy]
            try:
                await play_race(
                    client, make_bot(strategy, seed=seed), delay=delay, max_actions=limit
                )
            except Exception as e:  # a bot that fails resigns: the race does not wait for it
                failed.append(name)
                print(f"spider-race: {name}: the bot failed ({e!r}); it resigns", file=sys.stderr)
                with contextlib.suppress(SpiderClientError):
                    await client.resign()

        def start_bots() -> None:
            for i, (client, (name, strategy)) in enumerate(zip(players, roster, strict=True)):
                tasks.append(asyncio.create_task(play(client, name, strategy, i)))

        try:
            if headless:
                status = await _watch_headless(url, code, start_bots, out)
            else:
                status = await _watch_tui(url, code, start_bots)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        return 1 if failed and status == 0 else status
    return 0


async def _watch_headless(url: str, code: str, start_bots: Any, out: TextIO) -> int:
    async with await Client.connect(url, name="demo spectator") as spectator:
        joined = await spectator.join(code, "spectator")
        race = joined.race
        print(
            f"race {race.code}: {race.variant}, {len(race.players)} bots, live boards on,"
            f" time limit {race.time_limit // 60} min",
            file=out,
            flush=True,
        )
        start_bots()
        names = {info.player: info.name for info in race.players}
        last: dict[str, tuple[Any, ...]] = {}
        async for event in spectator.events():
            if isinstance(event, p.PlayerJoined):
                names[event.player.player] = event.player.name
            if isinstance(event, p.Progress):
                info = event.player
                key = (info.runs, info.status, info.deals_left)
                if last.get(info.player) == key:
                    continue  # print what changes the race: runs, deals, status
                last[info.player] = key
            line = format_event(event, names)
            if line:
                print(line, file=out, flush=True)
            if isinstance(event, p.Finished):
                print(format_results(event.results), file=out, flush=True)
                return 0
        print("the connection to the server was lost before the race ended", file=out)
        return 1


async def _watch_tui(url: str, code: str, start_bots: Any) -> int:
    from .tui import RaceApp

    app = RaceApp(url=url, code=code, role="spectator")
    app_task = asyncio.create_task(app.run_async())
    while not app_task.done() and (app.client is None or app.client.race is None):
        await asyncio.sleep(0.05)
    start_bots()
    result = await app_task
    return result if isinstance(result, int) else 0


def format_event(event: Any, names: dict[str, str]) -> str:
    """One line of text for a race event (empty for events not worth a line)."""

    def name(player: str) -> str:
        return names.get(player, player)

    if isinstance(event, p.PlayerJoined):
        return f"[{event.version}] {event.player.name} joined"
    if isinstance(event, p.PlayerLeft):
        return f"[{event.version}] {name(event.player)} left"
    if isinstance(event, p.PlayerReady):
        return (
            f"[{event.version}] {name(event.player)} is {'ready' if event.ready else 'not ready'}"
        )
    if isinstance(event, p.Countdown):
        return f"[{event.version}] countdown started"
    if isinstance(event, p.Started):
        return f"[{event.version}] started — commitment {event.commitment[:16]}…"
    if isinstance(event, p.Progress):
        i = event.player
        return (
            f"[{event.version}] {i.name}: {i.status}, {plural(i.runs, 'run')},"
            f" {i.turned_up} turned up, {plural(i.deals_left, 'deal')} left,"
            f" {plural(i.moves, 'move')}, score {i.score}"
        )
    if isinstance(event, p.Finished):
        return f"[{event.version}] finished — seed {event.seed!r} revealed"
    if isinstance(event, Disconnected):
        return f"(connection lost: {event.reason or event.code})"
    if isinstance(event, Reconnected):
        return f"(reconnected to {event.node})"
    return ""


def format_results(results: list[p.Result]) -> str:
    """The ranking as a small table; its last column marks a bot (declared by its client)
    or a ghost (a recorded run)."""
    lines = ["rank  player                     status     time  runs  moves  score  who"]
    for r in results:
        time = f"{r.time:6.1f}s" if r.time is not None else "      -"
        who = "ghost" if getattr(r, "ghost", False) else "bot" if getattr(r, "bot", False) else ""
        lines.append(
            f"{r.rank:>4}  {r.name[:25]:<25}  {r.status:<9}{time}  {r.runs:>4}  {r.moves:>5}"
            f"  {r.score:>5}  {who}".rstrip()
        )
    return "\n".join(lines)
