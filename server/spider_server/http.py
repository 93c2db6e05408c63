"""Plain HTTP on the websocket port: the probes ``GET /healthz`` and ``GET /readyz``,
``GET /metrics`` and the browser page's files (the package's ``static`` folder; ``/`` and
a race's shareable link ``/r/<code>`` are ``index.html``). ``/ws`` goes on to the
websocket handshake.

- ``/healthz`` (liveness) answers 200 ``ok`` whenever the process and its event loop
  answer at all; it never asks Redis, so that a Redis outage does not get every node of a
  deployment restarted at once.
- ``/readyz`` (readiness) answers 200 ``ok`` when Redis answers and the node is not
  draining, else 503 with the reason (``draining``, ``redis is not answering``): a load
  balancer sends new players only to a node that is ready.
"""

from __future__ import annotations

import mimetypes
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from .race import normalize_code

__all__ = ["STATIC", "WS_PATH", "Http", "static_file"]

WS_PATH = "/ws"
STATIC = Path(__file__).resolve().parent / "static"
_STATIC_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*")


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
    return candidate if candidate.is_file() else None


def _body(status: int, kind: str, body: bytes) -> Response:
    headers = Headers([("Content-Type", kind), ("Content-Length", str(len(body)))])
    return Response(status, "OK", headers, body)


class Http:
    """The node's answers to plain HTTP requests. ``unready`` gives the reason the node
    should get no new connections now (None when it is ready); ``metrics`` gives the
    scrape's body and content type for an ``Accept`` header."""

    def __init__(
        self,
        *,
        unready: Callable[[], Awaitable[str | None]],
        metrics: Callable[[str | None], tuple[bytes, str]],
    ) -> None:
        self.unready = unready
        self.metrics = metrics

    async def process_request(
        self, connection: ServerConnection, request: Request
    ) -> Response | None:
        """The response to a request, or None for the websocket handshake (``/ws``)."""
        path = request.path.split("?", 1)[0]
        if path == WS_PATH:
            return None
        if path == "/healthz":
            return connection.respond(200, "ok\n")
        if path == "/readyz":
            reason = await self.unready()
            if reason is None:
                return connection.respond(200, "ok\n")
            return connection.respond(503, reason + "\n")
        if path == "/metrics":
            body, kind = self.metrics(request.headers.get("Accept"))
            return _body(200, kind, body)
        static = static_file(path)
        if static is not None:
            kind = mimetypes.guess_type(static.name)[0] or "application/octet-stream"
            if kind.startswith("text/") or kind == "application/javascript":
                kind += "; charset=utf-8"
            return _body(200, kind, static.read_bytes())
        return connection.respond(404, "not found\n")
