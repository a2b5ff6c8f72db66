// The leaderboards (the terminal's LeaderboardScreen): the daily, a deal's, the archive.

import { dayBefore } from "../dailydeck.js";
import { countdownLine } from "../dailyscreens.js";
import { fill, h } from "../dom.js";
import { playerCell } from "../player.js";
import { actions, button, chrome, codeInput, form, gameCode, keyLabel, keyed, plain, plural, row, screen, setLabel } from "./parts.js";
import { RUN, back, num, pageButtons, pagedKeys, replayCell, runCells, shiftDay, table, today, turn, wide } from "./tables.js";

export function boardsState({ date = null, code = null, archive = false } = {}) {
  const board = code ? "deal" : archive ? "archive" : "daily";
  return { kind: "boards", board, date, code, offset: 0, around: false, limit: 20 };
}
export const openBoards = (c) => () => c.open(boardsState());

export function boards(c) {
  const ch = chrome(c);
  const st = c.overlay;
  const s = c.session;
  const head = h("div", "board-head");
  const body = h("div");
  const codeIn = codeInput("board-code", "Game code");
  const ask = () => {
    const msg = { t: "board", kind: st.board, offset: st.offset, limit: st.limit, around: st.around };
    if (st.board === "archive") st.date = st.date ?? dayBefore(s.board?.date ?? today());
    if (st.board !== "deal") {
      if (st.date) msg.date = st.date;
    } else msg.code = st.code;
    st.around = false;
    s.board = null;
    c.send(msg);
  };
  const matches = (p) =>
    p && p.kind === st.board && (st.board !== "deal" ? !st.date || p.date === st.date : p.code === st.code);
  // Issue 29: a day's archive board beside its daily board, and playing the day (4.28).
  const archiveBoard = () => {
    if (st.board === "deal") return;
    st.board = st.board === "archive" ? "daily" : "archive";
    st.offset = 0;
    ask();
  };
  const playDay = () => st.board !== "deal" && st.date && c.askArchive(st.date);
  const next = countdownLine(c, "boards-next-daily");
  const archiveBtn = plain("archive (r)", archiveBoard, "archive-board");
  const playBtn = plain("play this day (p)", playDay, "archive-day");
  const day = (n) => {
    if (st.board === "deal") return;
    st.date = shiftDay(st.date ?? today(), n);
    st.offset = 0;
    ask();
  };
  const page = (n) => turn(st, n, matches(s.board) ? s.board.total : 0, ask);
  const todayBoard = () => {
    Object.assign(st, { board: "daily", date: null, code: null, offset: 0 });
    ask();
  };
  const mine = () => {
    st.around = true;
    ask();
  };
  const show = () => {
    const code = gameCode(c, codeIn.value);
    if (!code) return;
    Object.assign(st, { board: "deal", code, offset: 0 });
    codeIn.blur();
    ask();
  };
  const el = screen(
    ch,
    "boards",
    h("h1", {}, "Leaderboards"),
    head,
    next.el,
    row(
      plain("← day", () => day(-1), "prev-day"),
      plain("today (t)", todayBoard),
      plain("day →", () => day(1), "next-day"),
      plain("your row (y)", mine, "mine"),
      archiveBtn,
      playBtn,
      ...pageButtons(page),
    ),
    form({ class: "row" }, show, h("label", { class: "lbl", for: "board-code" }, keyLabel("Game code (c)")), codeIn, h("button", { type: "submit" }, "Show")),
    body,
    actions(back(c)),
  );
  queueMicrotask(ask); // once this screen is the one shown
  return {
    el,
    update() {
      ch.update();
      const p = s.board;
      const ok = matches(p);
      if (ok && st.board === "daily" && !st.date) st.date = p.date;
      if (ok) st.offset = p.offset;
      // A day whose code is public is in the archive: its archive board, and play it.
      archiveBtn.hidden = st.board === "deal";
      setLabel(archiveBtn, st.board === "archive" ? "daily board (r)" : "archive (r)");
      playBtn.hidden = !(ok && st.board !== "deal" && p.code);
      fill(
        head,
        h(
          "p",
          { class: "deal", id: "board-title" },
          st.board === "daily"
            ? `Daily deal ${st.date ?? "today"}`
            : st.board === "archive"
              ? `Archive of ${st.date}: best practice runs (never on the day's board)`
              : `Game code ${st.code}`,
          ok && ` · ${plural(p.total, "player")}`,
          ok &&
            st.board !== "deal" && [
              p.par ? ` · par ${p.par}` : "",
              p.code ? [" · ", h("code", {}, p.code)] : " · code secret until the day is over",
            ],
        ),
        ok &&
          p.commitment &&
          h(
            "p",
            "summary",
            "Commitment ",
            h("code", "hash", p.commitment),
            p.salt && [", salt ", h("code", "hash", p.salt)],
          ),
      );
      if (!ok) {
        fill(body, h("p", "summary", "loading…"));
        return;
      }
      const rows = [...p.rows];
      const you = p.you;
      const onPage = you && rows.some((r) => r.name === you.name && r.rank === you.rank);
      if (you && !onPage) rows.push(you);
      fill(
        body,
        rows.length
          ? table(
              ["#", "player", ...RUN, "undos", ...(p.kind === "daily" ? ["streak"] : []), "replay", "race"],
              rows.map((r) => [
                num(r.rank),
                playerCell(c, r.name, r.rating, false),
                ...runCells(r),
                wide(r.undos),
                ...(p.kind === "daily" ? [num(r.streak ?? "")] : []),
                replayCell(c, r.race, r.name),
                r.race ? raceButton(c, r) : "",
              ]),
              (i) => you && rows[i].name === you.name,
            )
          : h("p", "summary", "nobody on this board yet"),
      );
    },
    tick: next.tick,
    key: keyed({
      ArrowLeft: () => day(-1),
      ArrowRight: () => day(1),
      r: archiveBoard,
      p: playDay,
      t: todayBoard,
      y: mine,
      c: () => codeIn.focus(),
      ...pagedKeys(c, page),
    }),
  };
}

// A board row's run, raced alone with the run as a ghost (protocol 4.23): its room replaces the board.
function raceButton(c, r) {
  const race = () => c.send({ t: "ghost", race: r.race, player: (c.ghostAsked = r.name) });
  return button("Race", race, { class: "plain", title: `race ${r.name}'s run as a ghost` });
}
