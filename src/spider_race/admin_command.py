"""``spider-race admin``: the operators' report and hand, run against the database.

- ``admin report [--days N] [--threshold R] [--json]``: the accounts whose rated results
  of the last N days (7 by default) are mostly against the same few opponents or from an
  address an opponent shared, and those whose rating moved more than R (300) within a
  day (the rules: :mod:`spider_server.accounts.report`);
- ``admin void RACE --reason TEXT``: undo a rated race's rating changes (every node
  carries it into the live records within a moment);
- ``admin close NAME --reason TEXT``: close an account (its sessions end, it can no
  longer sign in, it leaves the ladders; its results are kept);
- ``admin reopen NAME --reason TEXT``: reopen a closed account (back on the ladders);
- ``admin log [--limit N]``: the actions taken, newest first.

Every action is kept in the database with who (``--by``, else the system's user name),
when and why. The database is ``--database URL``, else ``SPIDER_RACE_DATABASE_URL``, else
the embedded database of a ``spider-race serve`` running with the data folder
``--data-dir`` (``SPIDER_RACE_DATA_DIR``, else ``./data``).

Exit status: 0 done; 1 refused (no such race or account, voided or closed before: the
reason on standard error, nothing changed); 2 bad arguments; 3 the database does not
answer.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "run_admin"]

REASON_MAX = 500
"""The longest reason kept."""


def add_parser(sub: Any) -> None:
    """The ``admin`` command and its subcommands."""
    p = sub.add_parser("admin", help="the operators' report and hand (against the database)")
    actions = p.add_subparsers(dest="admin", required=True, metavar="ACTION")
    report = actions.add_parser("report", help="accounts whose rated results look farmed")
    report.add_argument("--days", type=int, default=7, help="the window, in days (default 7)")
    report.add_argument(
        "--threshold", type=int, default=300, help="a rating move within a day to list (300)"
    )
    report.add_argument("--json", action="store_true", help="print JSON")
    void = actions.add_parser("void", help="undo a rated race's rating changes")
    void.add_argument("race", metavar="RACE", help="the race's code")
    close = actions.add_parser("close", help="close an account")
    close.add_argument("name", metavar="NAME", help="the account's name")
    reopen = actions.add_parser("reopen", help="reopen a closed account")
    reopen.add_argument("name", metavar="NAME", help="the account's name")
    for q in (void, close, reopen):
        q.add_argument("--reason", required=True, help="why (kept in the log)")
        q.add_argument("--by", default=None, help="who acts (default: the system's user name)")
    log = actions.add_parser("log", help="the actions taken, newest first")
    log.add_argument("--limit", type=int, default=50, help="how many (default 50)")
    for q in (report, void, close, reopen, log):
        q.add_argument(
            "--database",
            metavar="URL",
            default=None,
            help="the PostgreSQL URL (default: SPIDER_RACE_DATABASE_URL, else the embedded "
            "database of a running 'spider-race serve' in --data-dir)",
        )
        q.add_argument(
            "--data-dir",
            metavar="DIR",
            default=None,
            help="the data folder of 'spider-race serve' (default: SPIDER_RACE_DATA_DIR, else "
            "./data)",
        )


class _Refused(Exception):
    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def _check(args: argparse.Namespace) -> str:
    """The database URL; bad arguments refused (status 2)."""
    url = args.database or os.environ.get("SPIDER_RACE_DATABASE_URL", "")
    if not url:
        folder = Path(args.data_dir or os.environ.get("SPIDER_RACE_DATA_DIR") or "data")
        url = _embedded_url(folder)
    if not url:
        raise _Refused(
            "no database: give --database URL or set SPIDER_RACE_DATABASE_URL, or run it "
            f"while 'spider-race serve' runs with its embedded database in {folder}",
            2,
        )
    if args.admin == "report":
        if not 1 <= args.days <= 3650:
            raise _Refused("--days: 1 to 3650", 2)
        if args.threshold < 1:
            raise _Refused("--threshold: 1 or more", 2)
    if args.admin == "log" and not 1 <= args.limit <= 10_000:
        raise _Refused("--limit: 1 to 10000", 2)
    if args.admin in ("void", "close", "reopen"):
        reason = " ".join(str(args.reason).split())
        if not reason:
            raise _Refused("--reason: say why (it is kept in the log)", 2)
        if len(reason) > REASON_MAX:
            raise _Refused(f"--reason: at most {REASON_MAX} characters", 2)
        args.reason = reason
        by = args.by if args.by is not None else _user()
        args.by = " ".join(str(by).split())
        if not args.by:
            raise _Refused("--by: who acts", 2)
    return str(url)


def _embedded_url(folder: Path) -> str:
    """The URL of the embedded database of a ``spider-race serve`` running with data
    folder ``folder`` ('' when none runs there or its files cannot be read): its port is in
    the cluster's ``postmaster.pid``, its password in the folder."""
    from spider_server.pgembedded import CLUSTER, DATABASE, PASSWORD_FILE, USER

    base = folder / "postgres"
    try:
        lines = (base / CLUSTER / "postmaster.pid").read_text().splitlines()
        password = (base / PASSWORD_FILE).read_text().strip()
        port = int(lines[3])
    except (OSError, IndexError, ValueError):
        return ""
    return f"postgresql://{USER}:{password}@127.0.0.1:{port}/{DATABASE}"


