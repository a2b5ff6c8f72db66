// The first visit: a name; a private server: its password (the terminal's NameScreen and
// PasswordScreen).

import { h } from "../dom.js";
import { keep } from "../net.js";
import { NAME_MAX, nameCheck } from "../session.js";
import { chrome, form } from "./parts.js";

function askScreen(c, what) {
  const ch = chrome(c);
  const secret = what === "password";
  const input = h("input", {
    id: `ask-${what}`,
    type: secret ? "password" : "text",
    // A name longer than 20 is refused with a word, not cut as it is typed (64: the wire's).
    maxlength: secret ? 128 : 64,
    autocomplete: secret ? "current-password" : "nickname",
    required: true,
    "aria-describedby": `ask-${what}-why`,
  });
  const problem = h("p", { class: "problem", role: "alert" });
  const count = h("span", { class: "summary count", id: "ask-count", "aria-live": "polite" });
  const counted = () => {
    const check = nameCheck(input.value);
    count.textContent = input.value ? check.text : `1-${NAME_MAX} characters`;
    count.classList.toggle("bad", input.value !== "" && !check.ok);
    return check;
  };
  if (!secret) input.addEventListener("input", counted);
  const submit = () => {
    const value = secret ? input.value : input.value.trim();
    const check = secret ? { ok: !!value, text: "type the password" } : counted();
    if (!check.ok) {
      c.askProblem = check.text;
      c.askCode = null;
      problem.textContent = check.text;
      input.focus();
      return;
    }
    if (secret) keep.set("password", value);
    else c.link.name = value;
    c.ask = null;
    c.askProblem = "";
    c.link.start();
    c.render();
  };
  const box = form(
    { class: "card ask" },
    submit,
    h("h1", {}, secret ? "This server is private" : "Your name"),
    !secret &&
      h(
        "p",
        { class: "intro" },
        "Yukon Race: Yukon solitaire as a race. Everyone plays the same deal at once; the first to bring all 52 cards home wins.",
      ),
    problem,
    h(
      "p",
      { id: `ask-${what}-why`, class: "summary" },
      secret
        ? "Ask whoever runs it for the password. This browser keeps it for this server."
        : `${c.invite ? `You are invited to room ${c.invite}. ` : ""}Others see this name (1-${NAME_MAX} characters). It is yours on this server from now on: this browser keeps it, so the next visit needs no name.`,
    ),
    h("label", { for: `ask-${what}` }, secret ? "Password" : "Name"),
    " ",
    input,
    " ",
    h("button", { type: "submit" }, secret ? "Go" : "Play"),
    !secret && [" ", count],
    h(
      "p",
      { class: "summary", id: "ask-elsewhere" },
      "Is that name yours on another device? There, choose “Use this name on another device” in the lobby and open its link here.",
    ),
  );
  const elsewhere = box.querySelector("#ask-elsewhere");
  return {
    el: h("section", "screen", ch.link, box, ch.status),
    focus: () => input.focus(),
    update() {
      ch.update();
      problem.textContent = c.askProblem;
      if (elsewhere) elsewhere.hidden = c.askCode !== "name_taken";
      if (!secret) counted();
    },
  };
}

export const name = (c) => askScreen(c, "name");
export const password = (c) => askScreen(c, "password");
