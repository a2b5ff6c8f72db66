// The race (the terminal's RaceScreen): the board, the clock and every runner's standing.

import { BoardView } from "../board.js";
import { fill, h } from "../dom.js";
import { nameRated } from "../player.js";
import { formatMs, listed } from "../session.js";
import { confirm } from "./confirm.js";
import { help } from "./help.js";
import { actions, away, button, chrome, outcome, plain, rulesText } from "./parts.js";

export function standingsEl(c) {
  const list = h("ol", "standings");
  // A runner's seat in the room: their rating beside the name (docs/protocol.md 4.27).
  const seat = (name) => c.session.room?.players.find((x) => x.name === name) ?? {};
  return {
    el: h("aside", { class: "card side", "aria-label": "Standings" }, h("h2", {}, "Standings"), list),
    update() {
      const s = c.session;
      fill(
        list,
        s
          .standings()
          .map((p) =>
            h(
              "li",
              p.ghost ? "ghost" : p.name === s.me ? "me" : "",
              h(
                "span",
                "who",
                h(
                  "span",
                  { class: "pname", title: p.name },
                  p.ghost
                    ? `${p.name} (ghost)`
                    : [
                        ...nameRated(p.name, seat(p.name).rating, seat(p.name).provisional),
                        seat(p.name).bot && " [BOT]",
                      ],
                ),
                !p.ghost && p.name === s.me && h("span", "summary", "(you)"),
              ),
              " ",
              outcome(p.state),
              away(p),
              h("span", { class: "bar", "aria-hidden": "true" }, h("span", { class: "fill", "data-n": p.foundations })),
              h("span", "figs", figs(p, "mv") + (p.time_ms !== null ? ` · ${formatMs(p.time_ms)}` : "")),
            ),
          ),
      );
      for (const bar of list.querySelectorAll(".fill")) bar.style.width = `${(Number(bar.dataset.n) * 100) / 52}%`;
    },
  };
}

/** A runner's figures: "12/52 home · 340 pts · 57 mv". */
const figs = (x, moves) => `${x.foundations}/52 home · ${x.score} pts · ${x.moves} ${moves}`;

export function raceHead(c) {
  const el = h("div", "race-head");
  const clock = h("span", { class: "clock", role: "timer", "aria-label": "race clock" });
  return {
    el,
    update() {
      const s = c.session;
      const r = s.room;
      const race = s.race;
      const d = s.isDaily ? s.daily : null;
      fill(
        el,
        h(
          "span",
          "where",
          d
            ? `Daily ${d.date} · attempt ${d.attempt} (${d.archive ? "archive, practice" : d.practice ? "practice" : "counts"})${d.par ? ` · par ${d.par}` : ""}`
            : `Room ${r?.room ?? ""}`,
          r ? ` · ${rulesText(r.rules)}` : "",
        ),
        clock,
        race && h("span", "figs", figs(race, "moves"), race.state !== "playing" && [" · ", outcome(race.state)]),
        // A secret deal's commitment, for anyone who wants to check it against the code later.
        r?.commitment &&
          h("span", { class: "figs commit", title: r.commitment }, `commitment ${r.commitment.slice(0, 12)}…`),
      );
      this.tick();
    },
    tick() {
      const ms = c.session.clockMs(c.now());
      clock.textContent = ms === null ? "" : formatMs(ms);
    },
  };
}

export function race(c) {
  const ch = chrome(c);
  const s = c.session;
  const head = raceHead(c);
  const acts = {
    click: (source, card) => (source === 0 ? s.clickDest("F") : s.clickCard(source, card, c.now())),
    double: (source, card) => s.double(source, card),
    dest: (dest) => s.clickDest(dest),
    drop: (source, card, dest) => s.drop(source, card, dest),
  };
  const board = new BoardView((what, ...args) => c.send(...(acts[what]?.(...args) ?? [])));
  // Read when the board takes the focus: how to play it without a mouse.
  const how = h("p", { id: "board-keys", class: "sr-only" }, "1 to 7: hold a column's card, or drop the held one there; arrows: deeper or higher; f: home; Escape: put it back; u: undo; ?: every key");
  board.el.setAttribute("aria-describedby", "board-keys");
  const stand = standingsEl(c);
  const undo = plain("Undo (u)", () => c.send(...s.undo()), "undo");
  const hint = plain("Hint (h)", () => c.send(...s.askHint()), "hint");
  const resign = plain("Resign (r)", () => askResign(), "resign");
  const leave = plain("Leave (l)", () => doLeave(), "leave");
  const keysBtn = plain("Keys (?)", () => help(c), "keys", "Keys");
  keysBtn.classList.add("kbd-only");
  // Every card face up: the server may play the rest for me (protocol: `finish`).
  const finish = button("Finish (a)", () => c.send(...s.finish()), { id: "finish" });
  const waiting = h("p", { class: "note", id: "waiting" });
  const askResign = () => {
    if (s.race && !s.raceDone()) confirm(c, "Resign this race?", () => c.send(...s.resign()));
  };
  const doLeave = () => {
    if (s.raceDone() || !s.race) c.send({ t: "leave" });
    else {
      s.say("you are racing: resign first (r), then leave", "error");
      c.render();
    }
  };
  // The actions sit right under the board, so that on a phone the standings come after
  // them, never between.
  // The status line too (a refusal's reason is read next to the buttons).
  const el = h(
    "section",
    { class: "screen race" },
    ch.link,
    how,
    head.el,
    h(
      "div",
      "race-body",
      h("div", "race-main", board.el, actions(finish, undo, hint, resign, leave, keysBtn), waiting, ch.status),
      stand.el,
    ),
  );
  const keys = {
    f: () => s.pressFoundation(),
    ArrowUp: () => s.step(1),
    k: () => s.step(1),
    ArrowDown: () => s.step(-1),
    j: () => s.step(-1),
    Enter: () => s.tap(c.now()),
    " ": () => s.tap(c.now()),
    Escape: () => s.cancel(),
    u: () => s.undo(),
    h: () => s.askHint(),
    a: () => s.finish(),
    r: askResign,
    l: doLeave,
  };
  return {
    el,
    tick: () => head.tick(),
    resize: () => board.layout(),
    focus: () => board.el.focus({ preventScroll: true }),
    update(msg) {
      ch.update();
      head.update();
      if (s.race && (!msg || msg.t !== "progress" || board.el.dataset.seq !== String(s.race.lastSeq)))
        board.render(s.race);
      stand.update();
      const done = s.raceDone();
      // Done (won, say) while others race: nothing to undo or hint, only to wait.
      undo.hidden = !s.undoAllowed || done;
      hint.hidden = !s.hintsAllowed || done;
      finish.hidden = done || !s.race?.canFinish();
      finish.disabled = s.race?.finishing !== null && s.race?.finishing !== undefined;
      resign.hidden = done;
      leave.hidden = !done;
      waiting.hidden = !done || !!s.result;
      if (done) {
        const others = s.standings().filter((p) => !p.ghost && p.name !== s.me && p.state === "playing");
        waiting.textContent = others.length
          ? `Your race is over: waiting for the others (${listed(others.map((p) => p.name))})`
          : "Your race is over: waiting for the others";
      }
    },
    key(k) {
      const act = /^[1-7]$/.test(k) ? () => s.pressColumn(Number(k)) : keys[k];
      if (act) c.send(...(act() ?? []));
      return !!act;
    },
  };
}
