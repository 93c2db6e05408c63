"""Fixtures of the browser tests: Debian's Chromium driven by Playwright.

``browser`` launches ``/usr/bin/chromium`` headless (never a browser that Playwright would
download). Without Chromium or Playwright these tests fail when ``CI=true`` (``.ci/run``
installs both) and are skipped, with the reason, elsewhere. ``static_url`` serves the page's
static folder over plain HTTP, for tests that import its modules in a blank page
(``web_helpers.blank_page``).
"""

from __future__ import annotations

import http.server
import os
import threading
from collections.abc import AsyncIterator, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from tests.web.web_helpers import STATIC

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def need_browser() -> None:
    """Fail in CI, skip elsewhere, when Chromium or Playwright is missing."""
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} (Debian's chromium package)")
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        missing.append("the playwright package (pip install -e '.[dev]')")
    if missing:
        reason = "browser tests need " + " and ".join(missing)
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; .ci/run installs them", pytrace=False)
        pytest.skip(reason)


@pytest.fixture
async def browser(server_node: Any) -> AsyncIterator[Any]:
    """Chromium, closed before the test's nodes (it asks for ``server_node`` so that the
    nodes outlive it): a page still connected when its node closed has held the node's
    close for the websocket closing handshake's whole 10 s, one close in a few."""
    need_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture
def static_url() -> Iterator[str]:
    """The static folder over plain HTTP (the module imports need an origin)."""
    handler = partial(_Quiet, directory=str(STATIC))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass
