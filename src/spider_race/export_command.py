"""``spider-race export CODE [--url URL]``: print a finished race's record as JSON.

The record (seed, salt, commitment, variant, options, every player's actions with their
times and results; docs/server.md, "A race's record") comes from the server's
``GET /races/<CODE>.json`` on the HTTP address of ``--url`` (``ws://host:port/ws`` ->
``http://host:port/races/<CODE>.json``; ``wss`` -> ``https``). ``python
scripts/verify_race.py FILE`` checks a saved record: the commitment, every player's
replay and the ranking.

Exit status: 0 with the record on standard output; 1 when the server refuses (no such
race, not finished, a daily race before its UTC day is over, too many requests, its
stores not answering), 2 for a code or URL that cannot be one, 3 when the server does
not answer; the reason in one line on standard error.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
from typing import Any

from .account_http import http_base

__all__ = ["record_url", "run_export"]

TIMEOUT = 30.0
"""Seconds the server has to answer."""


def record_url(url: str, code: str) -> str:
    """The record's HTTP address for the server of websocket URL ``url``; ValueError for a
    URL that is no server's."""
    return f"{http_base(url)}/races/{code}.json"


def _fail(message: str, status: int) -> int:
    print(f"spider-race export: {message}", file=sys.stderr)
    return status


def _error_of(body: bytes, status: int) -> str:
    try:
        data: Any = json.loads(body)
        return str(data["message"])
    except (ValueError, KeyError, TypeError):
        return f"the server answered HTTP {status}"


def run_export(args: argparse.Namespace) -> int:
    """Fetch race ``args.code``'s record from ``args.url``'s server and print it."""
    from spider_server.race.codes import normalize_code

    code = normalize_code(args.code)
    if code is None:
        return _fail(f"{args.code!r} is not a race code (5 letters and digits, such as K7QX2)", 2)
    try:
        url = record_url(args.url, code)
    except ValueError as e:
        return _fail(str(e), 2)
    request = urllib.request.Request(url, headers={"Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            body = response.read()
    except urllib.error.HTTPError as e:
        return _fail(_error_of(e.read(), e.code), 1)
    except (OSError, TimeoutError) as e:
        reason = getattr(e, "reason", None) or e
        return _fail(f"the server at {args.url} does not answer ({reason})", 3)
    try:
        record = json.loads(body)
    except ValueError:
        return _fail(f"the server at {args.url} answered something that is not JSON", 3)
    if not isinstance(record, dict) or record.get("code") != code:
        return _fail(f"the server at {args.url} answered no record of race {code}", 3)
    print(json.dumps(record, indent=2, ensure_ascii=False))
    return 0
