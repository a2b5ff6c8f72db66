// The link that carries this name to another device (the terminal's NameLinkScreen).

import { h } from "../dom.js";
import { appBase, keep } from "../net.js";
import { button, dialog, plain, row } from "./parts.js";

/**
 * The link that takes this name to another device (#token=...: a fragment, so it never
 * reaches a server's logs). Whoever has it plays as this name: it is said so.
 */
export function nameLink(c) {
  const url = `${location.origin}${appBase()}#token=${encodeURIComponent(keep.get("token") ?? "")}`;
  const input = h("input", { id: "name-link-url", readonly: true, value: url, "aria-label": "Your name's link" });
  const said = h("span", { class: "summary", role: "status" });
  const copy = async () => {
    input.select();
    let ok = true;
    try {
      await navigator.clipboard.writeText(url);
    } catch {
      ok = document.execCommand?.("copy") ?? false;
    }
    said.textContent = ok ? "copied" : "select the link and copy it";
  };
  const d = dialog(
    c,
    [
      h("h2", {}, `Play as ${c.session.me ?? "you"} on another device`),
      h("p", {}, "Open this link on the other device (a phone, another browser): it plays there under this name."),
      h(
        "p",
        "bad",
        "Anyone with this link is you: send it only to yourself, and never post it.",
      ),
      h("div", "row invite", input),
      row(button("Copy link", copy, { id: "name-link-copy" }), said, plain("Close", () => d.close(), "name-link-close")),
    ],
    { Escape: () => {} },
  );
  input.select();
}
