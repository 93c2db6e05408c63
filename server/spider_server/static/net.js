// The page's connection to the server: msgpack frames over the websocket at /ws
// (docs/protocol.md), with the same guarantees as the Python client:
//
// - the guest's token is kept in localStorage, so a reload or a new connection speaks for
//   the same player; an account's session is the node's HttpOnly cookie, which the page
//   never sees: the upgrade brings it, and the welcome names the account (`account`);
// - every action (move, deal, undo, resign) is written to localStorage with its seq before
//   it is sent, and stays there until the server acks it or refuses it; after a reconnect
//   or a reload the page rejoins the race (`since` = the last version it saw) and sends the
//   kept actions again, in order. The server applies each seq once and answers a resent one
//   with the ack it gave it, so every action is applied exactly once;
// - a dropped connection is retried with backoff, for ever, while the page is open; a
//   refused one (close code 1013) not before the time its reason names;
// - race affinity: once the page follows a race, its websocket URL names it (/ws?race=CODE,
//   `follow`), so that a load balancer hashing on it puts the race's members on one node;
//   the page moves there after creating, joining or being matched to a race (a new
//   connection: hello with the token, then the page rejoins and resends as after a drop).

import { decode, encode } from "./vendor/msgpack.js";

const KEY = "spider-race.";
const RESEND_AFTER = 4000;
const REQUEST_TIMEOUT = 15000;
/** How long (ms) the connection `follow` left stays open at most. */
const LEAVING_FOR = 15000;

const store = {
  get(name, fallback = null) {
    try {
      const text = localStorage.getItem(KEY + name);
      return text === null ? fallback : JSON.parse(text);
    } catch {
      return fallback;
    }
  },
  set(name, value) {
    try {
      if (value === null || value === undefined) localStorage.removeItem(KEY + name);
      else localStorage.setItem(KEY + name, JSON.stringify(value));
    } catch {
      // storage full or refused: the page still works, without surviving a reload
    }
  },
};
export { store };

/** `url` with its `race` query parameter set to `code` (removed when `code` is null). */
export function raceUrl(url, code) {
  const u = new URL(url);
  if (code) u.searchParams.set("race", code);
  else u.searchParams.delete("race");
  return u.toString();
}

/** The messages of a websocket frame: one, or several race events sent together (an
 * array, in order); none when it is not a msgpack map or array of maps. */
function messagesOf(e) {
  if (!(e.data instanceof ArrayBuffer)) return [];
  let msg;
  try {
    msg = decode(new Uint8Array(e.data));
  } catch {
    return [];
  }
  return (Array.isArray(msg) ? msg : [msg]).filter((m) => m && typeof m === "object" && !Array.isArray(m));
}

/** The server's close of a refused hello; its reason starts "retry after N s". */
const CLOSE_TRY_LATER = 1013;

/** Milliseconds a close reason says to wait ("retry after N s: ..."), else 0. */
export function retryAfter(reason) {
  const found = /^retry after (\d+(?:\.\d+)?) s/.exec(reason || "");
  return found ? Number(found[1]) * 1000 : 0;
}

/** Text of an action as the server's ack names it. */
const actionText = (a) => (a.type === "move" ? a.move : a.type);

