"""The server's logs: level, text and JSON lines."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from spider_server import logs
from tests.server.server_helpers import Client


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    """The root logger, put back as it was after the test."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)
    logs._installed = None


def test_json_lines(root_logger: logging.Logger) -> None:
    out = io.StringIO()
    logs.configure("INFO", "json", stream=out)
    log = logging.getLogger("spider_server.test")
    log.debug("not written")
    log.info("node %s serving «%s»", "n1", "ws://h/ws")
    try:
        raise RuntimeError("boom\nsecond line")
    except RuntimeError:
        log.exception("sweep failed")
    lines = out.getvalue().splitlines()
    assert len(lines) == 2  # one line per record, tracebacks included
    first, second = (json.loads(line) for line in lines)
    assert set(first) == {"time", "level", "logger", "message"}
    assert first["level"] == "info" and first["logger"] == "spider_server.test"
    assert first["message"] == "node n1 serving «ws://h/ws»"
    assert first["time"].endswith("Z") and first["time"][10] == "T" and len(first["time"]) == 24
    assert second["level"] == "error" and second["message"] == "sweep failed"
    assert second["exception"].startswith("Traceback (most recent call last):")
    assert "RuntimeError: boom\nsecond line" in second["exception"]


def test_levels_and_the_text_format(root_logger: logging.Logger) -> None:
    out = io.StringIO()
    logs.configure("warning", "text", stream=out)
    log = logging.getLogger("spider_server")
    log.info("quiet")
    log.warning("loud")
    assert out.getvalue().endswith(" WARNING spider_server: loud\n")
    assert "quiet" not in out.getvalue()
    # configuring again replaces the handler instead of adding one
    again = io.StringIO()
    logs.configure("debug", "json", stream=again)
    log.debug("details")
    assert "details" not in out.getvalue()
    assert json.loads(again.getvalue())["level"] == "debug"
    for level, form in (("loud", "text"), ("info", "xml")):
        with pytest.raises(ValueError):
            logs.configure(level, form, stream=again)


async def test_serve_writes_json_lines(redis_server, server_process, tmp_path: Path) -> None:
    proc = await server_process(
        redis_server.url, cli=True, SPIDER_RACE_LOG_FORMAT="json", SPIDER_RACE_LOG_LEVEL="debug"
    )
    c = await Client.connect(proc.url, name="a")
    await c.ws.close()
    await asyncio.sleep(0.1)
    assert await asyncio.to_thread(proc.terminate) == 0
    lines = (tmp_path / "proc1.log").read_text().splitlines()
    records = [json.loads(line) for line in lines if line.startswith("{")]
    others = [line for line in lines if not line.startswith("{")]
    assert others == [f"spider-race serving ws://127.0.0.1:{proc.port}/ws"]
    assert {"info", "debug"} <= {r["level"] for r in records}
    assert any(r["logger"] == "spider_server.node" and "closing" in r["message"] for r in records)
