// A yes/no question (the terminal's ConfirmScreen).

import { h } from "../dom.js";
import { button, dialog, plain, row } from "./parts.js";

/** A yes/no question: y or Enter says yes, n or Esc no (the terminal's ConfirmScreen). */
export function confirm(c, question, yes, no = () => {}) {
  let d = null;
  const answer = (ok) => {
    d.close();
    (ok ? yes : no)();
  };
  d = dialog(
    c,
    [
      h("p", { class: "big", id: "question" }, question),
      row(
        button("Yes (y)", () => answer(true), { id: "yes" }),
        plain("No (n)", () => answer(false), "no"),
      ),
    ],
    { y: yes, Enter: yes, n: no, Escape: no },
  );
  d.querySelector("#yes").focus();
}
