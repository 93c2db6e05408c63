// What the account's parts of the page share (account.js, passkeys.js, email.js): one request
// to the node's /account/... routes, their refusals in plain words, connecting again once the
// cookie says who the page is, a password field, a user agent in a few words.

import { h } from "./dom.js";
import { store } from "./net.js";
import { closePanel } from "./panel.js";
import { app, session } from "./state.js";
import { redraw } from "./ui.js";

export const PASSWORD_RULES = "At least 8 characters; the most common passwords are refused.";

/** Base64 of text's UTF-8. */
export const b64 = (text) => btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(""));
export const basic = (name, password) => `Basic ${b64(`${name}:${password}`)}`;
/** `text` as a sentence: capitalised, ending with a full stop. */
const sentence = (text) => {
  const t = String(text).trim();
  return t ? t[0].toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".") : t;
};

/** What a refusal of the account routes says, in plain words. */
export function accountWords(body, status, retryAfter = null) {
  const message = String(body?.message || "");
  switch (body?.error) {
    case "name_refused":
      return `The name ${message.replace(/^this name is refused: /, "")}`.replace(/\.?$/, ".");
    case "weak_password":
      return sentence(message);
    case "name_taken":
      return "That name is taken (or one that looks like it): choose another.";
    case "bad_credentials":
      return /passkey/.test(message) ? sentence(message) : "The name or the password is wrong.";
    case "rate_limited": {
      const said = /try again in \d+/.test(message);
      return sentence(said || !retryAfter ? message || "too many tries" : `${message || "too many tries"}: try again in ${retryAfter} s`);
    }
    case "bad_link":
      return "This link was used already or has expired: ask for a new one.";
    case "unauthorized":
      return "You are not signed in (or the session has ended): sign in again.";
    case "unavailable":
      return sentence(`accounts are not available right now: ${message || "try again in a moment"}`);
    default:
      return message ? sentence(message) : `The server answered ${status}.`;
  }
}

/** One request to an account route: its JSON reply; else throws an Error whose message is
 * the words to show (`.code`: the server's error). */
export async function call(method, path, headers = {}) {
  let r;
  try {
    r = await fetch(path, { method, headers, credentials: "same-origin", cache: "no-store" });
  } catch {
    throw new Error("The server did not answer: try again in a moment.");
  }
  let body = null;
  try {
    body = await r.json();
  } catch {
    body = null;
  }
  if (r.ok) return body;
  throw Object.assign(new Error(accountWords(body, r.status, r.headers.get("retry-after"))), { code: body?.error });
}

/** The page connects again (the cookie now says who it is) and the lobby is drawn anew. */
export async function reconnected() {
  await session.reconnect();
  app.lobbyError = null;
  if (app.screen === "lobby") redraw("lobby");
}

/** A password field and its "show" box. */
export function passwordField(id, label, autocomplete) {
  const input = h("input", { id, name: id, type: "password", autocomplete, required: true, maxlength: 1024 });
  const show = h("input", { type: "checkbox", id: `${id}-show`, onchange: (e) => (input.type = e.target.checked ? "text" : "password") });
  return h("div", { class: "row" }, h("label", { for: id }, label), input, h("label", { class: "check", for: `${id}-show` }, show, "show"));
}

/** A session's user agent in a few words ("Chrome on Linux"); else its first characters (a
 * program's, such as the terminal client's). */
export function agentWords(agent) {
  const ua = String(agent || "");
  const browser = [["Firefox", /Firefox\//], ["Edge", /Edg\//], ["Opera", /OPR\//], ["Chrome", /Chrom(e|ium)\//], ["Safari", /Safari\//]].find(([, re]) => re.test(ua))?.[0];
  const system = [["Android", /Android/], ["iOS", /iPhone|iPad/], ["Windows", /Windows/], ["macOS", /Mac OS X/], ["Linux", /Linux/]].find(([, re]) => re.test(ua))?.[0];
  if (browser) return system ? `${browser} on ${system}` : browser;
  return ua ? ua.slice(0, 60) : "an unknown browser or program";
}


let config = null;

/** What the node offers (`GET /account/config`: `{email, passkeys}`), asked once; nothing
 * offered when it does not answer. */
export function accountConfig() {
  config ??= call("GET", "/account/config").catch(() => {
    config = null;
    return { email: false, passkeys: false };
  });
  return config;
}

/** A sign-up or sign-in went through: a guest's sign-up (`guest`: its token went along) took
 * the guest over, so the page is a new guest under its name unless that is the account's
 * (`name`); the panel closes and the page connects again, signed in by the cookie. */
export async function signedIn(guest, name) {
  if (guest) {
    store.set("token", null);
    if (session.name.toLowerCase() === String(name).toLowerCase()) session.name = "";
  }
  closePanel();
  await reconnected();
}
