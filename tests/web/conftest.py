"""Fixtures of the browser tests: Debian's Chromium driven by Playwright.

``browser`` launches ``/usr/bin/chromium`` headless (never a browser that Playwright would
download). Without Chromium or Playwright these tests fail when ``CI=true`` (``.ci/run``
installs both) and are skipped, with the reason, elsewhere.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

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
async def browser() -> AsyncIterator[Any]:
    need_browser()
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        chromium = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            await chromium.close()
