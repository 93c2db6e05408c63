// The page's words: counts with their plural ("1 move", "2 moves"), places ("2nd of 4"),
// and moves told in words from the position they are made on ("6♥ from a to d"). Cards are
// named by their faces (cards.js), so ten reads 10; the notation (`T`) is shown only beside.

import { cardFace } from "./cards.js";
import { Move, RESERVE, columnLetter } from "./rules.js";

/** `n` and its noun, singular for one: count(1, "move") is "1 move"; `plural` when the
 * noun's plural is not the noun and an s ("1 deal left", "2 deals left" need a phrase:
 * count(n, "deal left", "deals left")). */
export function count(n, noun, plural = `${noun}s`) {
  return `${n} ${n === 1 ? noun : plural}`;
}

/** An ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, … */
export function ordinal(n) {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${{ 1: "st", 2: "nd", 3: "rd" }[n % 10] || "th"}`;
}

/** A card token's short label as players read it: rank and suit (`10♥`, `Pg⚚`, `D red`). */
export function cardLabel(family, token) {
  const f = cardFace(family, token);
  if (family === "wizard" && token.endsWith("t")) return `trump ${f.rank}`;
  if (family === "sparrow" && /^[a-z]+$/.test(f.suit)) return `${f.rank} ${f.suit}`;
  const suit = typeof f.suit === "string" ? f.suit : "";
  return `${f.rank}${suit}`;
}

const place = (j) => (j === RESERVE ? "the reserve" : columnLetter(j));

/** Move `text` (the notation) in words, on `board`, the position it is made on: "6♥ from
 * a to d", "8♠–6♠ (3 cards) from b to e", "deal", "undo", "resign",
 * "set of Winds from a c d f", "Joker replaces 5♦ in a; 5♦ to d". The notation itself when
 * it cannot be read on that board. */
export function moveWords(board, text) {
  if (text === "undo" || text === "resign") return text;
  try {
    const m = Move.parse(text);
    const v = board.variant;
    if (m.kind === "deal") return "deal";
    if (m.kind === "set") {
      const first = board.cols[m.columns[0]]?.at(-1);
      const kind = first === undefined ? null : v.blocker(first);
      const what = kind === "w" ? "Winds" : kind === "f" ? "Flowers and Seasons" : "tiles";
      return `set of ${what} from ${m.columns.map(columnLetter).join(" ")}`;
    }
    if (m.kind === "joker") {
      const card = board.cols[m.src].at(-m.count);
      const label = cardLabel(v.family, v.cards.tokens[card]);
      return `Joker replaces ${label} in ${columnLetter(m.src)}; ${label} to ${columnLetter(m.dst)}`;
    }
    const token = m.src === RESERVE ? v.cards.tokens[board.extra[0]] : v.cards.tokens[board.cols[m.src].at(-m.count)];
    const label = cardLabel(v.family, token);
    if (m.count === 1) return `${label} from ${place(m.src)} to ${place(m.dst)}`;
    const last = cardLabel(v.family, v.cards.tokens[board.cols[m.src].at(-1)]);
    return `${label}–${last} (${m.count} cards) from ${place(m.src)} to ${place(m.dst)}`;
  } catch {
    return text;
  }
}

/** A server's reason with its cards as players read them: after the reason's first ": "
 * (the move's notation before it stays as it is), each card token of `variant` is written
 * by its face: "illegal move b3e: 4c does not go onto Th in column e" reads "… 4♣ does not
 * go onto 10♥ in column e". */
export function readableReason(message, variant) {
  const at = String(message).indexOf(": ");
  if (at < 0 || !variant) return message;
  const tokens = new Set(variant.cards.tokens);
  const tail = message.slice(at + 2).replace(/[^\s,.;:()'"]+/g, (w) => (tokens.has(w) ? cardLabel(variant.family, w) : w));
  return `${message.slice(0, at + 2)}${tail}`;
}
