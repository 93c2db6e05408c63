// Passkeys on the page (docs/web.md, "Passkeys"): sign up with a passkey alone, sign in with
// one, and the account panel's list of passkeys (add one, remove one). Each is two requests to
// the node's /account/passkey/... routes: the options (JSON, its binary fields base64url),
// then the browser's answer, as base64url of its JSON in the X-WebAuthn header (requests carry
// no body).

import { agentWords, call, signedIn } from "./accountcalls.js";
import { fill, h } from "./dom.js";
import { panelEl } from "./panel.js";
import { session } from "./state.js";

/** Whether this browser can use passkeys at all. */
export const passkeysHere = () => typeof window.PublicKeyCredential === "function" && !!navigator.credentials;

const toB64url = (buffer) =>
  btoa(Array.from(new Uint8Array(buffer), (b) => String.fromCharCode(b)).join(""))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const fromB64url = (text) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0)).buffer;
const textB64 = (text) => btoa(Array.from(new TextEncoder().encode(text), (b) => String.fromCharCode(b)).join(""));

/** The options as the browser takes them (its binary fields as buffers). */
function creationOptions(json) {
  if (PublicKeyCredential.parseCreationOptionsFromJSON) return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  return { ...json, challenge: fromB64url(json.challenge), user: { ...json.user, id: fromB64url(json.user.id) }, excludeCredentials: (json.excludeCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) })) };
}

function requestOptions(json) {
  if (PublicKeyCredential.parseRequestOptionsFromJSON) return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  return { ...json, challenge: fromB64url(json.challenge), allowCredentials: (json.allowCredentials || []).map((c) => ({ ...c, id: fromB64url(c.id) })) };
}

/** A credential as JSON (`toJSON()` where the browser has it). */
function credentialJSON(c) {
  if (typeof c.toJSON === "function") return c.toJSON();
  const r = c.response;
  const response = { clientDataJSON: toB64url(r.clientDataJSON) };
  if (r.attestationObject) Object.assign(response, { attestationObject: toB64url(r.attestationObject), transports: r.getTransports?.() || [] });
  else Object.assign(response, { authenticatorData: toB64url(r.authenticatorData), signature: toB64url(r.signature), userHandle: r.userHandle ? toB64url(r.userHandle) : null });
  return { id: c.id, rawId: toB64url(c.rawId), type: c.type, response, clientExtensionResults: c.getClientExtensionResults?.() || {} };
}

/** The X-WebAuthn header of a credential. */
const answerHeader = (credential) => ({ "X-WebAuthn": toB64url(new TextEncoder().encode(JSON.stringify(credentialJSON(credential)))) });

/** What the browser says when the person or the authenticator said no. */
function browserWords(e) {
  if (e?.name === "NotAllowedError") return "No passkey was used (cancelled, or it took too long).";
  if (e?.name === "InvalidStateError") return "This device already holds a passkey of this account.";
  return e?.message ? `The browser refused: ${e.message}` : "The browser refused the passkey.";
}

async function create(options) {
  try {
    return await navigator.credentials.create({ publicKey: creationOptions(options) });
  } catch (e) {
    throw Object.assign(new Error(browserWords(e)), { code: "browser" });
  }
}

async function get(options) {
  try {
    return await navigator.credentials.get({ publicKey: requestOptions(options) });
  } catch (e) {
    throw Object.assign(new Error(browserWords(e)), { code: "browser" });
  }
}

/** Make an account named `name` with a new passkey (and `email` to verify, if given), taking
 * the `guest` (its token) over; signed in. Throws an Error whose message is the words to show. */
export async function signUpWithPasskey(name, email, guest) {
  const headers = { "X-Name": textB64(name) };
  if (guest) headers["X-Guest-Token"] = guest;
  const options = await call("POST", "/account/passkey/signup-options", headers);
  const credential = await create(options);
  const sent = { ...answerHeader(credential), "X-Passkey-Name": textB64(agentWords(navigator.userAgent)) };
  if (email) sent["X-Email"] = email;
  return await call("POST", "/account/passkey/signup", sent);
}

