"""``spider-race``: one command for every job.

Engine commands (``deal``, ``moves``, ``apply``, ``solve``, ``par``) print one line per answer;
bad input prints one line on standard error and exits with status 2. ``--version`` prints
the installed version; ``python -m spider_race`` is the same command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from .account_command import add_account_parser
from .admin_command import add_parser as add_admin_parser
from .bench_growth import ROW_NAMES
from .credentials import DEFAULT_URL, TOKEN_ENV

__all__ = ["main", "build_parser", "play_app", "version"]

DISTRIBUTION = "spider-race"
URL_HELP = f"the server's websocket URL (default {DEFAULT_URL})"
CREDENTIALS_HELP = (
    "where your player's token (a guest's, or your account's session) is kept, per server "
    "(default: $SPIDER_RACE_CREDENTIALS, else $XDG_CONFIG_HOME/spider-race/credentials.json "
    f"or ~/.config/spider-race/credentials.json); ${TOKEN_ENV} overrides it"
)


def version() -> str:
    """The installed version of the ``spider-race`` distribution; ``unknown`` when it is
    not installed (the package imported from a source tree)."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"


class _Version(argparse.Action):
    """``--version``: print ``spider-race VERSION`` and exit 0 (the version is looked up
    only when asked for)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        kwargs.setdefault("help", "print the version and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(f"{parser.prog} {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spider-race",
        description="Race friends and bots at Spider solitaire on the same seeded deal.",
    )
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("deal", help="print the full position of a seeded deal")
    p.add_argument("variant", help="variant id, e.g. spider4 or spider2+relaxed")
    p.add_argument("seed", help="the seed (text; integers in decimal)")

    p = sub.add_parser("moves", help="print the legal moves of positions")
    p.add_argument("position", nargs="?", help="a position; without it, one per line on stdin")

    p = sub.add_parser("apply", help="apply moves to a position and print the result")
    p.add_argument("position", help="a full position (as printed by deal)")
    p.add_argument(
        "moves", nargs="*", metavar="MOVE", help="moves in the spec's notation, in order"
    )

    p = sub.add_parser("solve", help="solve a deal or a position with full knowledge")
    p.add_argument("variant", nargs="?", help="variant id of a seeded deal")
    p.add_argument("seed", nargs="?", help="the deal's seed")
    p.add_argument("--position", default=None, help="solve this full position instead of a deal")
    p.add_argument(
        "--budget", type=int, default=1_000_000, help="positions at most (default 1,000,000)"
    )
    p.add_argument(
        "--shortest",
        action="store_true",
        help="print the par line (the shortest winning line found) instead of the first",
    )

    p = sub.add_parser("par", help="the shortest winning line found for a deal (its par)")
    p.add_argument("variant", help="variant id, e.g. spider4 or wizard+weave")
    p.add_argument("seed", help="the deal's seed")
    p.add_argument(
        "--budget", type=int, default=1_000_000, help="positions at most (default 1,000,000)"
    )

    p = sub.add_parser(
        "serve",
        help="run the race server (with its own Redis and PostgreSQL unless --redis, --database)",
    )
    p.add_argument("--host", default=None, help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 8765)")
    p.add_argument(
        "--redis", default=None, metavar="URL", help="use this Redis instead of an embedded one"
    )
    p.add_argument(
        "--database",
        default=None,
        metavar="URL",
        help="use this PostgreSQL (postgresql://...) instead of an embedded one",
    )
    p.add_argument(
        "--data-dir",
        default=None,
        metavar="DIR",
        help="data folder of the embedded Redis and PostgreSQL and the generated token "
        "secret (default data)",
    )
    p.add_argument(
        "--log-level",
        default=None,
        choices=("debug", "info", "warning", "error", "critical"),
        type=str.lower,
        help="least severe log records written (default info)",
    )
    p.add_argument(
        "--log-format",
        default=None,
        choices=("text", "json"),
        type=str.lower,
        help="text lines, or one JSON object per line (default text)",
    )

    p = sub.add_parser("bot", help="join a race by code and play it with a bot")
    p.add_argument("code", nargs="?", help="the race's code (or --quick)")
    p.add_argument(
        "--quick",
        metavar="VARIANT",
        default=None,
        help="queue for quick matches of VARIANT, play, and queue again (see --games)",
    )
    p.add_argument(
        "--games", type=int, default=1, help="with --quick: games to play (0: until stopped)"
    )
    p.add_argument(
        "--url",
        default=DEFAULT_URL,
        help=URL_HELP + "; with --quick, several URLs separated by commas are tried in turn",
    )
    p.add_argument(
        "--strategy",
        choices=["greedy", "careless", "random"],
        default="greedy",
        help="how the bot plays, strongest first: greedy ranks moves the way players do; "
        "careless plays greedy but makes a random move one time in two; random "
        "plays random moves (default greedy)",
    )
    p.add_argument(
        "--name",
        default=None,
        help="the bot's name (default: STRATEGY bot; signed in, the account's name)",
    )
    p.add_argument("--credentials", default=None, metavar="FILE", help=CREDENTIALS_HELP)
    p.add_argument(
        "--guest",
        action="store_true",
        help="play as a new guest even when signed in (spider-race account login)",
    )
    p.add_argument(
        "--max-moves",
        type=int,
        default=None,
        metavar="N",
        help="random, careless: resign after N moves (default 400, careless 2000)",
    )

    p = sub.add_parser(
        "play",
        help="play in the terminal: create a race, or join one by code (or rejoin one of yours)",
    )
    p.add_argument("code", nargs="?", help="join this race; without it, create one")
    p.add_argument("--url", default=DEFAULT_URL, help=URL_HELP)
    p.add_argument(
        "--name",
        default=None,
        help="your name in the race (default: the stored player's, else your login)",
    )
    p.add_argument("--credentials", default=None, metavar="FILE", help=CREDENTIALS_HELP)

    p = sub.add_parser("watch", help="watch a race in the terminal as a spectator")
    p.add_argument("code", help="the race's code")
    p.add_argument("--url", default=DEFAULT_URL, help=URL_HELP)
    p.add_argument("--credentials", default=None, metavar="FILE", help=CREDENTIALS_HELP)

    add_account_parser(sub, url_help=URL_HELP, credentials_help=CREDENTIALS_HELP)

    p = sub.add_parser("profile", help="print a player's profile: races, wins, rating, last races")
    p.add_argument("who", nargs="?", default=None, help="a player's name or id (default: yours)")
    p.add_argument("--url", default=DEFAULT_URL, help=URL_HELP)
    p.add_argument("--token", default=None, help="speak as this token's player (from welcome)")

    p = sub.add_parser(
        "export", help="print a finished race's record as JSON (to replay and check it)"
    )
    p.add_argument("code", help="the race's code")
    p.add_argument("--url", default=DEFAULT_URL, help=URL_HELP)

    p = sub.add_parser("ratings", help="print a variant's rating leaderboard")
    p.add_argument("variant", nargs="?", default="spider1", help="variant id (default spider1)")
    p.add_argument("--bots", action="store_true", help="the bot ladder")
    p.add_argument("--url", default=DEFAULT_URL, help=URL_HELP)
    p.add_argument("--token", default=None, help="speak as this token's player (from welcome)")

    p = sub.add_parser("demo", help="a race of bots, shown live")
    p.add_argument("--bots", type=int, default=3, help="bots in the race (default 3)")
    p.add_argument(
        "--variant", default="spider1", help="variant id, e.g. spider4 (default spider1)"
    )
    p.add_argument("--url", default=None, help="use this server instead of starting one")
    p.add_argument(
        "--headless", action="store_true", help="print events as text and exit at the end"
    )
    p.add_argument("--seed", default=None, help="deal this seed (default: a random one)")

    add_admin_parser(sub)
    p = sub.add_parser("bench", help="benchmarks that print figures")
    p.add_argument(
        "what",
        choices=[
            "engine", "server", "solver", "hint", "par", "affinity", "capacity", "versus",
            "archive", "signin", "growth",
        ],
        help="what to measure: engine, server, solver, hint, par, affinity (pub/sub per "
        "move with and without race affinity), capacity (costs on a 3-shard cluster), "
        "versus (this tree's server against a reference commit's, in turns), archive "
        "(finished races written to PostgreSQL, and the node's CPU per move with the "
        "archive off and on), signin (the CPU of a sign-in with the node's Argon2 "
        "parameters, SPIDER_RACE_ARGON2_*) or growth (the README's table of how cost grows)",
    )  # fmt: skip
    p.add_argument(
        "--archive-races",
        type=int,
        default=1000,
        metavar="N",
        help="archive: finished races written to the database (default 1,000)",
    )
    p.add_argument(
        "--writers",
        type=int,
        default=1,
        help="archive: connections writing races at once (default 1, as one node)",
    )
    p.add_argument(
        "--finishers",
        type=int,
        default=4,
        metavar="K",
        help="archive: pairs of bots racing short races to their end in each round (default 4)",
    )
    p.add_argument(
        "--finish-moves",
        type=int,
        default=300,
        metavar="M",
        help="archive: moves of each finisher in each of its races (default 300)",
    )
    p.add_argument(
        "--finish-rate",
        type=float,
        default=200.0,
        metavar="R",
        help="archive: moves a second of each pair of finishers, both players' (default 200; "
        "0: each move as soon as the last is acked)",
    )
    p.add_argument(
        "--accounts",
        type=int,
        default=20,
        metavar="N",
        help="signin: accounts made, each from its own address (default 20)",
    )
    p.add_argument(
        "--signins",
        type=int,
        default=80,
        metavar="N",
        help="signin: sign-ins measured, then as many with a wrong password (default 80)",
    )
    p.add_argument(
        "--hashes",
        type=int,
        default=10,
        metavar="N",
        help="signin: hashings and checks timed in this process (default 10)",
    )
    p.add_argument(
        "--clients",
        type=int,
        default=4,
        metavar="N",
        help="signin: requests at once (default 4, the node's hashings at once by default)",
    )
    p.add_argument(
        "--reference",
        default=None,
        metavar="COMMIT",
        help="versus: the commit to measure against (default: the one in bench/reference)",
    )
    p.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="versus, archive: runs of each side, alternating (default 3; archive 0: writes only)",
    )
    p.add_argument(
        "--this-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="versus: a server setting for this tree's node only (growth: for every run), e.g. "
        "SPIDER_RACE_STORE_LAYOUT=2 (repeatable; with --reference HEAD, a setting against "
        "the same code without it)",
    )
    p.add_argument(
        "--row",
        action="append",
        default=[],
        help=f"growth: this row only (repeatable): {', '.join(ROW_NAMES)}",
    )
    p.add_argument(
        "--tolerance",
        type=float,
        default=0.15,
        help="versus: how much more node CPU per move than the reference fails (default 0.15)",
    )
    p.add_argument("--deals", type=int, default=100, help="engine, solver, par: seeded deals")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="solver: deals solved at once, each in its own process (one a core)",
    )
    p.add_argument(
        "--variant",
        default=None,
        help="solver, par: one variant (default: the three Spiders and the four other decks)",
    )
    p.add_argument(
        "--budget",
        type=int,
        default=None,
        help="solver: one budget (default 167,000 and 1,000,000); par: the budget of each "
        "deal (default 200,000); hint: positions per hint (default: the server's hint_budget "
        "default)",
    )
    p.add_argument(
        "--corpus",
        default=None,
        metavar="FILE",
        help="hint: positions, one per line (default: the committed spider4 corpus)",
    )
    p.add_argument(
        "--think",
        type=float,
        default=None,
        metavar="S",
        help="hint: a player who thinks S seconds before asking, answered by the server's "
        "hints (a prefetch from each position, then the answer) in one solver worker",
    )
    p.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="time measured (engine 2, server 10, server with --hint-spam, --pool-refill or "
        "--pars 60, growth 15 a row)",
    )
    p.add_argument("--url", default=None, help="server: the server to measure (default: its own)")
    p.add_argument("--redis", default=None, metavar="URL", help="server: its Redis, to count moves")
    p.add_argument("--players", type=int, default=100, help="server: bots that race")
    p.add_argument("--races", type=int, default=10, help="server: races they are spread over")
    p.add_argument("--spectators", type=int, default=0, help="server: spectators, over the races")
    p.add_argument("--stalled", type=int, default=0, help="server: spectators that never read")
    p.add_argument(
        "--spectator-procs",
        type=int,
        default=None,
        metavar="P",
        help="server: processes the spectators are spread over (default: one per 250, "
        "at most one per core)",
    )
    p.add_argument("--rate", default="1", help="server: moves a second per player, or max")
    p.add_argument(
        "--idle", type=int, default=0, metavar="N", help="server: hold N idle connections"
    )
    p.add_argument(
        "--idle-beside",
        type=int,
        default=0,
        metavar="N",
        help="server: N idle connections held (by a worker process) while the players race",
    )
    p.add_argument(
        "--warmup", type=float, default=2.0, help="server: seconds of moves before measuring"
    )
    p.add_argument(
        "--hint-spam",
        type=int,
        default=0,
        metavar="K",
        help="server: K players asking for spider4 hints back to back in the measured "
        "time's second half",
    )
    p.add_argument(
        "--pool-refill",
        action="store_true",
        help="server: the seed pool refills spider4 deals in the measured time's second half",
    )
    p.add_argument(
        "--pars",
        type=int,
        default=0,
        metavar="N",
        help="server: N races (spider1, spider2 in turn) finished one after another in the "
        "measured time's second half, each waited for until its par lands",
    )
    return parser


def play_app(args: argparse.Namespace) -> Any:
    """The terminal UI ``play`` runs (a :class:`~spider_race.tui.RaceApp`): the lobby, or
    race ``args.code``, as the player stored in the credentials file for ``args.url``
    (:mod:`spider_race.credentials`), or as the token of the environment's
    ``SPIDER_RACE_TOKEN`` (then nothing is stored). Needs textual (ImportError without it)."""
    from .credentials import Credentials, token_from_environment
    from .tui import RaceApp

    code = args.code.strip().upper() if args.code else None
    token = token_from_environment()
    if token is not None:  # the environment's player, and nothing stored
        return RaceApp(url=args.url, name=args.name, code=code, client_options={"token": token})
    return RaceApp(
        url=args.url, name=args.name, code=code, credentials=Credentials(args.credentials)
    )


def _play(args: argparse.Namespace) -> int:
    try:
        app = play_app(args)
    except ImportError:
        print(
            "spider-race: the terminal UI needs textual: pip install 'spider-race[tui]'",
            file=sys.stderr,
        )
        return 1
    result = app.run()
    return result if isinstance(result, int) else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command = args.command
    if command in ("deal", "moves", "apply", "solve", "par"):
        from .engine_commands import run

        return run(args)
    if command == "serve":
        from spider_server.main import serve_command

        return serve_command(args)
    if command == "bench":
        from .bench import run as run_bench

        return run_bench(args)
    if command in ("profile", "ratings"):
        from .client_commands import _run_async
        from .profile_command import run_profile, run_ratings

        return _run_async(run_profile(args) if command == "profile" else run_ratings(args))
    if command == "export":
        from .export_command import run_export

        return run_export(args)
    if command == "admin":
        from .admin_command import run_admin

        return run_admin(args)
    if command == "play":
        return _play(args)
    if command == "account":
        from .account_command import run_account

        return run_account(args)
    if command in ("bot", "watch", "demo"):
        from .client_commands import run as run_client

        return run_client(args)
    raise AssertionError(command)  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
