// The lobby (the terminal's LobbyScreen): quick play, a room, the daily, the boards.

import { archiveRow, countdownLine, deckBox } from "../dailyscreens.js";
import { h } from "../dom.js";
import { openPlayer, ratingText, streakText } from "../player.js";
import { quickBox } from "../quick.js";
import { openHistory } from "./history.js";
import { openBoards } from "./leaderboard.js";
import { nameLink } from "./name_link.js";
import { OPTIONS, TIMES, VARIANTS, button, chrome, codeInput, form, gameCode, keyLabel, keyed, lbl, plain, row, screen } from "./parts.js";

export function lobby(c) {
  const ch = chrome(c);
  const variant = h(
    "select",
    { id: "variant", "aria-label": "Variant" },
    VARIANTS.map(([k, t]) => h("option", { value: k }, `${k} ${t}`)),
  );
  const opts = OPTIONS.map(([k, t]) => h("input", { type: "checkbox", id: `opt-${k.toLowerCase()}`, "data-opt": k }));
  const code = codeInput("code", "or a game code");
  const undo = h("input", { type: "checkbox", id: "undo", checked: true });
  const hints = h("input", { type: "checkbox", id: "hints" });
  const rated = h("input", { type: "checkbox", id: "rated" });
  const inviteOnly = h("input", { type: "checkbox", id: "invite-only" });
  const standing = h("p", { class: "summary", id: "my-standing" });
  const players = h(
    "select",
    { id: "players", "aria-label": "Players" },
    [2, 3, 4, 5, 6, 7, 8].map((n) => h("option", { value: n, selected: n === 4 }, n)),
  );
  const time = h(
    "select",
    { id: "time", "aria-label": "Time limit" },
    TIMES.map((s) => h("option", { value: s, selected: s === 1800 }, `${s / 60} min`)),
  );
  const roomCode = h("input", {
    id: "room-code",
    placeholder: "K7WQM",
    maxlength: 16,
    "aria-label": "Room code",
    autocomplete: "off",
  });

  const create = () => {
    const msg = {
      t: "create",
      max_players: Number(players.value),
      undo: undo.checked,
      time_limit: Number(time.value),
      hints: hints.checked,
    };
    if (rated.checked) msg.rated = true; // said only when asked: rated rooms are new (4.27)
    if (inviteOnly.checked) msg.invite_only = true; // joinable by its link only (4.32)
    if (code.value.trim()) {
      msg.code = gameCode(c, code.value);
      if (!msg.code) return;
    } else
      msg.rules =
        variant.value +
        opts
          .filter((o) => o.checked)
          .map((o) => o.dataset.opt)
          .join("");
    c.send(msg);
  };
  const enter = (t) => {
    const r = roomCode.value.trim();
    if (!r) {
      roomCode.focus();
      c.session.say("type the room code, then Enter (or Watch)");
      c.render();
      return;
    }
    c.send({ t, room: r });
  };
  const tick = (input, text) => h("label", "tick", input, " ", text);
  const quick = quickBox(c); // issue 29: the quick-race pool
  const keys = keyed({
    q: () => quick.key("q"),
    n: create,
    j: () => enter("join"),
    w: () => enter("watch"),
    d: () => c.askDaily(),
    l: openBoards(c),
    h: openHistory(c),
    p: () => c.session.me && openPlayer(c, c.session.me),
  });
  // Issue 29 (dailyscreens.js): the countdown, the archive, the deck's settings.
  const next = countdownLine(c);
  const archive = archiveRow(c);
  const cards = deckBox(c);
  const el = screen(
    ch,
    "lobby",
    h("h1", {}, "Lobby"),
    standing,
    quick.el,
    form(
      { class: "card box", id: "new-room", "aria-labelledby": "new-room-h" },
      create,
      h("h2", { id: "new-room-h" }, "New room"),
      row(h("span", "lbl", "Rules"), variant, ...opts.map((o, i) => tick(o, `${OPTIONS[i][0]} ${OPTIONS[i][1]}`))),
      row(lbl("code", "or code"), code),
      row(
        h("span", "lbl", "Options"),
        tick(undo, "undo"),
        tick(hints, "hints"),
        tick(rated, "rated"),
        tick(inviteOnly, "by link only"),
        h("span", "summary", "(a win with hints ranks after the wins without; a rated race changes ratings)"),
      ),
      row(
        lbl("players", "Players"),
        players,
        h("label", { class: "lbl2", for: "time" }, "Time"),
        time,
        h("button", { type: "submit", id: "create" }, keyLabel("Create room (n)")),
      ),
    ),
    form(
      { class: "card box", id: "join-box" },
      () => enter("join"),
      h("h2", {}, "Join or watch a room"),
      row(
        lbl("room-code", "Room code"),
        roomCode,
        h("button", { type: "submit", id: "join" }, keyLabel("Join (j)")),
        plain("Watch (w)", () => enter("watch"), "watch"),
      ),
    ),
    h(
      "div",
      { class: "card box", id: "alone-box" },
      h("h2", {}, "On your own"),
      row(
        button("Today's daily deal (d)", () => c.askDaily(), { id: "daily" }),
        plain("Leaderboards (l)", openBoards(c), "boards"),
        plain("History (h)", openHistory(c), "history"),
        plain("Your page (p)", () => c.session.me && openPlayer(c, c.session.me), "my-page"),
        plain("Use this name on another device", () => nameLink(c), "name-link"),
      ),
      next.el,
      archive.el,
    ),
    cards.el,
  );
  return {
    el,
    update() {
      ch.update();
      const m = c.session.standing;
      standing.hidden = !m;
      if (m) {
        const r = ratingText(m.rating, m.provisional);
        standing.textContent = `${c.session.me}: ${r ? `rating ${r}` : "no rating yet"} · ${streakText(m.streak, m.best_streak)}`;
      }
      quick.update();
      cards.update();
    },
    tick: next.tick,
    key(k) {
      // Join and watch need a room code: the box gets the focus to type it in.
      if ((k === "j" || k === "w") && !roomCode.value.trim()) {
        roomCode.focus();
        return true;
      }
      return keys(k);
    },
  };
}
