"""The page's JavaScript (``static/rules.js``, ``sha256.js``, the msgpack bundle) checked in
Chromium: the rules port against the spec's vectors and against the engine on positions of
seeded games of every variant; SHA-256 against hashlib; the codec against Python's msgpack;
the click-to-move rule against its description.

The page's rules hold what it needs without asking the server: positions and views parsed,
legal moves, moves applied and taken back, the seeded deal. They do not make views, explain
a refused move or score (the server does): the vectors of those kinds are the engine's
alone (the engine's tests check them)."""

from __future__ import annotations

import hashlib
import random

import msgpack

from spider_engine import Board, Move
from tests.web.rules_cases import rules_cases
from tests.web.web_helpers import ROOT, best_destination, blank_page

PAGE_KINDS = ("deal ", "moves ", "apply ", "view ")
"""The vectors' kinds the page's rules answer (of a ``view`` vector: the view parsed)."""

VECTORS_JS = """async (lines) => {
  const { Board } = await import('/rules.js');
  // the legal moves' texts, sorted by code point as the spec prints them
  const legal = (b) => b.generateMoves().map((m) => m.text).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const failures = [];
  for (const line of lines) {
    const kind = line.slice(0, line.indexOf(' '));
    const parts = line.slice(kind.length + 1).split(' => ');
    let got, want;
    try {
      if (kind === 'deal') {
        const sp = parts[0].indexOf(' ');
        got = Board.deal(parts[0].slice(0, sp), parts[0].slice(sp + 1)).text(); want = parts[1];
      } else if (kind === 'moves') { got = legal(Board.fromText(parts[0])).join(' '); want = parts[1]; }
      else if (kind === 'apply') { const b = Board.fromText(parts[0]); b.push(parts[1]); got = b.text(); want = parts[2]; }
      else if (kind === 'view') { got = Board.fromText(parts[1]).text(); want = parts[1]; }
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
        lines += [line for line in text.splitlines() if line.startswith(PAGE_KINDS)]
    assert len(lines) > 50
    page = await blank_page(browser, static_url)
    assert await page.evaluate(VECTORS_JS, lines) == []


CASES_JS = """async (cases) => {
  const { Board } = await import('/rules.js');
  // the legal moves' texts, sorted by code point as the spec prints them
  const legal = (b) => b.generateMoves().map((m) => m.text).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  const failures = [];
  const check = (c, what, got, want) => {
    if (JSON.stringify(got) !== JSON.stringify(want)) failures.push({ position: c.position, what, got, want });
  };
  for (const c of cases) {
    try {
      const b = Board.fromText(c.position);
      check(c, 'text', b.text(), c.position);
      check(c, 'moves', legal(b), c.moves);
      const view = Board.fromText(c.view);
      check(c, 'view', view.text(), c.view);
      check(c, 'view moves', legal(view), c.view_moves);
      for (const move of Object.keys(c.illegal)) check(c, 'legal ' + move, b.isLegal(move), false);
      for (const move of c.moves) check(c, 'legal ' + move, b.isLegal(move), true);
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
    page = await blank_page(browser, static_url)
    assert await page.evaluate(CASES_JS, cases) == []


async def test_a_won_game_and_its_replay(browser, static_url) -> None:
    """Every position of a winning line (runs leave, the stock empties, the game is won)."""
    from tests.web.test_race_browser import LINE, SEED, VARIANT

    board = Board.deal(VARIANT, SEED)
    texts = [board.text()]
    for move in LINE:
        board.push(Move.from_text(move))
        texts.append(board.text())
    page = await blank_page(browser, static_url)
    got = await page.evaluate(
        """async ([variant, seed, line]) => {
            const { Board } = await import('/rules.js');
            const b = Board.deal(variant, seed);
            const out = [b.text()];
            for (const m of line) { b.push(m); out.push(b.text()); }
            b.pop(); b.pop();
            out.push(b.text());
            return out;
        }""",
        [VARIANT, SEED, LINE],
    )
    assert board.is_won()
    assert got == [*texts, texts[-3]]


async def test_sha256_and_the_commitment(browser, static_url) -> None:
    rng = random.Random(7)
    inputs = [
        bytes(rng.randrange(256) for _ in range(n))
        for n in (0, 1, 55, 56, 63, 64, 65, 119, 120, 1000)
    ]
    page = await blank_page(browser, static_url)
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
    page = await blank_page(browser, static_url)
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
    page = await blank_page(browser, static_url)
    got = await page.evaluate(
        """async (cases) => {
            const { Board, bestDestination } = await import('/rules.js');
            return cases.map(([view, src, count]) => bestDestination(Board.fromText(view), src, count));
        }""",
        cases,
    )
    assert got == [c[3] for c in cases]
