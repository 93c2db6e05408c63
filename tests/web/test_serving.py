"""The server serves the page: ``/``, a race's link ``/r/<code>``, and every file the page
loads, with the right types; nothing else."""

from __future__ import annotations

import asyncio
import re
import urllib.error
import urllib.request

from tests.web.web_helpers import STATIC


def _get(url: str) -> tuple[int, str, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), b""


async def test_the_page_and_race_links(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    index = (STATIC / "index.html").read_bytes()
    for path in ("/", "/index.html", "/r/K7QX2", "/r/k7qx2", "/r/23456"):
        status, kind, body = await asyncio.to_thread(_get, node.http_url + path)
        assert (status, body) == (200, index), path
        assert kind.startswith("text/html"), path
    for path in ("/r/K7QX", "/r/K7QX2/x", "/r/K0QX2", "/r/", "/r/K7QX2X"):
        assert (await asyncio.to_thread(_get, node.http_url + path))[0] == 404, path


async def test_every_file_the_page_loads(redis_server, server_node) -> None:
    node = await server_node(redis_server.url)
    html = (STATIC / "index.html").read_text()
    wanted = set(re.findall(r'(?:href|src)="(/[^"]+)"', html))
    for script in STATIC.rglob("*.js"):
        for target in re.findall(
            r'^(?:import|export)\b[^;]*?"(\.\.?/[^"]+)"', script.read_text(), re.M
        ):
            resolved = (script.parent / target).resolve()
            assert resolved.is_file(), f"{script.name} imports a missing {target}"
            wanted.add("/" + resolved.relative_to(STATIC).as_posix())
    assert {"/app.js", "/style.css", "/vendor/msgpack.js", "/rules.js", "/net.js"} <= wanted
    assert {"/mirror.js", "/lobby.js", "/rules/board.js", "/sha256.js"} <= wanted
    for path in sorted(wanted):
        status, kind, body = await asyncio.to_thread(_get, node.http_url + path)
        assert status == 200 and body == (STATIC / path[1:]).read_bytes(), path
        if path.endswith(".js"):
            assert "javascript" in kind, (path, kind)
        elif path.endswith(".css"):
            assert kind.startswith("text/css"), (path, kind)
