// Accounts on the page: the lobby's line of who plays (a guest, with what an account adds,
// or the account), the sign-up and sign-in forms, and the account's panel (its sessions,
// sign out, sign out everywhere, a new password). It calls the node's /account/... routes
// (docs/protocol.md, Accounts) with fetch on the page's own origin; the node keeps the
// session in an HttpOnly cookie the page never reads: after a sign-in or a sign-out the page
// connects again, and the cookie on the upgrade says who it is (welcome.account).

import { accountKeys, loadTokens } from "./accountkeys.js";
import { $, fill, h } from "./dom.js";
import { store } from "./net.js";
import { closePanel, openPanel, panelEl } from "./panel.js";
import { app, session } from "./state.js";
import { redraw } from "./ui.js";

export const PASSWORD_RULES = "At least 8 characters; the most common passwords are refused.";
export const ACCOUNT_GIVES = "An account gives you a name nobody else can take, ratings and ladders, and your history kept.";

/** Base64 of text's UTF-8. */
const b64 = (text) => btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(""));
const basic = (name, password) => `Basic ${b64(`${name}:${password}`)}`;
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
      return "The name or the password is wrong.";
    case "rate_limited": {
      const said = /try again in \d+/.test(message);
      return sentence(said || !retryAfter ? message || "too many tries" : `${message || "too many tries"}: try again in ${retryAfter} s`);
    }
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
async function call(method, path, headers = {}) {
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
async function reconnected() {
  await session.reconnect();
  app.lobbyError = null;
  if (app.screen === "lobby") redraw("lobby");
}

/** A password field and its "show" box. */
function passwordField(id, label, autocomplete) {
  const input = h("input", { id, name: id, type: "password", autocomplete, required: true, maxlength: 1024 });
  const show = h("input", { type: "checkbox", id: `${id}-show`, onchange: (e) => (input.type = e.target.checked ? "text" : "password") });
  return h("div", { class: "row" }, h("label", { for: id }, label), input, h("label", { class: "check", for: `${id}-show` }, show, "show"));
}

/** The sign-up (`mode` "signup") or sign-in ("signin") form, in a panel. */
export function openSignForm(mode) {
  const up = mode === "signup";
  const error = h("p", { class: "error", id: "account-error", role: "alert" });
  const submit = h("button", { id: "account-submit", type: "submit", class: "primary" }, up ? "Sign up" : "Sign in");
  const form = h(
    "form",
    { id: "account-form", class: "account-form", onsubmit: (e) => (e.preventDefault(), sign(up, form, submit, error)) },
    h("div", { class: "row" }, h("label", { for: "account-name" }, "Name"), h("input", { id: "account-name", name: "account-name", maxlength: 24, autocomplete: "username", required: true, value: up ? session.name : "", spellcheck: "false", autocapitalize: "off" })),
    passwordField("account-password", "Password", up ? "new-password" : "current-password"),
    up ? h("p", { class: "muted", id: "password-rules" }, PASSWORD_RULES) : null,
    up ? h("p", { class: "muted" }, "Your races, history and ratings as a guest in this browser go with you to the account.") : null,
    error,
    h("div", { class: "row" }, submit, h("button", { type: "button", id: "account-switch", onclick: () => openSignForm(up ? "signin" : "signup") }, up ? "I have an account: sign in" : "New here? Sign up")),
  );
  openPanel("account-sign", up ? "Sign up" : "Sign in", h("div", {}, up ? h("p", {}, ACCOUNT_GIVES) : null, form));
  $("#account-name").focus();
}

async function sign(up, form, submit, error) {
  const name = form.elements["account-name"].value.trim();
  const password = form.elements["account-password"].value;
  const headers = { Authorization: basic(name, password) };
  const guest = up ? session.token : null;
  if (guest) headers["X-Guest-Token"] = guest; // the account takes this guest over: its races, history, ratings
  submit.disabled = true;
  fill(error);
  try {
    await call("POST", up ? "/account/signup" : "/account/signin", headers);
  } catch (e) {
    submit.disabled = false;
    error.textContent = e.message;
    (e.code === "weak_password" || e.code === "bad_credentials" ? form.elements["account-password"] : form.elements["account-name"]).focus();
    return;
  }
  if (guest) {
    // the guest is the account's now (its token refused from here on): signed out, the
    // page is a new guest, under the name it had unless that is the account's
    store.set("token", null);
    if (session.name.toLowerCase() === name.toLowerCase()) session.name = "";
  }
  closePanel();
  await reconnected();
}

/** Sign this browser out (`everywhere`: every session of the account). */
async function signOut(everywhere, error) {
  try {
    await call("POST", everywhere ? "/account/signout-everywhere" : "/account/signout");
  } catch (e) {
    if (e.code !== "unauthorized") {
      if (error) error.textContent = e.message;
      return;
    }
  }
  closePanel();
  await reconnected();
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

const when = (t) => (t ? new Date(t * 1000).toLocaleString() : "–");

/** The account's panel: its name, its sessions, sign out (here, everywhere), a new password. */
export function openAccount() {
  const error = h("p", { class: "error", id: "account-panel-error", role: "alert" });
  const done = h("p", { class: "muted", id: "password-done", role: "status" });
  const submit = h("button", { id: "password-submit", type: "submit" }, "Change password");
  const form = h(
    "form",
    { id: "password-form", class: "account-form", onsubmit: (e) => (e.preventDefault(), changePassword(form, submit, error, done)) },
    h("h3", {}, "Change password"),
    passwordField("old-password", "Current", "current-password"),
    passwordField("new-password", "New", "new-password"),
    h("p", { class: "muted" }, PASSWORD_RULES, " Every other session is signed out."),
    done,
    h("div", { class: "row" }, submit),
  );
  const content = h(
    "div",
    { class: "account" },
    h("p", {}, "Signed in as ", h("strong", { id: "account-panel-name" }, session.account || "")),
    error,
    h("h3", {}, "Sessions"),
    h("ul", { id: "account-sessions", class: "sessions" }, h("li", { class: "muted" }, "Loading…")),
    h(
      "div",
      { class: "row" },
      h("button", { id: "account-signout", type: "button", onclick: () => signOut(false, error) }, "Sign out"),
      h("button", { id: "account-signout-all", type: "button", title: "every browser and program signed in to this account", onclick: () => signOut(true, error) }, "Sign out everywhere"),
    ),
    form,
    h("div", { id: "account-keys" }),
  );
  openPanel("account", "Your account", content);
  loadSessions(error);
  loadKeys(error);
}

/** The tokens, bot and delete sections (accountkeys.js), once /account/me says the kind. */
async function loadKeys(error) {
  let me;
  try {
    me = await call("GET", "/account/me");
  } catch (e) {
    if (panelEl("account")) error.textContent = e.message;
    return;
  }
  const place = panelEl("account") && $("#account-keys");
  if (!place) return;
  const tools = {
    call,
    basic,
    passwordField,
    when,
    // after an upgrade (`again`: the panel anew) or a deletion: the page connects again
    done: async (again) => {
      closePanel();
      await reconnected();
      if (again) openAccount();
    },
  };
  const keys = accountKeys(me, tools);
  fill(place, keys);
  loadTokens($("#keys-error"), tools);
}

async function loadSessions(error) {
  let reply;
  try {
    reply = await call("GET", "/account/sessions");
  } catch (e) {
    if (panelEl("account")) error.textContent = e.message;
    return;
  }
  const list = panelEl("account") && $("#account-sessions");
  if (!list) return;
  fill(
    list,
    reply.sessions.map((s) =>
      h(
        "li",
        { dataset: { id: s.id, current: s.current ? "1" : "0" } },
        h("strong", { title: s.user_agent || "" }, agentWords(s.user_agent)),
        s.current ? h("span", { class: "badge" }, "this one") : null,
        h("br"),
        h("span", { class: "muted" }, `signed in ${when(s.created_at)} · last used ${when(s.last_used_at)} · from ${s.address || "–"}`),
      ),
    ),
  );
}

async function changePassword(form, submit, error, done) {
  const old = form.elements["old-password"].value;
  const neu = form.elements["new-password"].value;
  submit.disabled = true;
  fill(error);
  fill(done);
  try {
    const reply = await call("POST", "/account/password", { Authorization: basic(session.account || "", old), "X-New-Password": b64(neu) });
    done.textContent = `Password changed; ${reply.ended} other ${reply.ended === 1 ? "session" : "sessions"} signed out.`;
    form.reset();
    loadSessions(error);
  } catch (e) {
    error.textContent = e.message;
    form.elements[e.code === "weak_password" ? "new-password" : "old-password"].focus();
  } finally {
    submit.disabled = false;
  }
}

/** The lobby's line of who plays: a guest (and what an account adds, with sign up and sign
 * in) or the account (its panel, sign out); empty until the server has welcomed the page. */
export function accountBar() {
  const bar = h("div", { id: "account-bar", class: "account-bar", role: "region", "aria-label": "Account" });
  if (!session.welcomed) return bar;
  if (session.account) {
    fill(
      bar,
      h("p", { id: "signed-in" }, "Signed in as ", h("strong", { id: "signed-in-name" }, session.account)),
      h("div", { class: "row" }, h("button", { id: "account-open", type: "button", onclick: openAccount }, "Your account"), h("button", { id: "signout", type: "button", onclick: () => signOut(false, null) }, "Sign out")),
    );
    return bar;
  }
  const name = session.welcomedName;
  fill(
    bar,
    h("p", { id: "guest-banner" }, "Playing as ", name ? [h("strong", {}, name), " (guest)"] : "a guest", ". ", ACCOUNT_GIVES),
    h("div", { class: "row" }, h("button", { id: "signup", type: "button", onclick: () => openSignForm("signup") }, "Sign up"), h("button", { id: "signin", type: "button", onclick: () => openSignForm("signin") }, "Sign in")),
  );
  return bar;
}
