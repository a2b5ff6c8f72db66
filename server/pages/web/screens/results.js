// The results (the terminal's ResultsScreen), and the solver's post-mortem in words.

import { countdownLine } from "../dailyscreens.js";
import { fill, h } from "../dom.js";
import { changeText, playerCell, ratingText, streakText } from "../player.js";
import { headline } from "../session.js";
import { openHistory } from "./history.js";
import { boardsState } from "./leaderboard.js";
import { actions, button, chrome, keyed, plain, plural, rulesText, screen, sender } from "./parts.js";
import { RUN, nameCell, num, ranksAndGhost, replayCell, runCells, table } from "./tables.js";

/** What the solver says of a run, in words (the same sentences as the terminal client). */
export function postmortemText(pm) {
  const n = (k) => `move ${k}`;
  switch (pm.status) {
    case "won":
      return `Won, with ${plural(pm.wasted_total, "wasted move")}: ${pm.kept} kept${pm.par !== null ? ` against a par of ${pm.par}` : ""}.`;
    case "lost":
      return `After ${n(pm.last_winnable + 1)}, ${pm.losing_move}, no win was left; ${pm.line[0]} instead wins.`;
    case "open":
      return `A win was still left at the end: ${pm.line[0]} goes on to win (${pm.line.length} moves).`;
    case "unwinnable":
      return "This deal could not be won at all: the solver proved it.";
    default:
      return `Unknown: the solver could not decide within its budget${pm.last_winnable !== null ? `; a win was still left after ${n(pm.last_winnable)}` : ""}${pm.lost_from !== null ? `; none after ${n(pm.lost_from)}` : ""}.`;
  }
}

export function results(c) {
  const ch = chrome(c);
  const s = c.session;
  const head = h("div", "results-head");
  const body = h("div");
  const leave = sender(c, "leave");
  const rematch = button("Rematch (m)", sender(c, "rematch"), { id: "rematch" });
  // An archive run's "again" plays the same past day again; its board is the day's archive.
  const dailyAgain = () => (s.daily?.archive ? c.askArchive(s.daily.date) : c.send({ t: "daily" }));
  const again = button("Again (a)", dailyAgain, { id: "again" });
  const board = () =>
    c.open(
      boardsState(
        s.isDaily && s.daily ? { date: s.daily.date, archive: !!s.daily.archive } : { code: s.result?.code },
      ),
    );
  const next = countdownLine(c, "results-next-daily");
  const el = screen(
    ch,
    "results",
    h("h1", {}, "Results"),
    head,
    next.el,
    body,
    actions(
      rematch,
      again,
      plain("Leaderboard (b)", board, "leaderboard"),
      plain("History (h)", openHistory(c), "history-btn"),
      plain("Lobby (l)", leave, "lobby"),
    ),
  );
  return {
    el,
    update() {
      ch.update();
      const r = s.result;
      const room = s.room;
      if (!r || !room) return;
      const me = r.ranks.find((x) => x.name === s.me);
      const d = s.isDaily ? s.daily : null;
      fill(
        head,
        h(
          "p",
          { class: "big", id: "headline" },
          headline(r, s.me),
          me?.hinted && h("span", "summary", "  With a hint: ranked after every run without one"),
        ),
        !d &&
          room.max_players > 1 &&
          room.you === "player" &&
          h("p", "summary", "Anyone who raced may ask for a rematch: a new deal, the same room."),
        d &&
          h(
            "p",
            {},
            `Daily deal ${d.date}, attempt ${d.attempt} (${d.archive ? "from the archive: practice, on the day's archive board" : d.practice ? "practice" : "counts for the leaderboard"})`,
            d.par ? ` · par ${d.par} moves` : "",
            s.standing ? ` · ${streakText(s.standing.streak, s.standing.best_streak)}` : "",
          ),
        h(
          "p",
          "deal",
          r.code
            ? ["Game code ", h("code", {}, r.code), ` (${rulesText(room.rules)})`]
            : "The game code stays secret until 00:35 UTC the next day",
        ),
        s.fairness && h("p", { class: s.fairness.good ? "good" : "bad", id: "fairness" }, s.fairness.text),
        me &&
          r.race &&
          h(
            "p",
            { id: "results-pm" },
            h("b", {}, "Post-mortem: "),
            s.postmortem?.race !== r.race ? "working it out…" : (s.postmortem.text ?? postmortemText(s.postmortem)),
          ),
      );
      // A rated race: each runner's new rating and its change (docs/protocol.md 4.27).
      const rated = r.ranks.some((x) => x.rating_change !== null && x.rating_change !== undefined);
      fill(
        body,
        table(
          ["#", "player", ...RUN, ...(rated ? ["rating"] : []), "replay"],
          ranksAndGhost(r).map((x) => [
            num(x.rank),
            x.ghost ? nameCell(x.name) : playerCell(c, x.name, null, false, x.bot),
            ...runCells(x),
            ...(rated ? [num(x.ghost ? "" : `${ratingText(x.rating, false)} ${changeText(x.rating_change)}`.trim())] : []),
            x.ghost ? h("td", {}) : replayCell(c, r.race, x.name),
          ]),
          (i) => r.ranks[i]?.name === s.me,
        ),
      );
      rematch.hidden = !!d || room.you !== "player"; // any racer's, once the race is over (4.13)
      again.hidden = !d;
      next.el.hidden = !d || !next.el.textContent;
    },
    tick() {
      if (s.isDaily) next.tick();
    },
    key: keyed({
      m: () => !s.isDaily && s.room?.you === "player" && c.send({ t: "rematch" }),
      a: () => s.isDaily && dailyAgain(),
      b: board,
      h: openHistory(c),
      l: leave,
      Escape: leave,
    }),
  };
}
