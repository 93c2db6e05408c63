// E-mail on the page (docs/web.md, "E-mail"), offered only where the node sends mail
// (`/account/config`): the account panel's address (verified by a link mailed to it), the
// sign-in form's "Forgot your password?", and the links of those mails when they are opened:
// `/#verify=<token>` verifies the address, `/#reset=<token>` asks for a new password. The
// token goes to the node in the X-Mail-Token header, and leaves the address bar at once.

import { accountConfig, b64, call, PASSWORD_RULES, passwordField, signedIn } from "./accountcalls.js";
import { fill, h } from "./dom.js";
import { openPanel } from "./panel.js";

const emailInput = (id, value = "") => h("input", { id, name: id, type: "email", autocomplete: "email", maxlength: 254, value, spellcheck: "false", autocapitalize: "off" });

/** The sign-up form's optional address (null where the node sends no mail). */
export function signupEmailRow(offered) {
  if (!offered) return null;
  return h("div", { class: "row", id: "account-email-row" }, h("label", { for: "account-email" }, "E-mail (optional)"), emailInput("account-email"));
}

/** The account panel's address: the verified one, and a form to verify another (an empty
 * section where the node sends no mail). */
export function emailSection(me) {
  const section = h("section", { id: "email-section" });
  accountConfig().then((config) => {
    if (!config.email) return;
    const done = h("p", { class: "muted", id: "email-done", role: "status" });
    const error = h("p", { class: "error", id: "email-error", role: "alert" });
    const submit = h("button", { id: "email-submit", type: "submit" }, "Send a link");
    const form = h(
      "form",
      {
        id: "email-form",
        class: "account-form",
        onsubmit: async (e) => {
          e.preventDefault();
          fill(done);
          fill(error);
          submit.disabled = true;
          try {
            const reply = await call("POST", "/account/email", { "X-Email": form.elements["email-address"].value.trim() });
            done.textContent = `A link is on its way to ${reply.email}: open it to confirm the address.`;
          } catch (err) {
            error.textContent = err.message;
          } finally {
            submit.disabled = false;
          }
        },
      },
      h("div", { class: "row" }, h("label", { for: "email-address" }, me?.email ? "New address" : "Address"), emailInput("email-address"), submit),
    );
    fill(
      section,
      h("h3", {}, "E-mail"),
      h("p", { id: "email-current" }, me?.email ? ["Verified: ", h("strong", {}, me.email)] : "No address yet: with one, a forgotten password can be reset."),
      form,
      done,
      error,
    );
  });
  return section;
}

/** The sign-in form's "Forgot your password?" (null where the node sends no mail). */
export function forgotButton(offered) {
  if (!offered) return null;
  return h("button", { id: "account-forgot", type: "button", onclick: openForgot }, "Forgot your password?");
}

/** A panel that asks for the address a reset link goes to. */
export function openForgot() {
  const done = h("p", { class: "muted", id: "forgot-done", role: "status" });
  const error = h("p", { class: "error", id: "forgot-error", role: "alert" });
  const submit = h("button", { id: "forgot-submit", type: "submit", class: "primary" }, "Send a link");
  const form = h(
    "form",
    {
      id: "forgot-form",
      class: "account-form",
      onsubmit: async (e) => {
        e.preventDefault();
        fill(done);
        fill(error);
        submit.disabled = true;
        try {
          await call("POST", "/account/password/forgot", { "X-Email": form.elements["forgot-email"].value.trim() });
          done.textContent = "If an account has verified this address, a link to reset its password is on its way.";
        } catch (err) {
          error.textContent = err.message;
        } finally {
          submit.disabled = false;
        }
      },
    },
    h("p", {}, "The link is mailed to the address your account verified."),
    h("div", { class: "row" }, h("label", { for: "forgot-email" }, "E-mail"), emailInput("forgot-email")),
    done,
    error,
    h("div", { class: "row" }, submit),
  );
  openPanel("account-forgot-panel", "Forgot your password?", form);
  form.elements["forgot-email"].focus();
}

function openReset(token) {
  const error = h("p", { class: "error", id: "reset-error", role: "alert" });
  const submit = h("button", { id: "reset-submit", type: "submit", class: "primary" }, "Set the password");
  const form = h(
    "form",
    {
      id: "reset-form",
      class: "account-form",
      onsubmit: async (e) => {
        e.preventDefault();
        fill(error);
        submit.disabled = true;
        let reply;
        try {
          reply = await call("POST", "/account/password/reset", { "X-Mail-Token": token, "X-New-Password": b64(form.elements["reset-password"].value) });
        } catch (err) {
          submit.disabled = false;
          error.textContent = err.message;
          return;
        }
        await signedIn(null, reply.name);
      },
    },
    h("p", {}, "Choose a new password. Every browser and program signed in to the account is signed out."),
    passwordField("reset-password", "New password", "new-password"),
    h("p", { class: "muted" }, PASSWORD_RULES),
    error,
    h("div", { class: "row" }, submit),
  );
  openPanel("account-reset", "A new password", form);
  form.elements["reset-password"].focus();
}

async function verify(token) {
  const said = h("p", { id: "verify-said", role: "status" }, "Confirming your address…");
  openPanel("account-verify", "Your e-mail address", said);
  try {
    const reply = await call("POST", "/account/email/verify", { "X-Mail-Token": token });
    fill(said, "Your address ", h("strong", {}, reply.email), " is confirmed.");
  } catch (err) {
    said.className = "error";
    said.textContent = err.message;
  }
}

/** Open the link of a mail, if the page was opened from one (`#verify=`, `#reset=`). */
export function openMailLink() {
  const m = /^#(verify|reset)=([A-Za-z0-9_-]{20,100})$/.exec(location.hash);
  if (!m) return;
  history.replaceState(null, "", location.pathname + location.search);
  if (m[1] === "verify") verify(m[2]);
  else openReset(m[2]);
}
