// The account panel's parts for programs and for good: personal API tokens (made, shown
// once, listed with their last use, revoked), the upgrade to a bot account (one way, with a
// clear warning) and deleting the account (its password asked for; an account without a
// password, made with a passkey, is deleted by its session). account.js opens the
// panel and hands this module what it calls the server with (`tools`: call, basic,
// passwordField, when, done), so that the two do not import each other.

import { $, fill, h } from "./dom.js";

export const SCOPES = [
  ["race:read", "watch races, lists, profiles, replays"],
  ["race:play", "join, ready, move, leave, quick match"],
  ["race:create", "create races, rematches"],
  ["bot:play", "everything a bot does (bot accounts only)"],
];
export const BOT_WARNING =
  "A bot account races only as a bot, on the bots' ladder, and can never be a person's account again. Only an account with no rated races as a person can become one.";
export const NO_PASSWORD_DELETE = "This account has no password: signed in here, it is deleted as you tick the box.";
export const DELETE_WARNING =
  "Your name, password, sessions and API tokens are removed at once. Your finished races stay, shown as “deleted player”.";

/** The panel's sections below the sessions: tokens, bot, delete (`me`: /account/me). */
export function accountKeys(me, tools) {
  const error = h("p", { class: "error", id: "keys-error", role: "alert" });
  const shown = h("div", { id: "token-shown", role: "status" });
  const boxes = SCOPES.filter(([s]) => s !== "bot:play" || me.bot).map(([scope, words]) =>
    h("label", { class: "check", title: words }, h("input", { type: "checkbox", name: "token-scope", value: scope, checked: scope === "race:read" }), scope),
  );
  const submit = h("button", { id: "token-create", type: "submit" }, "Create token");
  const form = h(
    "form",
    { id: "token-form", class: "account-form", onsubmit: (e) => (e.preventDefault(), createToken(form, submit, error, shown, tools)) },
    h("div", { class: "row" }, h("label", { for: "token-name" }, "Name"), h("input", { id: "token-name", name: "token-name", maxlength: 40, value: "my bot", spellcheck: "false" })),
    h("div", { class: "row", id: "token-scopes" }, ...boxes),
    h("div", { class: "row" }, submit),
  );
  const bot = me.bot
    ? h("p", { id: "bot-account" }, "This is a bot account: it races as a bot, on the bots' ladder.")
    : botForm(error, tools);
  return h(
    "div",
    { class: "account-keys" },
    error,
    h("h3", {}, "API tokens"),
    h("p", { class: "muted" }, "For programs (SPIDER_RACE_TOKEN): a token does only what its scopes allow."),
    h("ul", { id: "account-tokens", class: "sessions" }, h("li", { class: "muted" }, "Loading…")),
    shown,
    form,
    h("h3", {}, "Bot account"),
    bot,
    h("h3", {}, "Delete the account"),
    deleteForm(me, error, tools),
  );
}

/** Fill the token list (after the panel is drawn, and after each change). */
export async function loadTokens(error, tools) {
  let reply;
  try {
    reply = await tools.call("GET", "/account/tokens");
  } catch (e) {
    error.textContent = e.message;
    return;
  }
  const list = $("#account-tokens");
  if (!list) return;
  const lines = reply.tokens.map((t) =>
    h(
      "li",
      { dataset: { id: String(t.id) } },
      h("strong", {}, t.name),
      " ",
      h("span", { class: "badge" }, t.scopes.join(" ")),
      h("br"),
      h("span", { class: "muted" }, `made ${tools.when(t.created_at)} · last used ${tools.when(t.last_used_at)} `),
      h("button", { type: "button", class: "token-revoke", onclick: () => revoke(t.id, error, tools) }, "Revoke"),
    ),
  );
  fill(list, lines.length ? lines : [h("li", { class: "muted" }, "No tokens.")]);
}

async function createToken(form, submit, error, shown, tools) {
  const scopes = [...form.querySelectorAll("input[name=token-scope]:checked")].map((b) => b.value);
  submit.disabled = true;
  fill(error);
  fill(shown);
  try {
    const made = await tools.call("POST", "/account/tokens/new", { "X-Scopes": scopes.join(" "), "X-Token-Name": form.elements["token-name"].value.trim() });
    fill(shown, h("p", {}, "Copy it now: it is not shown again."), h("code", { id: "token-new" }, made.token));
    loadTokens(error, tools);
  } catch (e) {
    error.textContent = e.message;
  } finally {
    submit.disabled = false;
  }
}

async function revoke(id, error, tools) {
  fill(error);
  try {
    await tools.call("POST", "/account/tokens/revoke", { "X-Token-Id": String(id) });
  } catch (e) {
    error.textContent = e.message;
  }
  loadTokens(error, tools);
}

function botForm(error, tools) {
  const sure = h("input", { type: "checkbox", id: "bot-sure" });
  const submit = h("button", { id: "bot-upgrade", type: "submit", class: "danger" }, "Make this a bot account");
  return h(
    "form",
    {
      id: "bot-form",
      class: "account-form",
      onsubmit: async (e) => {
        e.preventDefault();
        fill(error);
        if (!sure.checked) {
          error.textContent = "Tick the box first: a bot account is one for good.";
          return;
        }
        submit.disabled = true;
        try {
          await tools.call("POST", "/account/upgrade-to-bot");
          await tools.done(true);
        } catch (err) {
          error.textContent = err.message;
          submit.disabled = false;
        }
      },
    },
    h("p", { class: "warning", id: "bot-warning" }, BOT_WARNING),
    h("div", { class: "row" }, h("label", { class: "check", for: "bot-sure" }, sure, "I understand: this cannot be undone")),
    h("div", { class: "row" }, submit),
  );
}

function deleteForm(me, error, tools) {
  const sure = h("input", { type: "checkbox", id: "delete-sure" });
  const submit = h("button", { id: "account-delete", type: "submit", class: "danger" }, "Delete the account");
  const form = h(
    "form",
    {
      id: "delete-form",
      class: "account-form",
      onsubmit: async (e) => {
        e.preventDefault();
        fill(error);
        if (!sure.checked) {
          error.textContent = "Tick the box first: a deleted account cannot come back.";
          return;
        }
        submit.disabled = true;
        try {
          const headers = me.password ? { Authorization: tools.basic(me.name, form.elements["delete-password"].value) } : {};
          await tools.call("POST", "/account/delete", headers);
          await tools.done(false);
        } catch (err) {
          error.textContent = err.message;
          submit.disabled = false;
        }
      },
    },
    h("p", { class: "warning", id: "delete-warning" }, DELETE_WARNING),
    me.password ? tools.passwordField("delete-password", "Password", "current-password") : h("p", { class: "muted", id: "delete-no-password" }, NO_PASSWORD_DELETE),
    h("div", { class: "row" }, h("label", { class: "check", for: "delete-sure" }, sure, "Delete my account for good")),
    h("div", { class: "row" }, submit),
  );
  return form;
}
