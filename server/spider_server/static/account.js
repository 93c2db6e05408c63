// Accounts on the page: the lobby's line of who plays (a guest, with what an account adds,
// or the account), the sign-up and sign-in forms, and the account's panel (its sessions,
// sign out, sign out everywhere, a new password). It calls the node's /account/... routes
// (docs/protocol.md, Accounts) with fetch on the page's own origin; the node keeps the
// session in an HttpOnly cookie the page never reads: after a sign-in or a sign-out the page
// connects again, and the cookie on the upgrade says who it is (welcome.account).

import { accountConfig, agentWords, basic, b64, call, PASSWORD_RULES, passwordField, reconnected, signedIn } from "./accountcalls.js";
import { accountKeys, loadTokens } from "./accountkeys.js";
import { $, fill, h } from "./dom.js";
import { emailSection, forgotButton, signupEmailRow } from "./email.js";
import { closePanel, openPanel, panelEl } from "./panel.js";
import { passkeyButton, passkeySection } from "./passkeys.js";
import { session } from "./state.js";
import { say } from "./ui.js";

export { accountWords, agentWords, PASSWORD_RULES } from "./accountcalls.js";
export const ACCOUNT_GIVES = "An account gives you a name nobody else can take, rated races, a place on the ladders and the daily leaderboards, and your history kept.";

/** The sign-up (`mode` "signup") or sign-in ("signin") form, in a panel: a name and a
 * password, or a passkey; an address to verify and "Forgot your password?" where the node
 * sends mail. */
export async function openSignForm(mode) {
  const up = mode === "signup";
  const config = await accountConfig();
  const error = h("p", { class: "error", id: "account-error", role: "alert" });
  const submit = h("button", { id: "account-submit", type: "submit", class: "primary" }, up ? "Sign up" : "Sign in");
  const form = h(
    "form",
    { id: "account-form", class: "account-form", onsubmit: (e) => (e.preventDefault(), sign(up, form, submit, error)) },
    h("div", { class: "row" }, h("label", { for: "account-name" }, "Name"), h("input", { id: "account-name", name: "account-name", maxlength: 24, autocomplete: "username", required: true, value: up ? session.name : "", spellcheck: "false", autocapitalize: "off" })),
    passwordField("account-password", "Password", up ? "new-password" : "current-password"),
    up ? h("p", { class: "muted", id: "password-rules" }, PASSWORD_RULES) : null,
    up ? signupEmailRow(config.email) : null,
    up ? h("p", { class: "muted" }, "Your races, history and ratings as a guest in this browser go with you to the account.") : null,
    error,
    h("div", { class: "row" }, submit, h("button", { type: "button", id: "account-switch", onclick: () => openSignForm(up ? "signin" : "signup") }, up ? "I have an account: sign in" : "New here? Sign up")),
    up ? null : forgotButton(config.email),
  );
  const passkey = config.passkeys ? passkeyButton(up, form, error) : null;
  if (passkey) submit.after(passkey);
  openPanel("account-sign", up ? "Sign up" : "Sign in", h("div", {}, up ? h("p", {}, ACCOUNT_GIVES) : null, form));
  $("#account-name").focus();
}

async function sign(up, form, submit, error) {
  const name = form.elements["account-name"].value.trim();
  const password = form.elements["account-password"].value;
  const headers = { Authorization: basic(name, password) };
  const guest = up ? session.token : null;
  if (guest) headers["X-Guest-Token"] = guest; // the account takes this guest over: its races, history, ratings
  const email = up ? form.elements["account-email"]?.value.trim() : "";
  if (email) headers["X-Email"] = email;
  submit.disabled = true;
  fill(error);
  let reply;
  try {
    reply = await call("POST", up ? "/account/signup" : "/account/signin", headers);
  } catch (e) {
    submit.disabled = false;
    error.textContent = e.message;
    (e.code === "weak_password" || e.code === "bad_credentials" ? form.elements["account-password"] : form.elements["account-name"]).focus();
    return;
  }
  // the guest is the account's now (its token refused from here on): signed out, the page
  // is a new guest, under the name it had unless that is the account's
  await signedIn(guest, name);
  if (reply?.email) say(`A link to confirm ${reply.email} is on its way.`);
  else if (reply?.email_error) say(reply.email_error.message, "error");
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

const when = (t) => (t ? new Date(t * 1000).toLocaleString() : "–");

/** The account's panel: its name, its sessions, sign out (here, everywhere), its passkeys, its
 * address (where the node sends mail), a new password (when it has one). */
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
    h("div", { id: "account-extras" }),
    form,
    h("div", { id: "account-keys" }),
  );
  openPanel("account", "Your account", content);
  loadSessions(error);
  call("GET", "/account/me").then(
    (me) => {
      if (!panelEl("account")) return;
      fill($("#account-extras"), passkeySection(), emailSection(me));
      if (!me.password) form.replaceWith(firstPasswordForm(error));
      loadKeys(me);
    },
    (e) => (error.textContent = e.message),
  );
}

/** The tokens, bot and delete sections (accountkeys.js), once /account/me says the kind. */
function loadKeys(me) {
  const place = $("#account-keys");
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
  fill(place, accountKeys(me, tools));
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

/** For an account made with a passkey: a password set by the session alone (then the form to
 * change it, when the panel opens again). */
function firstPasswordForm(error) {
  const submit = h("button", { id: "password-submit", type: "submit" }, "Set a password");
  const form = h(
    "form",
    {
      id: "first-password-form",
      class: "account-form",
      onsubmit: async (e) => {
        e.preventDefault();
        submit.disabled = true;
        fill(error);
        try {
          await call("POST", "/account/password", { "X-New-Password": b64(form.elements["new-password"].value) });
          form.replaceWith(h("p", { class: "muted", id: "password-done" }, "Password set: the name and the password sign in too, the terminal and bots included."));
        } catch (err) {
          submit.disabled = false;
          error.textContent = err.message;
        }
      },
    },
    h("h3", {}, "Set a password"),
    h("p", { class: "muted", id: "no-password" }, "This account has no password: it signs in with its passkeys. A password lets the terminal and bots sign in too."),
    passwordField("new-password", "New", "new-password"),
    h("p", { class: "muted" }, PASSWORD_RULES),
    h("div", { class: "row" }, submit),
  );
  return form;
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
