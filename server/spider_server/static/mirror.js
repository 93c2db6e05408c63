// The race as the page knows it, kept from the server's messages: a `joined` snapshot, then
// the race events after it (docs/protocol.md). No DOM and no connection: messages in, state
// out. It does what the Python client's mirror does, event for event; both are checked
// against one table of event sequences (tests/agreement/race_events.json).
//
// A mirror is any object with the fields `code`, `role`, `race` (the `joined` race's map,
// changed in place by the events), `version` (the last event version taken), `seq` (the
// player's last applied action, from acks and joined replies) and `boards` (player -> view
// text of a live board, or final full position).

/** The race events a mirror knows; it leaves out any other (a newer server's). */
export const EVENTS = new Set(["player_joined", "player_left", "player_ready", "countdown", "started", "progress", "board", "prepared", "finished", "away", "back", "rematch_offer", "par", "match_cancelled"]);

const known = (e) => e !== null && typeof e === "object" && EVENTS.has(e.type);

/** A mirror of no race yet. */
export function newMirror() {
  return { code: null, role: null, race: null, version: 0, seq: 0, boards: {}, rematch: null };
}

/** Take a `joined` reply: its race replaces the mirror's (a race of another code starts
 * afresh); of its events, those after the mirror's version are taken, each applied only when
 * newer than the snapshot (which already holds the others). Returns whether the race is
 * another than the mirror's. */
export function takeJoined(m, joined) {
  const newRace = joined.race.code !== m.code;
  if (newRace) Object.assign(m, newMirror());
  m.code = joined.race.code;
  m.role = joined.role;
  const since = m.version;
  m.race = joined.race;
  if (joined.boards) Object.assign(m.boards, joined.boards);
  for (const event of joined.events || []) {
    if (!known(event) || (event.version ?? 0) <= since) continue;
    if (event.version > joined.race.version) applyEvent(m, event);
    else keepEventData(m, event);
  }
  m.version = Math.max(m.version, joined.race.version);
  if (joined.view != null && (newRace || joined.seq >= (m.seq ?? 0))) m.seq = joined.seq;
  return newRace;
}

/** The progress fields an ack carries, all of one state (the player's next `progress`). */
const ACK_FIELDS = ["status", "moves", "score", "turned_up", "runs", "deals_left", "time"];

/** Take an ack of `player`'s action: when it is of the mirror's race and not behind the seq
 * held, the seq and the player's progress become the ack's; returns whether it was taken. */
export function takeAck(m, ack, player) {
  if (ack.code !== m.code || ack.seq < (m.seq ?? 0)) return false;
  m.seq = ack.seq;
  const mine = m.race?.players.find((p) => p.player === player);
  if (mine) for (const k of ACK_FIELDS) if (k in ack) mine[k] = ack[k];
  return true;
}

/** Take a race event: applied when it is a known event of the mirror's race, newer than its
 * version (a catch-up and the live stream may overlap); returns whether it was. */
export function takeEvent(m, event) {
  if (!known(event) || event.race !== m.code || event.version <= m.version) return false;
  applyEvent(m, event);
  return true;
}

/** What an event the snapshot already holds still brings: the boards it shows. */
function keepEventData(m, e) {
  if (e.type === "board") {
    if (!(e.player in m.boards)) m.boards[e.player] = e.view;
  } else if (e.type === "finished" && e.boards) Object.assign(m.boards, e.boards);
}

function putPlayer(race, info) {
  const i = race.players.findIndex((p) => p.player === info.player);
  if (i >= 0) race.players[i] = info;
  else race.players.push(info);
}

const each = (race, player, change) => race.players.forEach((p) => p.player === player && change(p));

function applyEvent(m, e) {
  m.version = Math.max(m.version, e.version);
  const race = m.race;
  if (!race) return;
  race.version = Math.max(race.version, e.version);
  switch (e.type) {
    case "rematch_offer":
      m.rematch = e; // who accepted a finished race's rematch; its new race's code once made
      break;
    case "match_cancelled":
      break; // a quick match called off: the lobby (openraces.js) queues again
    case "player_joined":
    case "progress":
      putPlayer(race, e.player);
      break;
    case "player_left":
      if (race.state === "open" || race.state === "countdown") race.players = race.players.filter((p) => p.player !== e.player);
      else each(race, e.player, (p) => Object.assign(p, { status: "left", connected: false }));
      break;
    case "away":
      each(race, e.player, (p) => Object.assign(p, { connected: false, away_since: e.since }));
      break;
    case "back":
      each(race, e.player, (p) => Object.assign(p, { connected: true, away_since: null }));
      break;
    case "player_ready":
      each(race, e.player, (p) => (p.ready = e.ready));
      if (!e.ready && race.state === "countdown") Object.assign(race, { state: "open", starts_at: null });
      break;
    case "countdown":
      Object.assign(race, { state: "countdown", starts_at: e.starts_at });
      break;
    case "started":
      Object.assign(race, { state: "running", starts_at: e.started_at, ends_at: e.ends_at, commitment: e.commitment });
      race.players.forEach((p) => p.status === "waiting" && Object.assign(p, { status: "playing", idle_at: e.idle_at ?? null }));
      break;
    case "board":
      m.boards[e.player] = e.view;
      break;
    case "prepared":
      Object.assign(race, { preparing: false, commitment: e.commitment });
      break;
    case "par":
      race.par = { moves: e.moves ?? null, line: e.line ?? null, first: e.first ?? null, none: !!e.none, provisional: !!e.provisional };
      break;
    case "finished":
      Object.assign(race, { state: "finished", results: e.results, seed: e.seed, salt: e.salt, replays: e.replays, replay_times: e.replay_times ?? null, commitment: e.commitment });
      keepEventData(m, e);
      for (const r of e.results) each(race, r.player, (p) => (p.status = r.status));
      break;
    default:
      break;
  }
}
