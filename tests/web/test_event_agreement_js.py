"""The page's race mirror (``static/mirror.js``) in Chromium against the table of event
sequences that the Python client's mirror is checked against too
(``tests/client/test_event_agreement.py``): ``tests/agreement/race_events.json``. The
messages go through the page's own decoder (the vendored msgpack bundle), packed by Python's
msgpack as the server packs them."""

from __future__ import annotations

import json
from typing import Any

import msgpack

from tests.web.web_helpers import ROOT, blank_page

TABLE = ROOT / "tests" / "agreement" / "race_events.json"

MIRROR_JS = """async (cases) => {
  const { decode } = await import('/vendor/msgpack.js');
  const { newMirror, takeAck, takeEvent, takeJoined } = await import('/mirror.js');
  const standard = ['player', 'status', 'ready', 'connected', 'moves', 'time'];
  return cases.map(([frames, player, fields = standard]) => {
    const m = newMirror();
    for (const bytes of frames) {
      const message = decode(Uint8Array.from(bytes));
      if (message.type === 'joined') takeJoined(m, message);
      else if (message.type === 'ack') takeAck(m, message, player);
      else takeEvent(m, message);
    }
    const r = m.race;
    return {
      code: m.code, state: r.state, starts_at: r.starts_at, ends_at: r.ends_at,
      commitment: r.commitment, preparing: r.preparing, version: r.version, seen: m.version,
      players: r.players.map((p) => Object.assign(
        Object.fromEntries(fields.map((k) => [k, p[k]])),
        p.away_since == null ? {} : { away_since: p.away_since })),
      results: r.results, seed: r.seed, salt: r.salt, boards: m.boards, par: r.par ?? null,
    };
  });
}"""


async def test_the_page_mirrors_the_race_as_the_table_says(browser, static_url) -> None:
    cases: list[dict[str, Any]] = json.loads(TABLE.read_text())["cases"]
    frames = [
        [
            [list(msgpack.packb(m)) for m in [case["joined"], *case["events"]]],
            case.get("player"),
            *([case["player_fields"]] if "player_fields" in case else []),
        ]
        for case in cases
    ]
    page = await blank_page(browser, static_url)
    got = await page.evaluate(MIRROR_JS, frames)
    mismatched = [
        (case["name"], state, case["expected"])
        for case, state in zip(cases, got, strict=True)
        if state != case["expected"]
    ]
    assert mismatched == []
