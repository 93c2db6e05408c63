// Small DOM helpers of the page: elements built in one call, children replaced, times shown.

/** An element: `attrs` set (`class`, `style`, `dataset`, `on…` listeners, other
 * attributes; null, undefined and false left out), then the children (text or nodes). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") el.className = v;
    else if (k === "style") el.style.cssText = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
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
/** The mark after the name of a player whose hello said `bot` (declared, not detected), or
 * null. `x` is a player's line, a result or a leaderboard entry. */
export const botMark = (x) => (x?.bot ? h("span", { class: "bot", title: "a bot: a program plays", "aria-label": "bot" }, " 🤖") : null);
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