def _user() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return "unknown"


async def _run(args: argparse.Namespace, url: str) -> str:
    from spider_server.errors import ArchiveError, Unavailable
    from spider_server.store.archive import ArchiveStore

    archive = ArchiveStore(url, pool_size=2)
    try:
        await archive.open()
    except (Unavailable, ArchiveError) as e:
        raise _Refused(f"the database cannot be used: {e}", 3) from None
    try:
        return await _act(args, archive)
    except Unavailable as e:
        raise _Refused(f"the database cannot be used: {e}", 3) from None
    finally:
        await archive.close()


async def _act(args: argparse.Namespace, archive: Any) -> str:
    from spider_server.accounts.report import Rated, findings, table
    from spider_server.names import NameRefused, check_name
    from spider_server.race.codes import normalize_code
    from spider_server.store import admin

    now = time.time()
    try:
        if args.admin == "void":
            code = normalize_code(args.race)
            if code is None:
                raise _Refused(f"{args.race!r} is not a race code (such as K7QX2)", 2)
            action = await admin.void_race(archive, code, by=args.by, reason=args.reason, now=now)
            return (
                f"race {code} voided (action {action}): its rating changes are undone on "
                "the live records by the nodes within a moment"
            )
        if args.admin in ("close", "reopen"):
            try:
                key = check_name(args.name).key
            except NameRefused:
                raise _Refused(f"no account named {args.name}", 1) from None
        if args.admin == "reopen":
            action = await admin.reopen_account(
                archive, key, args.name, by=args.by, reason=args.reason, now=now
            )
            return (
                f"account {args.name} reopened (action {action}): it may sign in again, and "
                "is back on the ladders within a moment"
            )
        if args.admin == "close":
            action, ended = await admin.close_account(
                archive, key, args.name, by=args.by, reason=args.reason, now=now
            )
            return (
                f"account {args.name} closed (action {action}): {ended} session(s) ended; it "
                "leaves the ladders within a moment"
            )
    except admin.AdminRefused as e:
        raise _Refused(str(e), 1) from None
    if args.admin == "log":
        rows = await admin.log_of(archive, args.limit)
        return (
            "\n".join(
                f"{r.id}  {_when(r.at)}  {r.by}  {r.action} {r.target}  "
                f"{'done' if r.done_at is not None else 'pending'}  {r.reason}"
                for r in rows
            )
            or "no action taken yet"
        )
    since = now - args.days * 24 * 3600
    seats, changes, addresses, accounts = await admin.report_rows(archive, since)
    rated = [
        Rated(c["player"], c["race_id"], c["finished_at"], c["before"], c["after"]) for c in changes
    ]
    where = {(a["race_id"], a["player"]): a["address"] for a in addresses}
    played = [(s["race_id"], s["player"]) for s in seats]
    found = findings(played, rated, where, accounts, threshold=args.threshold)
    if args.json:
        return json.dumps(
            {
                "days": args.days,
                "threshold": args.threshold,
                "findings": [f.fields() for f in found],
            },
            indent=2,
            ensure_ascii=False,
        )
    return table(found, days=args.days, threshold=args.threshold)


def _when(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at))


def run_admin(args: argparse.Namespace) -> int:
    """Run ``spider-race admin ...``; the exit status."""
    try:
        url = _check(args)
        print(asyncio.run(_run(args, url)))
    except _Refused as e:
        print(f"spider-race admin {args.admin}: {e}", file=sys.stderr)
        return e.status
    return 0
