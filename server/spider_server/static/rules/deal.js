// The seeded deal (rules.md §4): SHA-256 words of the seed, Fisher–Yates by rejection.

import { sha256 } from "../sha256.js";

const encoder = new TextEncoder();
const PREFIX = encoder.encode("spider-race/deal/v1\0");
const TWO64 = 1n << 64n;

function* randomWords(seed) {
  const seedBytes = encoder.encode(String(seed));
  const head = new Uint8Array(PREFIX.length + seedBytes.length + 1 + 8);
  head.set(PREFIX);
  head.set(seedBytes, PREFIX.length);
  const kAt = PREFIX.length + seedBytes.length + 1;
  const view = new DataView(head.buffer);
  for (let k = 0; ; k++) {
    view.setBigUint64(kAt, BigInt(k));
    const digest = sha256(head);
    yield new DataView(digest.buffer).getBigUint64(0);
  }
}

/** Fisher–Yates with uniform(n) by rejection, exactly as §4 says. */
export function shuffle(deck, seed) {
  const cards = [...deck];
  const words = randomWords(seed);
  for (let i = cards.length - 1; i > 0; i--) {
    const n = BigInt(i + 1);
    const limit = TWO64 - (TWO64 % n);
    let w;
    do w = words.next().value;
    while (w >= limit);
    const j = Number(w % n);
    [cards[i], cards[j]] = [cards[j], cards[i]];
  }
  return cards;
}
