// What the tables of runs share (results, leaderboards, history): columns, cells, paging.

import { h } from "../dom.js";
import { formatMs } from "../session.js";
import { button, outcome, plain } from "./parts.js";

/** A table of `rows` (cells: a td, or what goes in one); `mine(i)`: row i is my run. */
export function table(heads, rows, mine = () => false) {
  const th = (t) =>
    h(
      "th",
      {
        scope: "col",
        class: `${/^(time|moves|score|cards|undos|#|rank|rating|streak)$/.test(t) ? "num" : ""}${/^(moves|score|undos)$/.test(t) ? " wide" : ""}`,
      },
      t,
    );
  const td = (x) => (x instanceof Node && x.tagName === "TD" ? x : h("td", {}, x));
  const tr = (cells, i) => h("tr", { class: mine(i) ? "me" : "" }, cells.map(td));
  const head = h("thead", {}, h("tr", {}, heads.map(th)));
  return h("div", "card scroll", h("table", {}, head, h("tbody", {}, rows.map(tr))));
}

export const num = (x) => h("td", "num", x);
/** A figure a phone leaves out (client.css: moves, score and undos under 600 px). */
export const wide = (x) => h("td", "num wide", x);
/** A player's name: one line, cut with an ellipsis where narrow, whole in its title. */
export const nameCell = (name) => h("td", { class: "name", title: name }, name);

/** The columns every table of runs has (results, leaderboards, history), and their cells. */
export const RUN = ["outcome", "time", "moves", "score", "cards"];
export const runCells = (x) => [
  h("td", {}, outcome(x.outcome), x.hinted ? " (hint)" : ""),
  num(formatMs(x.time_ms)),
  wide(x.moves),
  wide(x.score),
  num(`${x.foundations}/52`),
];

// The ranks, then a ghost room's recorded run for comparison (protocol 4.23).
export const ranksAndGhost = (r) =>
  r.ghost ? [...r.ranks, { ...r.ghost, name: `${r.ghost.name} (ghost)`, ghost: true }] : r.ranks;
/** A row's replay button (docs/protocol.md 4.22): the run of `player` in `race`, if stored. */
export const replayCell = (c, race, player) =>
  h(
    "td",
    {},
    race &&
      button("▶", () => c.openReplay(race, player), { class: "plain mini", "aria-label": `replay ${player}'s run` }),
  );

/** `n` pages on from a paged screen's state `st` (of `total` rows), and `ask` for it. */
export function turn(st, n, total, ask) {
  const offset = Math.max(0, st.offset + n * st.limit);
  if (offset !== st.offset && (n < 0 || offset < total)) {
    st.offset = offset;
    ask();
  }
}

/** What the leaderboards and the history share: paging by `page(n)`, and Esc or q back. */
export const pageButtons = (page) => [plain("↑ page", () => page(-1)), plain("page ↓", () => page(1))];
export const back = (c) => plain("Back (Esc)", () => c.close(), "back");
export const pagedKeys = (c, page) => ({
  PageDown: () => page(1),
  PageUp: () => page(-1),
  Escape: () => c.close(),
  q: () => c.close(),
});

export const today = () => new Date().toISOString().slice(0, 10);
export const shiftDay = (date, days) => new Date(Date.parse(`${date}T12:00:00Z`) + days * 86400000).toISOString().slice(0, 10);
