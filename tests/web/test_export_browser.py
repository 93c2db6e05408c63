"""The race's record on the page, in Chromium against a real server node: after a race the
end screen has "Download the race (JSON)", and the profile's last races a link each; the
file downloaded is the race's record (its code, its seed checked against its commitment)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tests.web.web_helpers import open_page


async def _download(page: Any, selector: str) -> tuple[str, dict[str, Any]]:
    async with page.expect_download() as info:
        await page.click(selector)
    download = await info.value
    path = await download.path()
    return download.suggested_filename, json.loads(Path(path).read_text(encoding="utf-8"))


async def test_the_race_downloads_from_the_end_screen_and_the_profile(
    browser, redis_server, server_node
) -> None:
    node = await server_node(redis_server.url)
    player = await open_page(browser, "racer", "player", node.http_url)
    page = player.page
    await page.fill("#name", "Rita")
    await page.click("details.more summary")
    await page.fill("#countdown", "0")
    await page.click("#create")
    code = (await page.inner_text("#code")).strip()
    await page.click("#ready")
    await page.wait_for_selector("#board .card", timeout=30_000)
    await page.click("#resign")
    await page.click("#resign")
    await page.wait_for_selector("#results")
    link = page.locator("#export-race")
    assert await link.inner_text() == "Download the race (JSON)"
    assert await link.get_attribute("href") == f"/races/{code}.json"
    name, record = await _download(page, "#export-race")
    assert name == f"spider-race-{code}.json"
    assert record["code"] == code and record["format"] == 1
    assert [x["name"] for x in record["players"]] == ["Rita"]
    assert record["players"][0]["status"] == "resigned"
    digest = hashlib.sha256(bytes.fromhex(record["salt"]) + record["seed"].encode()).hexdigest()
    assert digest == record["commitment"]
    await player.shot("export-end")
    # the profile's line of the race links to the same record
    await page.click("#new-race")
    await page.click("#my-profile")
    line = f"#profile-races li[data-code='{code}'] a.race-download"
    for _ in range(50):  # the race's results are written just after its finish
        if await page.locator(line).count():
            break
        await page.click("#profile-back")
        await page.click("#my-profile")
        await page.wait_for_selector("#profile-races li")
    name, again = await _download(page, line)
    assert name == f"spider-race-{code}.json" and again == record
    assert player.errors == []
