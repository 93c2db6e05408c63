"""Plain HTTP on the websocket port: the probes ``GET /healthz`` and ``GET /readyz``,
``GET /metrics``, a finished race's record (``GET /races/<code>.json``, :meth:`Http.record`)
and the browser page's files (the package's ``static`` folder; ``/`` and a race's shareable
link ``/r/<code>`` are ``index.html``). ``/ws`` goes on to the websocket handshake.

- ``/healthz`` (liveness) answers 200 ``ok`` whenever the process and its event loop
  answer at all; it never asks Redis, so that a Redis outage does not get every node of a
  deployment restarted at once.
- ``/readyz`` (readiness) answers 200 ``ok`` when Redis answers and the node is not
  draining, else 503 with the reason (``draining``, ``redis is not answering``): a load
  balancer sends new players only to a node that is ready. A node that keeps an archive
  adds its line (``archive: ok, backlog N`` or ``archive: database unavailable (why),
  backlog N, oldest waiting S s``): the database being down does not make it unready.

Only GET and HEAD are served (405 with ``Allow: GET, HEAD`` otherwise). Before the
handshake the node may refuse: 503 when it is near its limit of open files (every path
but ``/healthz``; logged once while it lasts), 429 when the client's address has
``address_connections`` websockets open already, and 429 with the seconds left in
``Retry-After`` when the address was refused a new player (by any node) and comes back
before the time it was told (:meth:`~..limits.AddressLimits.retry_after`): such a refusal
costs the node an HTTP request's parsing, no websocket, no session, and no Redis command
once the node knows of it (before, one read of the refusal's mark). That 429 is held
back up to :data:`HOLD` seconds (never past the time told; at most ``address_connections``
requests of one address held at once, the others answered at once), so that a client
coming back in a tight loop makes a few requests a second, not hundreds."""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
import os
import re
import resource
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from ..errors import RaceNotFound, ServerError, Unavailable, WrongState
from ..limits import AddressLimits, Proxies, address_key
from ..race import NotYet, normalize_code
from .accounts_http import AccountRoutes

__all__ = [
    "ALLOWED",
    "HOLD",
    "STATIC",
    "WS_PATH",
    "AccountRoutes",
    "Http",
    "OpenFiles",
    "static_file",
]

log = logging.getLogger(__name__)

WS_PATH = "/ws"
STATIC = Path(__file__).resolve().parent.parent / "static"
_STATIC_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,254}")
ALLOWED = ("GET", "HEAD")
"""The HTTP methods served."""
HOLD = 1.0
"""Seconds at most a websocket request from an address refused for now waits for its 429."""
_RECORD = re.compile(r"/races/([^/]{1,64})\.json")


class OpenFiles:
    """Whether the process is near its limit of open files (``RLIMIT_NOFILE``): fewer than
    ``reserve`` left. Counted from ``/proc/self/fd`` at most every ``every`` seconds;
    where there is no such folder, never near."""

    def __init__(self, reserve: int, *, every: float = 0.25) -> None:
        self.reserve = reserve
        self.every = every
        self._checked = 0.0
        self._near = False

    @staticmethod
    def limit() -> int:
        return int(resource.getrlimit(resource.RLIMIT_NOFILE)[0])

    @staticmethod
    def open_now() -> int | None:
        try:
            return len(os.listdir("/proc/self/fd"))
        except OSError:
            return None

    def near(self) -> bool:
        now = time.monotonic()
        if now - self._checked < self.every:
            return self._near
        self._checked = now
        limit, used = self.limit(), self.open_now()
        was, self._near = self._near, used is not None and used > limit - self.reserve
        if self._near and not was:
            log.warning(
                "%s of %s open files: new connections get 503 until some close", used, limit
            )
        elif was and not self._near:
            log.info("open files back to %s of %s: new connections accepted again", used, limit)
        return self._near


def static_file(path: str) -> Path | None:
    """The browser page's file for a URL path (``/`` and a race's shareable link
    ``/r/<code>`` are ``index.html``), if it exists; only plain names inside the package's
    ``static`` folder are ever served."""
    parts = [part for part in path.split("/") if part]
    if not parts or (len(parts) == 2 and parts[0] == "r" and normalize_code(parts[1])):
        parts = ["index.html"]
    if not all(_STATIC_NAME.fullmatch(part) for part in parts):
        return None
    candidate = STATIC.joinpath(*parts)
    try:
        return candidate if candidate.is_file() else None
    except OSError:  # a name the file system refuses (too long, ...): no such file
        return None


