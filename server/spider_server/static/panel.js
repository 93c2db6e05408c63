// A panel over the page (the keys, how to play): one at a time, with a Close button, closed
// by Escape or by a tap outside it too. It lives outside the screen's element, so that a
// screen drawn again leaves it open.

import { $, h } from "./dom.js";

let current = null;

/** Open panel `id` (its title and its content), replacing any other; `onClose` runs when it
 * closes. The Close button takes the focus. */
export function openPanel(id, title, content, onClose = null) {
  closePanel();
  const close = h("button", { id: `${id}-close`, type: "button", class: "close", title: "Close (Esc)", "aria-label": "Close", onclick: () => closePanel() }, "✕ Close");
  const sheet = h("div", { class: "sheet card-panel", id, role: "dialog", "aria-modal": "true", "aria-labelledby": `${id}-title` }, h("div", { class: "sheet-head" }, h("h2", { id: `${id}-title` }, title), close), content);
  const overlay = h("div", { class: "overlay", id: `${id}-overlay`, onpointerdown: (e) => e.target === overlay && (e.preventDefault(), closePanel()) }, sheet);
  document.body.append(overlay);
  current = { id, overlay, onClose, focus: document.activeElement };
  close.focus();
  return sheet;
}

/** Close the open panel, if any (focus goes back where it was). */
export function closePanel() {
  if (!current) return;
  const { overlay, onClose, focus } = current;
  current = null;
  overlay.remove();
  onClose?.();
  if (focus && document.contains(focus) && focus !== document.body) focus.focus();
}

/** The id of the open panel, or null. */
export function openPanelId() {
  return current ? current.id : null;
}

// Escape closes the panel before anything else sees the key
document.addEventListener(
  "keydown",
  (e) => {
    if (!current || e.key !== "Escape") return;
    e.preventDefault();
    e.stopImmediatePropagation();
    closePanel();
  },
  true,
);

/** The panel's element, when `id` is open. */
export const panelEl = (id) => (current?.id === id ? $(`#${id}`) : null);
