// Issue 29's parts of the daily screens (docs/protocol.md 4.28), kept apart from screens.js:
// the countdown to the next daily, playing a past day from the archive, and the deck's
// settings (four colours, suits as letters). Each returns elements and an `update`/`tick`
// that the screen it sits in calls.

import { h } from "./dom.js";
import { countdownText, dayBefore, deck, suitMark } from "./dailydeck.js";

/** A line that counts down to the next daily deal (the screen's tick updates it). */
export function countdownLine(c, id = "next-daily") {
  const el = h("p", { class: "next-daily", id, role: "timer", "aria-live": "off" });
  const tick = () => {
    const text = countdownText(c.now());
    if (el.textContent !== text) el.textContent = text;
    el.hidden = !text;
  };
  tick();
  return { el, tick };
}

/**
 * Play a past day from the archive: a day box and its button. The box starts on the day
 * before the server's today when the client knows it (a daily board's date), else the
 * browser's yesterday; the server refuses a day not in the archive (its code secret).
 */
export function archiveRow(c) {
  const known = c.session.board?.kind === "daily" ? c.session.board.date : null;
  const start = dayBefore(known ?? new Date().toISOString().slice(0, 10));
  const input = h("input", { type: "date", id: "archive-date", value: start, max: start, "aria-label": "Past day" });
  const play = () => c.askArchive(input.value);
  const el = h(
    "form",
    { class: "row", id: "archive-box", onsubmit: (e) => (e.preventDefault(), play()) },
    h("label", { class: "lbl", for: "archive-date" }, "Archive"),
    input,
    h("button", { type: "submit", class: "plain", id: "archive-play" }, "Play that day (practice)"),
  );
  return { el, input, play };
}

/** The deck's settings: two boxes, kept for this player in this browser (dailydeck.js). */
export function deckBox(c) {
  const four = h("input", { type: "checkbox", id: "deck-four", checked: deck.four });
  const letters = h("input", { type: "checkbox", id: "deck-letters", checked: deck.letters });
  const changed = () => {
    deck.four = four.checked;
    deck.letters = letters.checked;
    c.deckChanged();
  };
  four.addEventListener("change", changed);
  letters.addEventListener("change", changed);
  const sample = h("span", { class: "deck-sample", "aria-hidden": "true" });
  const el = h(
    "div",
    { class: "card box", id: "deck-box" },
    h("h2", {}, "Cards"),
    h(
      "div",
      "row",
      h("label", "tick", four, " four-colour deck (♠ black, ♥ red, ♦ blue, ♣ green)"),
      h("label", "tick", letters, " suits as letters (S H D C)"),
      sample,
    ),
  );
  const update = () => {
    four.checked = deck.four;
    letters.checked = deck.letters;
    sample.replaceChildren(
      ...["S", "H", "D", "C"].map((s) =>
        h("span", { class: `pc-mini s-${s}${s === "H" || s === "D" ? " red" : ""}` }, suitMark(s)),
      ),
    );
  };
  update();
  return { el, update };
}
