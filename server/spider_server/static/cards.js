// How a card looks: its corner label (rank and suit symbols), its big centre symbol, the
// colour class of each suit, and a name for screen readers. One function per deck.

const RANK_NAMES = { A: "ace", T: "ten", J: "jack", Q: "queen", K: "king", P: "page", N: "knight", C: "crown" };
const STANDARD = {
  s: ["♠", "spades"],
  h: ["♥", "hearts"],
  d: ["♦", "diamonds"],
  c: ["♣", "clubs"],
  r: ["★", "stars"],
  q: ["Ψ", "squids"],
};
const DECKTET = {
  m: ["☾", "moons"],
  s: ["☀", "suns"],
  w: ["≈", "waves"],
  l: ["❦", "leaves"],
  y: ["∿", "wyrms"],
  k: ["⌘", "knots"],
};
const TAROT = {
  w: ["⚚", "wands"],
  c: ["∪", "cups"],
  d: ["◉", "discs"],
  s: ["⚔", "swords"],
};
const MAHJONG = { b: ["bam", "bamboo"], c: ["dot", "coins"], m: ["crak", "characters"] };
const WINDS = { E: "east", S: "south", W: "west", N: "north" };
const DRAGONS = { b: "green", c: "red", m: "white" };

/**
 * The face of a card token of a variant family: `{ rank, suit, big, cls, name }` where
 * `rank` and `suit` make the corner label, `big` the centre, `cls` the CSS classes.
 */
export function cardFace(family, token) {
  if (token === "@") return { rank: "Jkr", suit: "☆", big: "☆", cls: "joker", name: "joker" };
  const m = /^([A-Z]|[0-9]+)([a-z]+)$/.exec(token);
  if (!m) return { rank: token, suit: "", big: "", cls: "", name: token };
  const [, r, suits] = m;
  if (family === "myrmex") {
    const rank = r === "C" ? "♛" : r;
    const symbols = [...suits].map((s) => DECKTET[s][0]).join("");
    const names = [...suits].map((s) => DECKTET[s][1]).join(" and ");
    const parts = [...suits].map((s) => [DECKTET[s][0], `dk-${s}`]);
    return { rank, suit: symbols, big: symbols, parts, cls: `decktet ${suits.length > 1 ? "two-suits" : `dk-${suits}`}`, name: `${RANK_NAMES[r] || r} of ${names}` };
  }
  if (family === "wizard") {
    if (suits === "t") return { rank: r, suit: "", big: r, cls: "trump", name: `trump ${r}` };
    const [symbol, name] = TAROT[suits];
    const rank = r === "T" ? "10" : r === "P" ? "Pg" : r === "N" ? "Kn" : r;
    return { rank, suit: symbol, big: symbol, cls: `tarot tt-${suits}`, name: `${RANK_NAMES[r] || r} of ${name}` };
  }
  if (family === "sparrow") {
    if (suits === "w") return { rank: r, suit: "wind", big: r, cls: "wind", name: `${WINDS[r]} wind` };
    if (suits === "f") {
      const flower = Number(r) <= 4;
      return { rank: r, suit: flower ? "✿" : "❄", big: flower ? "✿" : "❄", cls: "flower", name: `${flower ? "flower" : "season"} ${r}` };
    }
    const [label, name] = MAHJONG[suits];
    if (r === "D") return { rank: "D", suit: DRAGONS[suits], big: "D", cls: `mj-${suits} dragon`, name: `${DRAGONS[suits]} dragon (${name})` };
    return { rank: r, suit: label, big: r, cls: `mj-${suits}`, name: `${r} of ${name}` };
  }
  const [symbol, name] = STANDARD[suits] || [suits, suits];
  const rank = r === "T" ? "10" : r;
  return { rank, suit: symbol, big: symbol, cls: `suit-${suits}`, name: `${RANK_NAMES[r] || r} of ${name}` };
}

/** A foundation token's label (a run of a suit, a set of trumps, Winds or Flowers). */
export function foundationFace(family, token) {
  if (family === "myrmex") return { label: DECKTET[token]?.[0] || token, cls: `dk-${token}` };
  if (family === "wizard") return token === "t" ? { label: "T", cls: "trump" } : { label: TAROT[token]?.[0] || token, cls: `tt-${token}` };
  if (family === "sparrow") {
    if (token === "w") return { label: "wind", cls: "wind" };
    if (token === "f") return { label: "✿", cls: "flower" };
    return { label: MAHJONG[token]?.[0] || token, cls: `mj-${token}` };
  }
  return { label: STANDARD[token]?.[0] || token, cls: `suit-${token}` };
}
