// DOM from plain calls, no framework: h("button", {class: "x", onclick}, "text"). Text goes
// in as text nodes (player names are whatever players typed), and no style attribute is
// written: the page's CSP forbids inline style (element.style it allows).

/**
 * An element; `props` its attributes (null, undefined and false leave one out, true writes
 * it empty), or a string: its class. Children are nodes, text, or arrays of them.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  if (typeof props === "string") props = { class: props };
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else if (key === "value" || key === "checked") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  add(el, children);
  return el;
}

function add(el, children) {
  for (const child of children) {
    if (Array.isArray(child)) add(el, child);
    else if (child !== null && child !== undefined && child !== false) {
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }
}

/** Replace everything inside `el`. */
export function fill(el, ...children) {
  el.replaceChildren();
  add(el, children);
  return el;
}
