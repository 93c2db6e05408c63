// How to play: a few lines on each variant and each option (from docs/spec/rules.md,
// docs/spec/alt-decks.md and docs/decks/*.md), in a panel opened from the lobby and from the
// board. The variant asked for comes first; the others are a choice away.

import { BASES } from "./rules.js";
import { fill, h } from "./dom.js";
import { openPanel } from "./panel.js";

const SPIDER =
  "Build down in rank on any card one rank higher (a 7 on any 8); only a run of one suit moves as a unit, or any part of it from its end. Any card or run may go into an empty column. A King-to-Ace run of one suit leaves at once. A deal puts one card on every column, and is not allowed while a column is empty. Win when every run has left.";

/** What each base is, in a few sentences: [title, text, the one to start with]. */
export const BASE_TEXT = {
  spider1: ["Spider, one suit", `Start here: 104 cards, all spades, in 10 columns; 5 deals of 10 in the stock. ${SPIDER} With one suit every run can move, so this is the easiest.`],
  spider2: ["Spider, two suits", `104 cards, spades and hearts, in 10 columns; 5 deals. ${SPIDER} Mixing the two suits blocks runs: keep them apart when you can.`],
  spider4: ["Spider, four suits", `104 cards, two decks, in 10 columns; 5 deals. ${SPIDER} The hardest Spider: most games are lost by building off-suit too early.`],
  spiderette: ["Spiderette", `One deck of 52 in 7 columns of 1 to 7 cards; the stock deals 7, 7, 7 and then 3 onto the first three columns. ${SPIDER}`],
  myrmex: ["Myrmex (Decktet)", "60 Decktet cards in six suits (☾ Moons, ☀ Suns, ≈ Waves, ❦ Leaves, ∿ Wyrms, ⌘ Knots), ranks Ace, 2–9 and Crown ♛; numerals carry two suits. A card goes on any card one rank higher. A group moves together when it descends by one and all its cards share a suit. A Crown-to-Ace group sharing a suit leaves. 8 columns of 4, face up; the stock deals while columns are empty."],
  wizard: ["Wizard's Tower (Tarot)", "78 Tarot cards (⚚ Wands, ∪ Cups, ◉ Discs, ⚔ Swords, Ace to King with Page and Knight) and 22 gold trumps, 0 to 21, all dealt face up in 13 columns: there is no stock. Suit cards build down by one on any suit; trumps only on higher trumps. A King-to-Ace run of one suit leaves. The Tower: the Fool (0) leaves when it reaches a column's end, then trump 1, 2, … up to 21, in order: the board shows the trump the Tower needs next."],
  sparrow: ["Sparrow (Mah Jong)", "144 tiles: bam, dot and crak numbered 1–9 with a Dragon as their 10 (green, red, white), the four Winds and the Flowers ✿ and Seasons ❄. 12 columns of 6, face up; 6 deals. A tile goes on any tile one rank higher (a 9 on any Dragon); a run of one suit moves together. Winds move one at a time onto a Wind or into an empty column; when four different Winds end four columns, drag one to the runs (or press x) to take the set off; four Flowers and Seasons likewise."],
  starfish: ["Starfish (six suits and Jokers)", "156 cards in six suits (with ★ Stars and Ψ Squids), 12 columns of 6 face up, 7 deals. It plays as Spider; a King-to-Ace run leaves. Six Jokers wait in the Troupe: a Joker may replace a face-up card that is not a column's end, when that card can go at once onto another column one rank higher or into an empty one. Drag a Joker from the Troupe onto the card, or drag the card away."],
};

/** Each base in a few words, beside its name in the lobby's lists. */
export const BASE_SHORT = {
  spider1: "1 suit, start here",
  spider2: "2 suits",
  spider4: "4 suits, hardest",
  spiderette: "1 deck, 7 columns",
  myrmex: "Decktet",
  wizard: "Tarot, no stock",
  sparrow: "Mah Jong",
  starfish: "6 suits, Jokers",
};

/** A base's name in the lobby's lists: `spider1 · 1 suit, start here`. */
export const baseLabel = (b) => (BASE_SHORT[b] ? `${b} · ${BASE_SHORT[b]}` : b);

/** What each option changes. */
export const OPTION_TEXT = {
  relaxed: "relaxed — the stock may deal while a column is empty.",
  open: "open — every card of the deal is face up (the stock stays hidden): nothing is turned up, so plan from the start.",
  keep: "keep — complete runs do not leave: win when the stock is empty and every column is empty or one complete King-to-Ace run.",
  blind: "blind — dealt like Spider: only each column's last card face up; the others turn up as they reach a column's end.",
  weave: "weave — one reserve place (z): a column's end card may wait there, and plays back by the usual rules.",
};

const RACE_TEXT =
  "Everyone in a race gets the same deal at the same moment. The first to win wins; then the players who played on rank by runs completed and cards turned up, and those who resigned or left come last. Undo, hints and live boards for spectators are set when the race is created.";

function section(base) {
  const [title, text] = BASE_TEXT[base];
  const options = BASES[base] || [];
  return h(
    "div",
    { class: "howto-variant", dataset: { base } },
    h("h3", {}, title, " ", h("code", {}, base)),
    h("p", {}, text),
    options.length ? h("ul", { class: "howto-options" }, options.map((o) => h("li", { dataset: { option: o } }, OPTION_TEXT[o]))) : null,
  );
}

/** Open how to play, on the base of `variantId` (a base or an id such as
 * `spider4+open`). */
export function openHowTo(variantId) {
  const first = String(variantId || "spider1").split("+")[0];
  const base = first in BASE_TEXT ? first : "spider1";
  const body = h("div", { id: "howto-variant" }, section(base));
  const choose = h(
    "select",
    { id: "howto-base", "aria-label": "variant", onchange: (e) => fill(body, section(e.target.value)) },
    Object.keys(BASE_TEXT).map((b) => h("option", { value: b, selected: b === base }, `${b} — ${BASE_TEXT[b][0]}`)),
  );
  openPanel("howto", "How to play", h("div", { class: "howto" }, h("div", { class: "row" }, h("label", { for: "howto-base" }, "Variant"), choose), body, h("p", { class: "muted" }, RACE_TEXT)));
}
