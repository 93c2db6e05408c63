"""The server's logs: a level, and a text or JSON format, on standard error.

``configure(level, format)`` sets up the root logger once for the process (calling it
again replaces what it set before). The text format is one line per record::

    2026-12-01 09:44:28,123 INFO spider_server: node n1 serving ws://127.0.0.1:8765/ws

The JSON format is one JSON object per line, for log collectors::

    {"time": "2026-12-01T09:44:28.123Z", "level": "info", "logger": "spider_server",
     "message": "node n1 serving ws://127.0.0.1:8765/ws"}

(on one line), with ``"exception"`` (the formatted traceback) when the record carries
one, and ``"stack"`` when it carries a stack.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, TextIO

__all__ = ["LEVELS", "FORMATS", "JsonFormatter", "configure"]

LEVELS = ("debug", "info", "warning", "error", "critical")
FORMATS = ("text", "json")
TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

_installed: logging.Handler | None = None


class JsonFormatter(logging.Formatter):
    """A record as one line of JSON: ``time`` (UTC, ISO 8601 with milliseconds), ``level``
    (lower case), ``logger``, ``message``, and ``exception`` / ``stack`` when present."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        entry: dict[str, Any] = {
            "time": f"{stamp}.{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def configure(level: str = "info", format: str = "text", *, stream: TextIO | None = None) -> None:
    """Send every record at ``level`` or above (any case; one of :data:`LEVELS`) to
    ``stream`` (default: standard error) in ``format`` (one of :data:`FORMATS`).
    :class:`ValueError` for another level or format."""
    global _installed
    if level.lower() not in LEVELS:
        raise ValueError(f"log level {level!r} is not one of {', '.join(LEVELS)}")
    if format.lower() not in FORMATS:
        raise ValueError(f"log format {format!r} is not one of {', '.join(FORMATS)}")
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    if format.lower() == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    if _installed is not None:
        root.removeHandler(_installed)
    root.addHandler(handler)
    root.setLevel(level.upper())
    _installed = handler
