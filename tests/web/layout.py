"""What a player sees of a screen, measured in the page: no horizontal scroll, every rank
of every card drawn inside its card, at least 11 CSS px high and not hidden under the next
card, every tap target at least 24 px (the strip a later card leaves of a face-up card of
the player's board included), each card's rank in enough contrast with its card, and no
"1 moves" in its words."""

from __future__ import annotations

import re
from typing import Any

from tests.web.web_helpers import Player

__all__ = ["MEASURE", "SIZES", "check_screen", "words_broken"]

SIZES = [(1280, 800), (375, 667)]
"""The two screens every screen is checked at: a laptop and a phone."""

MEASURE = """() => {
  const visible = (el) => { const r = el.getBoundingClientRect(); const s = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none'; };
  const out = { scroll: document.documentElement.scrollWidth, viewport: window.innerWidth,
                clipped: [], small: [], covered: [], strips: [], taps: [], contrast: [], ranks: 0 };
  const lum = (rgb) => { const [r, g, b] = rgb.map((c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
  const rgb = (text) => (text.match(/[0-9.]+/g) || []).slice(0, 3).map(Number);
  for (const card of document.querySelectorAll('.board .card.up')) {
    if (!visible(card) || card.closest('.drag-ghost')) continue;
    const rank = card.querySelector('.rank');
    if (!rank) continue;
    out.ranks++;
    const c = card.getBoundingClientRect(), r = rank.getBoundingClientRect();
    const name = (card.dataset.card || '?') + '@' + (card.closest('.board').id || 'mini');
    if (r.left < c.left - 0.5 || r.right > c.right + 0.5 || r.top < c.top - 0.5 || r.bottom > c.bottom + 0.5)
      out.clipped.push(name + ' ' + JSON.stringify([r.left, r.right, c.left, c.right]));
    const size = parseFloat(getComputedStyle(rank).fontSize);
    if (size < 11) out.small.push(name + ' ' + size);
    const next = card.nextElementSibling;
    if (next && next.classList.contains('card') && !card.closest('.mini')) {
      const top = next.getBoundingClientRect().top;
      if (top < r.bottom - 0.5) out.covered.push(name + ' ' + (top - r.top).toFixed(1));
      if (card.closest('#board') && top - c.top < 24 - 0.01) out.strips.push(name + ' ' + (top - c.top).toFixed(1));
    }
    // the rank's colour against its card's: 4.5:1 at least
    let bg = getComputedStyle(card).backgroundColor;
    const fg = lum(rgb(getComputedStyle(rank).color));
    const back = lum(rgb(bg));
    const ratio = (Math.max(fg, back) + 0.05) / (Math.min(fg, back) + 0.05);
    if (ratio < 4.5) out.contrast.push(name + ' ' + ratio.toFixed(2));
  }
  const targets = 'button, select, a, summary, [role=button], label.check, input:not([type=checkbox]):not([type=hidden])';
  for (const el of document.querySelectorAll(targets)) {
    if (!visible(el) || el.closest('.drag-ghost')) continue;
    const r = el.getBoundingClientRect();
    if (r.width < 24 - 0.01 || r.height < 24 - 0.01)
      out.taps.push((el.id || el.tagName.toLowerCase() + '.' + el.className) + ' ' + r.width.toFixed(1) + 'x' + r.height.toFixed(1));
  }
  return out;
}"""
"""The measures of the screen shown, in the page."""

BROKEN_WORDS = """(selector) => {
  const el = document.querySelector(selector);
  const broken = [];
  const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walk.nextNode(); node; node = walk.nextNode()) {
    for (const m of node.textContent.matchAll(/\\S+/g)) {
      const range = document.createRange();
      range.setStart(node, m.index);
      range.setEnd(node, m.index + m[0].length);
      const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
      if (lines.size > 1) broken.push(m[0]);
    }
  }
  return broken;
}"""


async def words_broken(page: Any, selector: str) -> list[str]:
    """The words of ``selector``'s text that are split over two lines."""
    return list(await page.evaluate(BROKEN_WORDS, selector))


async def check_screen(
    player: Player, name: str, *, ranks: bool = False, strips: bool = True
) -> dict[str, Any]:
    """The screen shown fits its width, and what it draws is legible and tappable; with
    ``ranks`` it must show cards. A screenshot ``name`` (with the width) on request."""
    width = await player.page.evaluate("window.innerWidth")
    await player.shot(f"{name}-{width}", full_page=True)
    m = await player.page.evaluate(MEASURE)
    assert m["scroll"] <= m["viewport"], (name, m["scroll"], m["viewport"])
    assert m["clipped"] == [], (name, m["clipped"])
    assert m["small"] == [], (name, m["small"])
    assert m["covered"] == [], (name, m["covered"])
    assert m["taps"] == [], (name, m["taps"])
    assert m["contrast"] == [], (name, m["contrast"])
    if strips:
        assert m["strips"] == [], (name, m["strips"])
    text = await player.page.inner_text("body")
    plurals = re.findall(r"\b1 (?:moves|actions|hints|cards|deals left)\b", text)
    assert plurals == [], (name, plurals)  # one of a thing is singular
    if ranks:
        assert m["ranks"] > 0, name
    return dict(m)
