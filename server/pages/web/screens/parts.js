// What every screen is built of: the chrome (connection state, status line), buttons and
// their keys, forms, badges, a dialog, and the rules' names.

import { fill, h } from "../dom.js";

export const VARIANTS = [
  ["C", "Classic"],
  ["R", "Relaxed"],
  ["S", "Russian"],
  ["A", "Alaska"],
  ["M", "Moosehide"],
];
export const OPTIONS = [
  ["E", "open spaces"],
  ["G", "groups"],
  ["T", "take-back"],
];
/** Time limits, in seconds. */
export const TIMES = [300, 600, 900, 1800, 3600];
const GAME_CODE = /^YU1-[CRSAM]E?G?T?-([A-Z]{7}|[A-Z2-7]{26})$/;

export function rulesText(rules) {
  const v = VARIANTS.find(([k]) => k === rules[0]);
  const opts = OPTIONS.filter(([k]) => rules.slice(1).includes(k)).map(([, t]) => t);
  return [v ? v[1] : rules, ...opts].join(", ");
}

/** The connection's state and the status line, shared by every screen. */
export function chrome(c) {
  const link = h("p", "link");
  const status = h("p", { class: "status", "aria-hidden": "true" });
  return {
    link,
    status,
    update() {
      const st = c.linkState;
      link.className = `link ${st.kind}`;
      link.hidden = st.kind === "idle"; // nothing connects yet: nothing to say
      link.textContent = st.kind === "online" ? `● ${st.text}` : `○ ${st.text}`;
      const s = c.session.status;
      status.className = `status ${s.kind}`;
      status.textContent = s.text;
    },
  };
}

/**
 * A label whose key ("Undo (u)") is marked apart, so that a touch screen, which has no
 * keys, shows only "Undo" (client.css hides .kbd under pointer: coarse).
 */
export function keyLabel(text) {
  const m = /^(.*\S) (\([^()]+\))$/.exec(text);
  return m ? [m[1], h("span", "kbd", ` ${m[2]}`)] : text;
}

/** Set a button's label (with its key marked apart). */
export function setLabel(el, text) {
  if (el.dataset.label !== text) {
    el.dataset.label = text;
    fill(el, keyLabel(text));
  }
}

export function button(text, onclick, extra = {}) {
  return h("button", { type: "button", onclick, ...extra }, keyLabel(text));
}

/** Most buttons are secondary ("plain"): only a screen's main action stands out. */
export const plain = (text, onclick, id, label) => button(text, onclick, { id, class: "plain", "aria-label": label });

/** A handler that sends a message of type `t` (leave, start, rematch, daily). */
export const sender = (c, t) => () => c.send({ t });
export const row = (...children) => h("div", "row", ...children);
export const actions = (...children) => h("div", "row actions", ...children);

/** A screen: the connection's state above its content, the status line below. */
export const screen = (ch, name, ...content) => h("section", { class: `screen ${name}` }, ch.link, ...content, ch.status);

/** A screen's `key` from a table of keys; true when `k` is one of them (it acted). */
export const keyed = (table) => (k) => {
  const act = table[k];
  if (act) act();
  return !!act;
};

/** A form that only calls `submit` (the page never leaves for another). */
export const form = (props, submit, ...children) =>
  h("form", { ...props, onsubmit: (e) => (e.preventDefault(), submit()) }, ...children);

/** A box to type a game code in; a label for a box. */
export const codeInput = (id, label) =>
  h("input", { id, placeholder: "YU1-C-AAAAAAB", maxlength: 48, "aria-label": label, autocomplete: "off" });
export const lbl = (id, text) => h("label", { class: "lbl", for: id }, text);

/** A typed game code, upper-cased; null, said on the status line, when it is not one. */
export function gameCode(c, text) {
  const code = text.trim().toUpperCase();
  if (GAME_CODE.test(code)) return code;
  c.session.say(`game code: ${code} is not a code like YU1-C-AAAAAAB`, "error");
  c.render();
  return null;
}

/** "1 player", "3 players". */
export const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
export const badge = (kind, text) => h("span", { class: `badge ${kind}` }, text);
export const outcome = (state) => badge(state, state === "timeout" ? "out of time" : state);
export const away = (p) => (p.connected ? null : badge("abandoned", "away"));

export function dialog(c, content, keys) {
  const d = h("dialog", "card dlg", content);
  d.addEventListener("keydown", (e) => {
    const act = keys[e.key];
    if (act) {
      e.preventDefault();
      e.stopPropagation();
      d.close();
      act();
    }
  });
  d.addEventListener("close", () => {
    d.remove();
    c.screen?.focus?.();
  });
  document.body.append(d);
  d.showModal();
  return d;
}
