"""The page refused a new player (close 1013, ``retry after N s``) does not come back before
those N seconds, then does (docs/protocol.md, close codes; issue 41): its websockets and
its connection state recorded in order, the node's counted attempts beside them."""

from __future__ import annotations

from typing import Any

from tests.server.attack_helpers import wait_for
from tests.server.server_helpers import Client

RECORD = """(() => {
  const log = (window.__sockets = []);
  const states = (window.__states = []);
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      const entry = { made: performance.now() };
      log.push(entry);
      this.addEventListener("open", () => (entry.opened = performance.now()));
      this.addEventListener("close", (e) =>
        Object.assign(entry, { closed: performance.now(), code: e.code, reason: e.reason }));
    }
  };
  document.addEventListener("DOMContentLoaded", () => {
    const conn = document.querySelector("#conn");
    const note = () => states.push({ at: performance.now(), state: conn.dataset.state });
    new MutationObserver(note).observe(conn, { attributes: true, attributeFilter: ["data-state"] });
  });
})()"""
"""Every websocket the page makes (when, opened, closed with which code and reason) and
every change of its connection state, in the page's own clock; the page's code runs as it
is (the recording only listens)."""

SETTLED = """(k) => {
  const s = window.__sockets[k];
  const state = document.querySelector("#conn").dataset.state;
  return !!s && (s.code === 1013 || (s.opened !== undefined && state === "connected"));
}"""
"""Socket ``k`` was refused with 1013, or opened and the page is connected (welcomed)."""


async def _drain(node: Any) -> None:
    """Other new players from the page's address until it has none left now."""
    while await node.node.addresses.allows("new_player", "127.0.0.1"):
        neighbour = await Client.connect(node.url, name="neighbour")
        await neighbour.close()
    assert await wait_for(lambda: len(node.node.connections) == 1)  # the page's


async def test_a_page_refused_comes_back_after_the_time_named(
    browser, redis_server, server_node
) -> None:
    node = await server_node(redis_server.url, address_new_players=30)  # one every 2 s
    metrics = node.node.metrics
    context = await browser.new_context()
    await context.add_init_script(RECORD)
    page = await context.new_page()
    opened: list[str] = []
    page.on("websocket", lambda ws: opened.append(ws.url))
    await page.goto(node.http_url)
    await page.wait_for_selector("#conn[data-state=connected]")

    refused = None
    for _ in range(5):  # until the page's hello comes before the address has one again
        await _drain(node)
        k = await page.evaluate("window.__sockets.length")
        await page.evaluate('localStorage.removeItem("spider-race.token")')  # a new player
        (conn,) = node.node.connections
        conn.ws.transport.abort()  # the page reconnects at once (its backoff: 250 ms)
        await page.wait_for_function(SETTLED, arg=k)
        socket = await page.evaluate("(k) => window.__sockets[k]", k)
        if socket.get("code") == 1013:
            refused = k
            break
    assert refused is not None, "the page was never refused"
    assert metrics.refused_total["new_players"] == 1

    await page.wait_for_function(
        "(k) => window.__sockets.length > k + 1 && "
        'document.querySelector("#conn").dataset.state === "connected"',
        arg=refused,
    )
    sockets = await page.evaluate("window.__sockets")
    states = await page.evaluate("window.__states")
    gone, back = sockets[refused], sockets[refused + 1]
    named = int(gone["reason"].removeprefix("retry after ").split(" ", 1)[0])
    print(
        f"\nrefused: {gone['reason']!r}; the page came back "
        f"{(back['made'] - gone['closed']) / 1000:.2f} s after the close"
    )
    assert gone["reason"].startswith(f"retry after {named} s")
    assert 1 <= named <= 2
    # one websocket after the refused one, and not before the time named
    assert len(sockets) == refused + 2, sockets[refused:]
    assert back["made"] >= gone["closed"] + named * 1000, (gone, back)
    assert back.get("opened") is not None and "code" not in back
    # nothing reached the node early (an early one would have got 429), and the page
    # showed itself connected again only after its new websocket was made
    assert metrics.refused_total["retry_early"] == 0
    between = [s["state"] for s in states if gone["closed"] <= s["at"] < back["made"]]
    assert "connected" not in between and between, states
    assert [s["state"] for s in states if s["at"] >= back["made"]][-1] == "connected"
    assert len(opened) == len(sockets)  # Playwright saw the same websockets
    await context.close()