_REASONS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 429: "Too Many Requests"}
_REASONS.update({403: "Forbidden", 409: "Conflict", 503: "Service Unavailable"})
_REASONS.update({201: "Created", 202: "Accepted", 400: "Bad Request", 401: "Unauthorized"})


def _body(status: int, kind: str, body: bytes, *, head: bool = False, **extra: str) -> Response:
    """A response; to a HEAD request, its headers without the body."""
    headers = Headers([("Content-Type", kind), ("Content-Length", str(len(body)))])
    for name, value in extra.items():
        headers[name.replace("_", "-").title()] = value
    return Response(status, _REASONS.get(status, "OK"), headers, b"" if head else body)


def _text(status: int, text: str, *, head: bool = False, **extra: str) -> Response:
    return _body(status, "text/plain; charset=utf-8", text.encode(), head=head, **extra)


def _json(status: int, value: Any, *, head: bool = False, **extra: str) -> Response:
    body = json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()
    return _body(status, "application/json", body, head=head, **extra)


def _error(status: int, code: str, message: str, *, head: bool = False, **extra: Any) -> Response:
    """An error as JSON: ``{"error": code, "message": message, ...}``."""
    headers = {k: v for k, v in extra.items() if k == "retry_after"}
    fields = {k: v for k, v in extra.items() if k != "retry_after"}
    return _json(status, {"error": code, "message": message, **fields}, head=head, **headers)


