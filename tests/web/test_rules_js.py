"""The page's JavaScript (``static/rules.js``, ``sha256.js``, the msgpack bundle) checked in
Chromium: the rules port against the spec's vectors and against the engine on positions of
seeded games of every variant; SHA-256 against hashlib; the codec against Python's msgpack;
the click-to-move rule against its description."""

from __future__ import annotations

import hashlib
import http.server
import random
import threading
from collections.abc import Iterator
from functools import partial
from typing import Any

import msgpack
import pytest

from spider_engine import Board, Move
from tests.web.rules_cases import rules_cases
from tests.web.web_helpers import ROOT, STATIC, best_destination

BLANK = "<!doctype html><meta charset=utf-8><title>rules</title>"


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


async def _page(browser: Any, url: str) -> Any:
    page = await browser.new_page()
    await page.route(
        "**/blank.html", lambda route: route.fulfill(body=BLANK, content_type="text/html")
    )
    await page.goto(url + "/blank.html")
    return page


VECTORS_JS = """async (lines) => {
  const { Board } = await import('/rules.js');
  const failures = [];
  for (const line of lines) {
    const kind = line.slice(0, line.indexOf(' '));
    const parts = line.slice(kind.length + 1).split(' => ');
    let got, want;
    try {
      if (kind === 'deal') {
        const sp = parts[0].indexOf(' ');
        got = Board.deal(parts[0].slice(0, sp), parts[0].slice(sp + 1)).text(); want = parts[1];
      } else if (kind === 'moves') { got = Board.fromText(parts[0]).legalMoves().join(' '); want = parts[1]; }
      else if (kind === 'apply') { const b = Board.fromText(parts[0]); b.push(parts[1]); got = b.text(); want = parts[2]; }
      else if (kind === 'view') { got = Board.fromText(parts[0]).viewText(); want = parts[1]; }
      else if (kind === 'suited') { got = String(Board.fromText(parts[0]).suitedScore()); want = parts[1]; }
      else { got = 'unknown kind'; want = kind; }
    } catch (e) { got = 'error: ' + e.message; }
    if (got !== want) failures.push([line, got]);
  }
  return failures;
}"""


async def test_the_spec_vectors(browser, static_url) -> None:
    lines = []
    for name in ("vectors.txt", "alt-vectors.txt"):
        text = (ROOT / "docs" / "spec" / name).read_text()
        lines += [line for line in text.splitlines() if line and not line.startswith("#")]
    assert len(lines) > 60
    page = await _page(browser, static_url)
    assert await page.evaluate(VECTORS_JS, lines) == []


CASES_JS = """async (cases) => {
  const { Board } = await import('/rules.js');
  const failures = [];
  const check = (c, what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) failures.push({ position: c.position, what, got, want });
  };
  for (const c of cases) {
    try {
      const b = Board.fromText(c.position);
      check(c, 'text', b.text(), c.position);
      check(c, 'moves', b.legalMoves(), c.moves);
      check(c, 'view', b.viewText(), c.view);
      check(c, 'view moves', Board.fromText(c.view).legalMoves(), c.view_moves);
      for (const [move, reason] of Object.entries(c.illegal)) {
        check(c, 'legal ' + move, b.isLegal(move), false);
        check(c, 'why ' + move, b.explainIllegal(move), reason);
      }
      check(c, 'classic', b.classicScore(c.actions), c.classic);
      if (c.suited !== null) check(c, 'suited', b.suitedScore(), c.suited);
      check(c, 'won', b.isWon(), c.won);
      if (c.move) {
        b.push(c.move);
        check(c, 'after ' + c.move, b.text(), c.after);
        b.pop();
        check(c, 'pop ' + c.move, b.text(), c.position);
      }
    } catch (e) {
      failures.push({ position: c.position, what: 'error', got: e.message });
    }
    if (failures.length > 20) break;
  }
  return failures;
}"""


async def test_the_rules_agree_with_the_engine(browser, static_url) -> None:
    cases = rules_cases(seeds=2, steps=60)
    variants = {c["position"].split(" ")[0] for c in cases}
    assert len(variants) == 42
    page = await _page(browser, static_url)
    assert await page.evaluate(CASES_JS, cases) == []


async def test_a_won_game_and_its_replay(browser, static_url) -> None:
    """Every position of a winning line (runs leave, the stock empties, the game is won)."""
    from tests.web.test_race_browser import LINE, SEED, VARIANT

    board = Board.deal(VARIANT, SEED)
    texts = [board.text()]
    for move in LINE:
        board.push(Move.from_text(move))
        texts.append(board.text())
    page = await _page(browser, static_url)
    got = await page.evaluate(
        """async ([variant, seed, line]) => {
            const { Board } = await import('/rules.js');
            const b = Board.deal(variant, seed);
            const out = [b.text()];
            for (const m of line) { b.push(m); out.push(b.text()); }
            out.push(String(b.isWon()));
            b.pop(); b.pop();
            out.push(b.text());
            return out;
        }""",
        [VARIANT, SEED, LINE],
    )
    assert got == [*texts, "true", texts[-3]]


async def test_sha256_and_the_commitment(browser, static_url) -> None:
    rng = random.Random(7)
    inputs = [
        bytes(rng.randrange(256) for _ in range(n))
        for n in (0, 1, 55, 56, 63, 64, 65, 119, 120, 1000)
    ]
    page = await _page(browser, static_url)
    got = await page.evaluate(
        """async (inputs) => {
            const { sha256, toHex } = await import('/sha256.js');
            return inputs.map((hex) => toHex(sha256(Uint8Array.from(hex.match(/../g) || [], (h) => parseInt(h, 16)))));
        }""",
        [b.hex() for b in inputs],
    )
    assert got == [hashlib.sha256(b).hexdigest() for b in inputs]


async def test_the_msgpack_codec(browser, static_url) -> None:
    message = {
        "type": "joined",
        "req": 2**40,
        "role": "player",
        "seq": -3,
        "view": "spider4 *5|Qh3s/… *40 -",
        "boards": None,
        "events": [{"type": "progress", "version": 42, "score": 498.5, "ok": True}],
        "race": {"code": "K7QX2", "players": [], "starts_at": 1732900003.25},
    }
    page = await _page(browser, static_url)
    again = await page.evaluate(
        """async (bytes) => {
            const { decode, encode } = await import('/vendor/msgpack.js');
            const message = decode(Uint8Array.from(bytes));
            return Array.from(encode(message));
        }""",
        list(msgpack.packb(message)),
    )
    assert msgpack.unpackb(bytes(again), raw=False) == message


async def test_click_to_move_picks_the_documented_column(browser, static_url) -> None:
    cases = []
    for case in rules_cases(seeds=1, steps=25):
        board = Board.from_text(case["view"])
        for src, (col, down) in enumerate(zip(board.cols, board.down, strict=True)):
            for count in range(1, board.variant.movable(col, len(col) - down) + 1):
                cases.append([case["view"], src, count, best_destination(board, src, count)])
    assert len(cases) > 1000
    page = await _page(browser, static_url)
    got = await page.evaluate(
        """async (cases) => {
            const { Board, bestDestination } = await import('/rules.js');
            return cases.map(([view, src, count]) => bestDestination(Board.fromText(view), src, count));
        }""",
        cases,
    )
    assert got == [c[3] for c in cases]