/** Sign in with any passkey of this site the browser holds. */
export async function signInWithPasskey() {
  const options = await call("POST", "/account/passkey/signin-options");
  const credential = await get(options);
  return await call("POST", "/account/passkey/signin", answerHeader(credential));
}

const when = (t) => (t ? new Date(t * 1000).toLocaleString() : "never");

/** The account panel's passkeys: listed, each with Remove, and Add a passkey. */
export function passkeySection() {
  const error = h("p", { class: "error", id: "passkeys-error", role: "alert" });
  const list = h("ul", { id: "passkeys", class: "sessions" }, h("li", { class: "muted" }, "Loading…"));
  const add = h("button", { id: "passkey-add", type: "button", onclick: () => addPasskey(add, error) }, "Add a passkey");
  if (!passkeysHere()) add.disabled = true;
  const section = h("section", { id: "passkeys-section" }, h("h3", {}, "Passkeys"), h("p", { class: "muted" }, "Sign in with your fingerprint, face or device PIN instead of a password."), list, error, h("div", { class: "row" }, add));
  loadPasskeys(error);
  return section;
}

async function loadPasskeys(error) {
  let reply;
  try {
    reply = await call("GET", "/account/passkeys");
  } catch (e) {
    if (panelEl("account")) error.textContent = e.message;
    return;
  }
  const list = panelEl("account")?.querySelector("#passkeys");
  if (!list) return;
  const only = !reply.password && reply.passkeys.length === 1;
  fill(
    list,
    reply.passkeys.length
      ? reply.passkeys.map((p) =>
          h(
            "li",
            { dataset: { id: p.id } },
            h("strong", {}, p.name),
            h("br"),
            h("span", { class: "muted" }, `added ${when(p.created_at)} · last used ${when(p.last_used_at)}`),
            " ",
            h("button", { type: "button", class: "passkey-remove", disabled: only, title: only ? "your only way to sign in: add another passkey first" : "", onclick: () => removePasskey(p.id, error) }, "Remove"),
          ),
        )
      : [h("li", { class: "muted" }, "No passkey yet.")],
  );
}

async function addPasskey(button, error) {
  button.disabled = true;
  fill(error);
  try {
    const options = await call("POST", "/account/passkey/add-options");
    const credential = await create(options);
    await call("POST", "/account/passkey/add", { ...answerHeader(credential), "X-Passkey-Name": textB64(agentWords(navigator.userAgent)) });
    loadPasskeys(error);
  } catch (e) {
    error.textContent = e.message;
  } finally {
    button.disabled = false;
  }
}

async function removePasskey(id, error) {
  fill(error);
  try {
    await call("POST", "/account/passkey/remove", { "X-Passkey": id });
  } catch (e) {
    error.textContent = e.message;
  }
  loadPasskeys(error);
}

/** The sign-in or sign-up form's passkey button: `up` signs up (with the form's name and
 * address), else signs in. */
export function passkeyButton(up, form, error) {
  if (!passkeysHere()) return null;
  const button = h("button", { id: up ? "passkey-signup" : "passkey-signin", type: "button" }, up ? "Sign up with a passkey" : "Sign in with a passkey");
  button.onclick = async () => {
    const name = form.elements["account-name"].value.trim();
    if (up && !name) {
      error.textContent = "Choose a name first.";
      form.elements["account-name"].focus();
      return;
    }
    const guest = up ? session.token : null;
    button.disabled = true;
    fill(error);
    try {
      await (up ? signUpWithPasskey(name, form.elements["account-email"]?.value.trim() || "", guest) : signInWithPasskey());
    } catch (e) {
      button.disabled = false;
      error.textContent = e.message;
      return;
    }
    await signedIn(guest, name);
  };
  return button;
}