class Http:
    """The node's answers to plain HTTP requests. ``unready`` gives the reason the node
    should get no new connections now (None when it is ready); ``metrics`` gives the
    scrape's body and content type for an ``Accept`` header; ``report``, when given, a
    line more for a ready ``/readyz`` (None: none); ``proxies`` say whose
    ``X-Forwarded-For`` names the client; ``open_files`` says when the node is near its
    limit of open files; ``addresses`` say which addresses are refused for now; ``export``
    gives a finished race's record by its code (:class:`~..session.exports.Exports`)."""

    def __init__(
        self,
        *,
        unready: Callable[[], Awaitable[str | None]],
        metrics: Callable[[str | None], tuple[bytes, str]],
        report: Callable[[], Awaitable[str | None]] | None = None,
        proxies: Proxies | None = None,
        open_files: OpenFiles | None = None,
        refused: Callable[[str], None] | None = None,
        addresses: AddressLimits | None = None,
        export: Callable[[str], Awaitable[dict[str, Any]]] | None = None,
        accounts: AccountRoutes | None = None,
    ) -> None:
        self.accounts = accounts
        """The accounts' routes (:mod:`.accounts_http`; None: no accounts)."""
        self.unready = unready
        self.export = export
        self.metrics = metrics
        self.report = report
        self.proxies = proxies or Proxies("")
        self.open_files = open_files
        self.refused = refused or (lambda limit: None)
        """Told the limit whenever a request is refused by one."""
        self.addresses = addresses
        self.held: dict[str, int] = {}
        """Address key -> its websocket requests whose 429 is held back now."""

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        """The response to a request, or None for the websocket handshake (``/ws``)."""
        method = getattr(request, "method", "GET")
        head = method == "HEAD"
        if request.path.startswith("/account/") and self.accounts is not None:
            return await self._account(connection, request, method)
        if method not in ALLOWED:
            self.refused("method")
            return _text(405, "only GET and HEAD\n", allow=", ".join(ALLOWED))
        path = request.path.split("?", 1)[0]
        if path == "/healthz":
            return _text(200, "ok\n", head=head)
        if self.open_files is not None and self.open_files.near():
            self.refused("open_files")
            return _text(503, "busy: try again shortly\n", head=head, retry_after="5")
        if path == "/readyz":
            reason = await self.unready()
            if reason is None:
                return _text(200, "ok\n" + await self._report(), head=head)
            return _text(503, reason + "\n", head=head)
        if path == WS_PATH:
            refused = None if self.accounts is None else self.accounts.upgrade(request.headers)
            if refused is not None:
                return _json(refused.status, refused.body, head=head, **refused.headers)
            return await self._admit(connection, request, head=head)
        if path == "/metrics":
            body, kind = self.metrics(request.headers.get("Accept"))
            return _body(200, kind, body, head=head)
        if path.startswith("/races/"):
            return await self.record(connection, request, path, head=head)
        static = static_file(path)
        if static is not None:
            kind = mimetypes.guess_type(static.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind == "application/javascript":
                kind += "; charset=utf-8"
            return _body(200, kind, static.read_bytes(), head=head)
        return _text(404, "not found\n", head=head)

    async def _account(
        self, connection: ServerConnection, request: Request, method: str
    ) -> Response:
        """An accounts' route (:mod:`.accounts_http`), for the client's address."""
        assert self.accounts is not None
        peer = str(getattr(connection, "client_address", "") or "")
        address = self.proxies.client_of(peer, request.headers.get("X-Forwarded-For"))
        path = request.path.split("?", 1)[0]
        reply = await self.accounts.answer(method, path, request.headers, address)
        return _json(reply.status, reply.body, head=method == "HEAD", **reply.headers)

    async def _report(self) -> str:
        """The report's line for ``/readyz`` ("" when there is none, or Redis went away
        since the probe asked it)."""
        if self.report is None:
            return ""
        try:
            line = await self.report()
        except ServerError:
            return ""
        return "" if line is None else line + "\n"

    async def record(
        self, connection: ServerConnection, request: Request, path: str, *, head: bool
    ) -> Response:
        """``GET /races/<code>.json``: the finished race's record as a JSON attachment
        (``spider-race-<code>.json``). A path that names no race code is 404 before
        anything is counted or read; then the client's address takes one of its
        ``address_exports`` (shared by every node: 429 with ``Retry-After`` when it has
        none left, nothing read; 503 when Redis does not answer);
        then the race: 404 when no store has it, 409 when it is not finished, 403 for a
        daily race before its day is over (``available_at``: when it is out), 503 when
        a store does not answer. Errors are ``{"error", "message"}`` in JSON."""
        m = _RECORD.fullmatch(path)
        code = normalize_code(m[1]) if m else None
        if code is None or self.export is None:
            name = m[1] if m else path.removeprefix("/races/")
            return _error(404, "not_found", f"{name[:20]!r} is not a race code", head=head)
        if self.addresses is not None:
            peer = str(getattr(connection, "client_address", "") or "")
            address = self.proxies.client_of(peer, request.headers.get("X-Forwarded-For"))
            try:
                refused = await self.addresses.take(("export", address))
            except Unavailable as e:
                return _error(503, "unavailable", str(e), head=head, retry_after="5")
            if refused is not None:
                self.refused("export")
                wait = refused.wait
                text = f"too many races exported from your address: try again in {wait} s"
                return _error(429, "rate_limited", text, head=head, retry_after=str(wait))
        try:
            record = await self.export(code)
        except NotYet as e:
            return _error(403, "not_yet", str(e), head=head, available_at=e.at)
        except RaceNotFound as e:
            return _error(404, "not_found", str(e), head=head)
        except WrongState as e:
            return _error(409, "not_finished", str(e), head=head)
        except Unavailable as e:
            return _error(503, "unavailable", str(e), head=head, retry_after="5")
        disposition = f'attachment; filename="spider-race-{code}.json"'
        return _json(200, record, head=head, content_disposition=disposition)

    async def _admit(
        self, connection: ServerConnection, request: Request, *, head: bool
    ) -> Response | None:
        """None (go on to the handshake) unless the client's address is refused for now or
        has its maximum of connections open (429). Behind a trusted proxy, the client's
        address is the one its ``X-Forwarded-For`` names; the connection is counted against
        it. The 429 of an address refused for now is held back (:meth:`_hold`)."""
        if head:
            return _text(405, "the websocket handshake is a GET\n", allow="GET")
        peer = str(getattr(connection, "client_address", "") or "")
        address = self.proxies.client_of(peer, request.headers.get("X-Forwarded-For"))
        if hasattr(connection, "client_address"):
            connection.client_address = address
        addresses = self.addresses
        wait = None if addresses is None else await addresses.retry_after(address)
        if wait is not None and addresses is not None:
            self.refused("retry_early")
            await self._hold(address, wait)
            wait = await addresses.retry_after(address) or 1  # the time left after the hold
            text = f"too many new players from your address: try again in {wait} s\n"
            return _text(429, text, retry_after=str(wait))
        count = getattr(connection, "count", None)
        if count is not None and not count(address):
            self.refused("address")
            return _text(429, "too many connections from your address\n", retry_after="10")
        return None

    async def _hold(self, address: str, wait: int) -> None:
        """Wait up to :data:`HOLD` seconds (less when ``wait`` is less): a client that
        comes back at once after its 429 then costs the node a few requests a second. At
        most ``address_connections`` of an address are held at once; past that, no wait."""
        address = address_key(address)
        held = self.held.get(address, 0)
        if self.addresses is None or held >= self.addresses.max_connections:
            return
        self.held[address] = held + 1
        try:
            await asyncio.sleep(min(HOLD, wait))
        finally:
            if self.held[address] > 1:
                self.held[address] -= 1
            else:
                del self.held[address]
