// Small DOM helpers of the page: elements built in one call, children replaced, times shown.

/** An element: `attrs` set (`class`, `style`, `dataset`, `on…` listeners, other
 * attributes; null, undefined and false left out), then the children (text or nodes). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v;
    else if (k.startsWith("on")) listen(el, k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}
export const $ = (sel, root = document) => root.querySelector(sel);

/** An element's listeners set by `h` (type -> function), called through one dispatcher,
 * so that `morph` can hand a kept element the listeners of the state just drawn. */
function listen(el, type, fn) {
  (el._on ||= {})[type] = fn;
  el.addEventListener(type, dispatch);
}
function dispatch(event) {
  this._on?.[event.type]?.call(this, event);
}

/** Make `old` (an element in the page) look and act as `neu` (one just built by `h`),
 * keeping every node that both have in the same place (same tag, same id): a button
 * pressed while the screen is drawn again is still the button the mouse comes up on, so
 * its click is not lost (a page replaced between mouse down and up loses it). */
export function morph(old, neu) {
  if (old.nodeType === Node.TEXT_NODE) {
    if (old.data !== neu.data) old.data = neu.data;
    return;
  }
  for (const { name } of [...old.attributes]) if (!neu.hasAttribute(name)) old.removeAttribute(name);
  for (const { name, value } of [...neu.attributes]) if (old.getAttribute(name) !== value) old.setAttribute(name, value);
  for (const type of Object.keys(old._on || {})) if (!neu._on?.[type]) old.removeEventListener(type, dispatch);
  for (const type of Object.keys(neu._on || {})) old.addEventListener(type, dispatch);
  old._on = neu._on;
  const children = [...neu.childNodes];
  children.forEach((child, i) => {
    const there = old.childNodes[i];
    if (!there) old.append(child);
    else if (sameNode(there, child)) morph(there, child);
    else old.replaceChild(child, there);
  });
  while (old.childNodes.length > children.length) old.lastChild.remove();
}
const sameNode = (a, b) =>
  a.nodeType === b.nodeType && a.nodeName === b.nodeName && (a.nodeType !== Node.ELEMENT_NODE || a.id === b.id);
/** The mark after the name of a player whose hello said `bot` (declared, not detected), or
 * null: a space and a badge that reads "bot" (text, shown by any font: no emoji). `x` is a
 * player's line, a result or a leaderboard entry. */
export const botMark = (x) => (x?.bot ? [" ", h("span", { class: "bot", title: "a bot: a program plays" }, "bot")] : null);
/** The mark after the name of a guest (a player without an account: the server's `guest`
 * on their entry), or null. */
export const guestMark = (x) => (x?.guest ? h("span", { class: "guest-mark", title: "a guest: anyone may take this name" }, " (guest)") : null);
/** Replace an element's children (null, undefined and false are left out). */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
}
export const fmtTime = (s) => {
  if (s === null || s === undefined || !isFinite(s)) return "–";
  s = Math.max(0, Math.floor(s));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
};
