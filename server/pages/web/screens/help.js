// The keys and gestures (the terminal's HelpScreen).

import { h } from "../dom.js";
import { button, dialog, row } from "./parts.js";

const HELP = [
  ["Racing", ""],
  ["drag", "a face-up card, with the cards on it, onto a column or a foundation"],
  ["click", "a card to hold it, then a column or a foundation; legal places light up"],
  ["double-click", "(or double-tap) a card: home if it can go, else the longest column that takes it"],
  ["1-7", "hold the exposed card of a column; holding a card, drop it there (its own column: deeper)"],
  ["↑ ↓ k j", "hold a deeper / higher face-up card of the column"],
  ["f", "the held card to its foundation"],
  ["Enter, Space", "tap: the held card home; twice quickly: to a column"],
  ["Esc", "put the card back"],
  ["u", "undo"],
  ["a", "finish: every card face up, the server plays the rest"],
  ["h", "a hint, in a room that gives them (your run then ranks last)"],
  ["r", "resign"],
  ["l", "leave the room (back to the lobby)"],
  ["Lobby", ""],
  ["q", "quick race: enter (or leave) the public pool"],
  ["n j w", "new room, join, watch"],
  ["d", "today's daily deal"],
  ["l h", "leaderboards, your history"],
  ["Room", ""],
  ["Space", "ready / not ready"],
  ["s", "start (the host)"],
  ["Results", ""],
  ["m", "rematch (anyone in the room)"],
  ["a", "the daily deal again (practice)"],
  ["b", "the leaderboard"],
  ["Leaderboards", ""],
  ["← → t y", "the day before, after, today; your row"],
  ["r p", "the day's archive board; play that day from the archive (practice)"],
  ["▶", "a row's replay (results, boards, history)"],
  ["Replay", ""],
  ["← → Home End", "one action, the start, the end; g a move number"],
  ["Space s", "play / pause; speed 1x 4x 16x"],
  ["j c", "the losing move; copy the link"],
  ["r", "race this run as a ghost (or a board row's Race)"],
  ["Everywhere", ""],
  ["Tab, Shift+Tab", "the next, the previous control; Enter or Space presses a button"],
  ["Esc", "out of a text box, back to the keys (a race needs no mouse: 1-7, ↑ ↓, f, Enter)"],
  ["?", "this help; Esc closes it"],
];

export function help(c) {
  const d = dialog(
    c,
    [
      h("h2", {}, "Keys"),
      h(
        "dl",
        "keys",
        HELP.map(([k, t]) => (t ? [h("dt", {}, k), h("dd", {}, t)] : h("dt", "sect", k))),
      ),
      row(button("Close", () => d.close(), { id: "close-help" })),
    ],
    { "?": () => {}, Escape: () => {}, q: () => {} },
  );
}
