// The race's standings while it runs, worked out on the page from the players' progress as
// the server ranks its results (rules.md §7a): winners by the time of their win, then fewer
// actions; then the players who did not forfeit, by progress (sets completed, cards turned
// up); then those who forfeited (resigned, left, abandoned, idle), by progress. Equal keys share a
// place (1, 2, 2, 4). The player entries carry neither the suited score nor the time progress
// was last raised, so those two tie-breaks are left out: the server's results may part two
// players the page shows level.

import { ordinal } from "./words.js";

export const FORFEITS = new Set(["resigned", "left", "abandoned", "idle"]);

function key(p) {
  if (p.status === "won") return [0, p.time ?? Infinity, p.moves];
  const group = FORFEITS.has(p.status) ? 2 : 1;
  return [group, -p.runs, -p.turned_up];
}

function compare(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/** Each player's place: a Map of player id to its place (1 first; equal keys share one). */
export function standings(players) {
  const keyed = players.map((p) => ({ p, k: key(p) })).sort((a, b) => compare(a.k, b.k));
  const places = new Map();
  keyed.forEach((x, i) => {
    const place = i > 0 && compare(keyed[i - 1].k, x.k) === 0 ? places.get(keyed[i - 1].p.player) : i + 1;
    places.set(x.p.player, place);
  });
  return places;
}

/** A place in words: "2nd of 4" (and "tied" when another player shares it); "" while
 * every player shares one place (no one is ahead of anyone: before any progress). */
export function placeText(places, player) {
  const place = places.get(player);
  if (place === undefined) return "";
  const shared = [...places.values()].filter((x) => x === place).length;
  if (shared === places.size) return "";
  return `${ordinal(place)} of ${places.size}${shared > 1 ? " (tied)" : ""}`;
}

/** The player ranked first (the earliest in the list among equals), or null. */
export function leader(players) {
  const places = standings(players);
  return players.find((p) => places.get(p.player) === 1) || null;
}

/** The players ranked first (several when tied), or none while every player shares the
 * first place (no one leads before anyone made progress). */
export function leaders(players) {
  const places = standings(players);
  const top = players.filter((p) => places.get(p.player) === 1);
  return top.length === players.length ? [] : top;
}

/** Names in words: "Bo", "Bo and Cy", "Bo, Cy and Di". */
export function namesText(names) {
  return names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : names.join("");
}

const OUT_TEXT = { resigned: "resigned", left: "left the race", abandoned: "is away: out of the race", idle: "made no move in time: out of the race", timeout: "ran out of time", stuck: "is stuck" };

/** What players should be told since they last looked: "Bo won in 4:12!", "Bo resigned";
 * `seen` (player -> status, or null the first time, when nothing is told) is updated in
 * place and returned, with the texts. `self`: this page's player, not told of themself. */
export function newsSince(seen, players, self, fmtTime) {
  const first = seen === null;
  const now = seen || {};
  const texts = [];
  for (const p of players) {
    const before = now[p.player];
    now[p.player] = p.status;
    if (first || p.player === self || before === p.status || before === undefined && p.status === "waiting") continue;
    if (p.status === "won") texts.push(`${p.name} won${p.time ? ` in ${fmtTime(p.time)}` : ""}!`);
    else if (OUT_TEXT[p.status]) texts.push(`${p.name} ${OUT_TEXT[p.status]}.`);
  }
  return { seen: now, texts };
}
