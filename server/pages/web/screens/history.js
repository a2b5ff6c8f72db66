// A player's own history of races (the terminal's HistoryScreen).

import { fill, h } from "../dom.js";
import { formatMs } from "../session.js";
import { actions, chrome, keyed, plural, screen } from "./parts.js";
import { RUN, back, num, pageButtons, pagedKeys, replayCell, runCells, table, turn, wide } from "./tables.js";

export const openHistory = (c) => () => c.open({ kind: "history", offset: 0, limit: 20 });

const WHEN = { month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" };

export function history(c) {
  const ch = chrome(c);
  const st = c.overlay;
  const s = c.session;
  const head = h("p", "deal");
  const body = h("div");
  const ask = () => {
    s.history = null;
    c.send({ t: "history", offset: st.offset, limit: st.limit });
  };
  const page = (n) => turn(st, n, s.history?.games ?? 0, ask);
  const el = screen(ch, "history", h("h1", {}, "Your races"), head, body, actions(...pageButtons(page), back(c)));
  queueMicrotask(ask); // once this screen is the one shown
  return {
    el,
    update() {
      ch.update();
      const p = s.history;
      if (!p) {
        head.textContent = "loading…";
        fill(body);
        return;
      }
      head.textContent = `${plural(p.games, "race")} · ${p.wins} won${p.best_time_ms !== null ? ` · best ${formatMs(p.best_time_ms)}` : ""}${p.games > p.rows.length ? ` · ${p.offset + 1}-${Math.min(p.games, p.offset + p.rows.length)} of ${p.games}` : ""}`;
      fill(
        body,
        p.rows.length
          ? table(
              ["when", "race", "rank", ...RUN, "undos", "replay"],
              p.rows.map((r) => [
                new Date(r.finished_ms).toLocaleString([], WHEN),
                r.date ? `daily ${r.date}${r.practice ? " (practice)" : ""}` : r.room ? `room ${r.room}` : "a race",
                num(`${r.rank}/${r.players}`),
                ...runCells(r),
                wide(r.undos),
                replayCell(c, r.race, s.me),
              ]),
            )
          : h("p", "summary", p.offset ? "no more races" : "no races yet"),
      );
    },
    key: keyed({ ...pagedKeys(c, page), ArrowRight: () => page(1), ArrowLeft: () => page(-1) }),
  };
}