export class Session {
  /** `handlers`: onWelcome(welcome), onMessage(msg), onStatus(text), onActionError(error, action),
   * onNameRefused(reason). */
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.ws = null;
    this.welcomed = false;
    this.player = null;
    this.serverOffset = 0;
    this.nextReq = 1;
    this.requests = new Map();
    this.gaveUp = new Set(); // requests the page stopped waiting for: a late error is dropped
    this.backoff = 250;
    this.sentAt = 0;
    this.inFlight = null;
    this.resendTimer = null;
    this.code = null; // the race whose actions this session sends
    this.seq = 0; // the last seq the server applied for us in that race
    this.joinedAsPlayer = false;
    this.welcomeWaiters = [];
    this.welcomedName = null;
    this.account = null; // the account's name when the connection speaks for one (welcome)
    this.refusedName = null; // the server's reason when it refused the name said last
    this.moving = false; // moving to the race's URL: requests wait for its welcome
  }

  get token() {
    return store.get("token");
  }

  get name() {
    return store.get("name", "");
  }

  set name(value) {
    store.set("name", value);
  }

  now() {
    return Date.now() / 1000 + this.serverOffset;
  }

  connect() {
    const ws = new WebSocket(this.url);
    ws.binaryType = "arraybuffer";
    this.ws = ws;
    this.welcomed = false;
    this.handlers.onStatus?.("connecting");
    ws.onopen = () => this.sendHello();
    ws.onmessage = (e) => {
      for (const m of messagesOf(e)) this.take(m);
    };
    ws.onclose = (e) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.welcomed = false;
      this.joinedAsPlayer = false;
      this.inFlight = null;
      for (const [, r] of this.requests) r.reject(new Error("the connection was lost"));
      this.requests.clear();
      this.handlers.onStatus?.("reconnecting");
      // refused for now (1013): not again before the time the server named
      const named = e.code === CLOSE_TRY_LATER ? retryAfter(e.reason) : 0;
      const wait = Math.max(this.backoff * (0.75 + Math.random() / 2), named * (1 + Math.random() / 4));
      this.backoff = Math.min(this.backoff * 2, 5000);
      setTimeout(() => this.connect(), wait);
    };
  }

  /** Resolves once the server has welcomed this connection (at once when it has). */
  whenWelcomed() {
    return this.welcomed ? Promise.resolve() : new Promise((resolve) => this.welcomeWaiters.push(resolve));
  }

  /** Speak as `name` from now on: a name is given with hello, so the page says hello again
   * on a new connection (with the token: the same player, renamed). Resolves on welcome. */
  rename(name) {
    this.name = name;
    this.refusedName = null;
    if (name === this.welcomedName) return Promise.resolve();
    return this.reconnect();
  }

  /** A new connection now (a sign-in or sign-out: the cookie says who it is); resolves
   * with its welcome. */
  reconnect() {
    const welcomed = new Promise((resolve) => this.welcomeWaiters.push(resolve));
    const old = this.ws;
    if (old) {
      this.ws = null;
      old.onclose = null;
      old.close();
    }
    this.welcomed = false;
    this.connect();
    return welcomed;
  }

  /** Race affinity: connect to the URL naming race `code` (null: none) unless the
   * connection is there already; true when it moves. The welcome then rejoins the race. */
  follow(code) {
    const url = raceUrl(this.url, code);
    if (url === this.url) return false;
    this.url = url;
    const old = this.ws;
    if (old) {
      // kept open (its frames ignored) until the race is joined on the new connection, so
      // that the player never has no live connection: nobody sees them away
      this.ws = null;
      old.onclose = null;
      // its frames are ignored (the new connection's join catches up on the race's events),
      // all but a quick match called off: its race is deleted, so the join could not tell
      old.onmessage = (e) => {
        for (const m of messagesOf(e)) if (m.type === "match_cancelled") this.take(m);
      };
      this.leaving?.close();
      this.leaving = old;
      setTimeout(() => this.dropLeaving(old), LEAVING_FOR);
    }
    this.movedTo = old ? code : null;
    for (const [, r] of this.requests) r.reject(Object.assign(new Error("moved to the race's node"), { code: "offline" }));
    this.requests.clear();
    this.welcomed = false;
    this.joinedAsPlayer = false;
    this.inFlight = null;
    this.moving = true;
    this.connect();
    return true;
  }

  /** Close the connection left by `follow` (`which`: only if it is still that one). */
  dropLeaving(which = this.leaving) {
    if (!this.leaving || this.leaving !== which) return;
    this.leaving.close();
    this.leaving = null;
  }

  sendHello() {
    const hello = { type: "hello", protocol: 1, token: this.token, together: true };
    if (this.name) hello.name = this.name;
    this.send(hello);
  }

  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    this.ws.send(encode(msg));
    return true;
  }

  /** Send a request with a fresh `req`; resolves with the reply (`joined` or `done`),
   * rejects with the `error` reply (an Error with `.code`). */
  request(msg) {
    return new Promise((resolve, reject) => {
      if (!this.welcomed && this.moving) {
        // moving to the race's URL (`follow`): sent once welcomed there
        this.whenWelcomed().then(() => this.request(msg)).then(resolve, reject);
        return;
      }
      if (!this.welcomed) {
        reject(Object.assign(new Error("not connected to the server yet"), { code: "offline" }));
        return;
      }
      if (msg.type === "join" && msg.code === this.movedTo) {
        msg = { ...msg, moved: true }; // the rejoin after `follow`: nothing was lost
        this.movedTo = null;
      }
      const req = this.nextReq++;
      const timer = setTimeout(() => {
        this.requests.delete(req);
        this.gaveUp.add(req);
        reject(Object.assign(new Error("the server did not answer"), { code: "timeout" }));
      }, REQUEST_TIMEOUT);
      this.requests.set(req, {
        resolve: (m) => (clearTimeout(timer), resolve(m)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      this.send({ ...msg, req });
    });
  }

  take(msg) {
    switch (msg.type) {
      case "welcome":
        this.welcomed = true;
        this.moving = false;
        this.backoff = 250;
        this.player = msg.player;
        this.serverOffset = msg.server_time - Date.now() / 1000;
        // an account's welcome (by the cookie: an empty token) leaves the guest's token
        // and name kept for when the page signs out
        this.account = msg.account || (msg.token === "" || String(msg.token).startsWith("s1.") ? msg.name : null);
        if (!this.account) {
          store.set("token", msg.token);
          store.set("name", msg.name);
        }
        this.welcomedName = msg.name;
        this.handlers.onStatus?.("connected");
        for (const resolve of this.welcomeWaiters.splice(0)) resolve(msg);
        this.handlers.onWelcome?.(msg);
        return;
      case "joined":
        this.dropLeaving();
        this.resolve(msg.req, msg, null);
        break;
      case "done":
        this.resolve(msg.req, msg, null);
        break;
      case "ack":
        this.takeAck(msg);
        break;
      case "error":
        if (this.takeError(msg)) return;
        break;
      default:
        // other replies (such as a hint's) answer their request too
        if (typeof msg.req === "number" && !msg.race) this.resolve(msg.req, msg, null);
        break;
    }
    this.handlers.onMessage?.(msg);
  }

  resolve(req, reply, error) {
    const r = this.requests.get(req);
    if (!r) return false;
    this.requests.delete(req);
    if (error) r.reject(Object.assign(new Error(error.message), { code: error.error }));
    else r.resolve(reply);
    return true;
  }

  takeError(error) {
    if (error.req !== null && error.req !== undefined && this.resolve(error.req, null, error)) return true;
    if (this.gaveUp.delete(error.req)) return true; // "the server did not answer" was said
    if (!this.welcomed && error.error === "invalid" && this.name && String(error.message).startsWith("name: ")) {
      // a name the server refuses: say why, and say hello again under the name it knows
      this.refusedName = String(error.message).slice("name: ".length);
      this.name = this.welcomedName || "";
      this.handlers.onNameRefused?.(this.refusedName);
      this.sendHello();
      return true;
    }
    if (!this.welcomed && error.error === "bad_token") {
      // a token of another deployment (or a changed secret): start as a new player
      store.set("token", null);
      this.sendHello();
      return true;
    }
    if (error.error === "rate_limited") {
      this.inFlight = null;
      setTimeout(() => this.flush(), 1000);
      return true;
    }
    const pending = this.pending();
    if (error.seq !== null && error.seq !== undefined && error.race === this.code && pending.length && pending[0].seq === error.seq) {
      const action = pending[0];
      this.inFlight = null;
      if (error.error === "out_of_order" || error.error === "not_a_player" || error.error === "unavailable" || error.error === "internal") {
        // not refused: the page's idea of the seq or of its join is stale; rejoin, resend
        this.handlers.onResync?.(error);
        return true;
      }
      this.setPending(pending.slice(1));
      this.handlers.onActionError?.(error, action);
      this.flush();
      return true;
    }
    return false;
  }

  takeAck(ack) {
    if (ack.code !== this.code) return;
    this.seq = Math.max(this.seq, ack.seq);
    const pending = this.pending();
    if (!pending.length || ack.seq !== pending[0].seq) return;
    this.inFlight = null;
    if (ack.move === actionText(pending[0])) {
      this.setPending(pending.slice(1));
    } else {
      // another action of this player holds that seq (another tab): ours is still to do,
      // as the next one
      this.setPending(pending.map((a) => ({ ...a, seq: a.seq + 1 })));
    }
    this.flush();
  }

  // -- actions ---------------------------------------------------------------------------------

  pending() {
    return this.code ? store.get(`pending.${this.code}`, []) : [];
  }

  setPending(list) {
    if (this.code) store.set(`pending.${this.code}`, list.length ? list : null);
  }

  /** Whether an action waits for its ack. */
  busy() {
    return this.pending().length > 0;
  }

  /** The race whose actions this session sends, and the last seq the server applied. */
  enterRace(code, seq) {
    this.code = code;
    this.seq = seq;
    this.joinedAsPlayer = true;
    // kept actions numbered at or below the applied seq were sent before: resent as they
    // are, the server answers with their acks (duplicates) or says another action holds
    // the seq; those numbered further on follow in order
    const pending = this.pending();
    if (pending.length && pending[0].seq > seq + 1) {
      this.setPending(pending.map((a, i) => ({ ...a, seq: seq + 1 + i })));
    }
    this.inFlight = null;
    this.flush();
  }

  leaveRace() {
    this.code = null;
    this.seq = 0;
    this.joinedAsPlayer = false;
    this.inFlight = null;
  }

  /** Queue an action: kept in localStorage, then sent. type: move, undo or resign. */
  act(type, move) {
    if (!this.code) return false;
    const pending = this.pending();
    const last = pending.length ? pending[pending.length - 1].seq : this.seq;
    const action = { type, code: this.code, seq: last + 1 };
    if (type === "move") action.move = move;
    this.setPending([...pending, action]);
    this.flush();
    return true;
  }

  /** Send the first kept action if none is in flight; resend it when no answer comes. */
  flush() {
    clearTimeout(this.resendTimer);
    const pending = this.pending();
    if (!pending.length || !this.welcomed || !this.joinedAsPlayer) return;
    const first = pending[0];
    if (this.inFlight === first.seq && Date.now() - this.sentAt < RESEND_AFTER) {
      this.resendTimer = setTimeout(() => this.flush(), RESEND_AFTER);
      return;
    }
    if (this.send(first)) {
      this.inFlight = first.seq;
      this.sentAt = Date.now();
      this.resendTimer = setTimeout(() => {
        this.inFlight = null;
        this.flush();
      }, RESEND_AFTER);
    }
  }
}
