// The screens and dialogs. Each is built once when it comes up, then `update`d in place from
// the session after every message; `key` takes the terminal client's keys for it.

import { h, fill } from "./dom.js";
import { keep, appBase } from "./net.js";
import { formatMs, headline, listed, nameCheck, NAME_MAX } from "./session.js";
import { BoardView } from "./board.js";
import { changeText, nameRated, openPlayer, playerCell, ratingText, streakText } from "./player.js";

// The player's page (docs/protocol.md 4.27): a screen of its own module.
export { player } from "./player.js";
import { quickBox } from "./quick.js";
import { archiveRow, countdownLine, deckBox } from "./dailyscreens.js";
import { dayBefore } from "./dailydeck.js";

const VARIANTS = [
  ["C", "Classic"],
  ["R", "Relaxed"],
  ["S", "Russian"],
  ["A", "Alaska"],
  ["M", "Moosehide"],
];
const OPTIONS = [
  ["E", "open spaces"],
  ["G", "groups"],
  ["T", "take-back"],
];
/** Time limits, in seconds. */
const TIMES = [300, 600, 900, 1800, 3600];
const GAME_CODE = /^YU1-[CRSAM]E?G?T?-([A-Z]{7}|[A-Z2-7]{26})$/;

function rulesText(rules) {
  const v = VARIANTS.find(([k]) => k === rules[0]);
  const opts = OPTIONS.filter(([k]) => rules.slice(1).includes(k)).map(([, t]) => t);
  return [v ? v[1] : rules, ...opts].join(", ");
}

/** The connection's state and the status line, shared by every screen. */
export function chrome(c) {
  const link = h("p", "link");
  const status = h("p", { class: "status", "aria-hidden": "true" });
  return {
    link,
    status,
    update() {
      const st = c.linkState;
      link.className = `link ${st.kind}`;
      link.hidden = st.kind === "idle"; // nothing connects yet: nothing to say
      link.textContent = st.kind === "online" ? `● ${st.text}` : `○ ${st.text}`;
      const s = c.session.status;
      status.className = `status ${s.kind}`;
      status.textContent = s.text;
    },
  };
}

/**
 * A label whose key ("Undo (u)") is marked apart, so that a touch screen, which has no
 * keys, shows only "Undo" (client.css hides .kbd under pointer: coarse).
 */
export function keyLabel(text) {
  const m = /^(.*\S) (\([^()]+\))$/.exec(text);
  return m ? [m[1], h("span", "kbd", ` ${m[2]}`)] : text;
}

/** Set a button's label (with its key marked apart). */
export function setLabel(el, text) {
  if (el.dataset.label !== text) {
    el.dataset.label = text;
    fill(el, keyLabel(text));
  }
}

function button(text, onclick, extra = {}) {
  return h("button", { type: "button", onclick, ...extra }, keyLabel(text));
}

/** Most buttons are secondary ("plain"): only a screen's main action stands out. */
export const plain = (text, onclick, id, label) => button(text, onclick, { id, class: "plain", "aria-label": label });

/** A handler that sends a message of type `t` (leave, start, rematch, daily). */
const sender = (c, t) => () => c.send({ t });
const row = (...children) => h("div", "row", ...children);
const actions = (...children) => h("div", "row actions", ...children);

/** A screen: the connection's state above its content, the status line below. */
const screen = (ch, name, ...content) => h("section", { class: `screen ${name}` }, ch.link, ...content, ch.status);

/** A screen's `key` from a table of keys; true when `k` is one of them (it acted). */
export const keyed = (table) => (k) => {
  const act = table[k];
  if (act) act();
  return !!act;
};

/** A form that only calls `submit` (the page never leaves for another). */
export const form = (props, submit, ...children) =>
  h("form", { ...props, onsubmit: (e) => (e.preventDefault(), submit()) }, ...children);

/** A box to type a game code in; a label for a box. */
const codeInput = (id, label) =>
  h("input", { id, placeholder: "YU1-C-AAAAAAB", maxlength: 48, "aria-label": label, autocomplete: "off" });
const lbl = (id, text) => h("label", { class: "lbl", for: id }, text);

/** A typed game code, upper-cased; null, said on the status line, when it is not one. */
function gameCode(c, text) {
  const code = text.trim().toUpperCase();
  if (GAME_CODE.test(code)) return code;
  c.session.say(`game code: ${code} is not a code like YU1-C-AAAAAAB`, "error");
  c.render();
  return null;
}

/** "1 player", "3 players". */
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
const badge = (kind, text) => h("span", { class: `badge ${kind}` }, text);
const outcome = (state) => badge(state, state === "timeout" ? "out of time" : state);
const away = (p) => (p.connected ? null : badge("abandoned", "away"));

// -- the first visit: a name; a private server: its password --------------------------------

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

// -- the lobby ------------------------------------------------------------------------------

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

/**
 * The link that takes this name to another device (#token=...: a fragment, so it never
 * reaches a server's logs). Whoever has it plays as this name: it is said so.
 */
export function nameLink(c) {
  const url = `${location.origin}${appBase()}#token=${encodeURIComponent(keep.get("token") ?? "")}`;
  const input = h("input", { id: "name-link-url", readonly: true, value: url, "aria-label": "Your name's link" });
  const said = h("span", { class: "summary", role: "status" });
  const copy = async () => {
    input.select();
    let ok = true;
    try {
      await navigator.clipboard.writeText(url);
    } catch {
      ok = document.execCommand?.("copy") ?? false;
    }
    said.textContent = ok ? "copied" : "select the link and copy it";
  };
  const d = dialog(
    c,
    [
      h("h2", {}, `Play as ${c.session.me ?? "you"} on another device`),
      h("p", {}, "Open this link on the other device (a phone, another browser): it plays there under this name."),
      h(
        "p",
        "bad",
        "Anyone with this link is you: send it only to yourself, and never post it.",
      ),
      h("div", "row invite", input),
      row(button("Copy link", copy, { id: "name-link-copy" }), said, plain("Close", () => d.close(), "name-link-close")),
    ],
    { Escape: () => {} },
  );
  input.select();
}

// -- a room before its race (and a finished room one joined late) ---------------------------

export function room(c) {
  const ch = chrome(c);
  const s = c.session;
  const title = h("h1", { id: "room-title" }, "Room");
  const info = h("div", "room-info");
  const link = h("input", { id: "invite", readonly: true, "aria-label": "Invite link", value: "" });
  const copied = h("span", { class: "summary", role: "status" });
  const copy = plain(
    "Copy link",
    async () => {
      link.select();
      let ok = true;
      try {
        await navigator.clipboard.writeText(link.value);
      } catch {
        ok = document.execCommand?.("copy") ?? false;
      }
      copied.textContent = ok ? "copied" : "select the link and copy it";
    },
    "copy",
  );
  const invite = h("div", "row invite", lbl("invite", "Invite"), link, copy, copied);
  const players = h("ul", { class: "players", "aria-label": "Players" });
  const note = h("p", "note");
  const count = h("p", { class: "countdown", "aria-live": "off" });
  const ready = button("Ready (space)", () => toggleReady(), { id: "ready" });
  const leave = sender(c, "leave");
  const start = button("Start (s)", sender(c, "start"), { id: "start" });
  // Once a race is over anyone in the room may ask for the rematch (protocol 4.3).
  const again = button("Rematch (m)", sender(c, "rematch"), { id: "rematch" });
  const meReady = () => !!s.room?.players.find((p) => p.name === s.me)?.ready;
  const toggleReady = () => {
    const r = s.room;
    if (r && r.you === "player" && !s.isHost && r.state === "lobby") c.send({ t: "ready", ready: !meReady() });
  };
  const el = screen(
    ch,
    "room",
    title,
    h(
      "div",
      "card box",
      info,
      invite,
      players,
      note,
      count,
      row(ready, start, again, plain("Leave (l)", leave, "leave")),
    ),
  );
  const tick = () => {
    const left = s.countdownLeft(c.now());
    count.hidden = left === null;
    if (left !== null) count.textContent = String(Math.max(1, Math.ceil(left / 1000)));
  };
  return {
    el,
    tick,
    update() {
      ch.update();
      const r = s.room;
      if (!r) return;
      title.textContent = `Room ${r.room}`;
      const url = `${location.origin}${appBase()}r/${r.room}`;
      if (link.value !== url) link.value = url;
      invite.hidden = r.max_players === 1;
      fill(
        info,
        r.ghost && h("p", "deal", `Racing ${r.ghost}'s run as a ghost (practice)`),
        h(
          "p",
          "deal",
          `${rulesText(r.rules)}${r.max_players > 1 ? ` · ${r.max_players} players at most` : ""} · ${r.undo ? "undo" : "no undo"} · ${r.hints ? "hints" : "no hints"}${r.rated ? " · rated" : ""} · ${Math.round(r.time_limit / 60)} min`,
          r.code && [" · deal ", h("code", {}, r.code)],
        ),
        r.commitment && h("p", "summary", "Commitment to the deal: ", h("code", "hash", r.commitment)),
      );
      fill(
        players,
        r.players.map((p) =>
          h(
            "li",
            {},
            h("span", { class: "pname", title: p.name }, nameRated(p.name, p.rating, p.provisional)),
            p.name === r.host && badge("won", "host"),
            p.ready ? badge("won", "ready") : badge("stuck", "not ready"),
            away(p),
            p.name === s.me && h("span", "summary", " (you)"),
          ),
        ),
        r.spectators > 0 && h("li", "summary", `${r.spectators} watching`),
      );
      const mayStart = r.you === "player" && r.state === "lobby";
      ready.hidden = !mayStart || s.isHost;
      setLabel(ready, meReady() ? "Not ready (space)" : "Ready (space)");
      start.hidden = !mayStart || !s.isHost;
      again.hidden = r.state !== "finished" || r.max_players === 1 || r.you !== "player";
      const waiting = r.players.filter((p) => !p.ready && p.name !== r.host).map((p) => p.name);
      let text;
      if (r.state === "countdown") text = "Get ready: the race starts in";
      else if (r.state === "finished")
        text =
          r.you === "player"
            ? "This race is over: anyone who raced may ask for a rematch (a new deal)."
            : "This race is over: a rematch may come (anyone who raced may ask for one).";
      else if (r.you === "spectator") text = `You watch; ${r.host} starts the race`;
      else if (s.isHost) {
        text = waiting.length
          ? `Waiting for ${listed(waiting)} to be ready`
          : `Everyone is ready: ${s.touch ? "press Start" : "press s to start"}${r.players.length === 1 && r.max_players > 1 ? " (a race alone is fine)" : ""}`;
        if (r.max_players > 1) text += `. Others join with the room code ${r.room} or the link.`;
      } else {
        text = `${r.host} starts the race when everyone is ready`;
        if (waiting.length) text += `; not ready yet: ${listed(waiting.map((n) => (n === s.me ? "you" : n)))}`;
      }
      note.textContent = text;
      tick();
    },
    key: keyed({
      " ": toggleReady,
      s: () => s.isHost && c.send({ t: "start" }),
      m: () => s.room?.state === "finished" && s.room.you === "player" && c.send({ t: "rematch" }),
      l: leave,
    }),
  };
}

// -- the race ------------------------------------------------------------------------------

function standingsEl(c) {
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
                    : nameRated(p.name, seat(p.name).rating, seat(p.name).provisional),
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

function raceHead(c) {
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

export function watch(c) {
  const ch = chrome(c);
  const head = raceHead(c);
  const stand = standingsEl(c);
  const leave = sender(c, "leave");
  const el = screen(
    ch,
    "watch",
    head.el,
    h("p", "note", "You watch this race: everyone's progress, nobody's cards."),
    stand.el,
    actions(plain("Leave (l)", leave, "leave")),
  );
  return {
    el,
    tick: () => head.tick(),
    update() {
      ch.update();
      head.update();
      stand.update();
    },
    key: keyed({ l: leave }),
  };
}

// -- the results ------------------------------------------------------------------------------

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

/** A table of `rows` (cells: a td, or what goes in one); `mine(i)`: row i is my run. */
function table(heads, rows, mine = () => false) {
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

const num = (x) => h("td", "num", x);
/** A figure a phone leaves out (client.css: moves, score and undos under 600 px). */
const wide = (x) => h("td", "num wide", x);
/** A player's name: one line, cut with an ellipsis where narrow, whole in its title. */
const nameCell = (name) => h("td", { class: "name", title: name }, name);

/** The columns every table of runs has (results, leaderboards, history), and their cells. */
const RUN = ["outcome", "time", "moves", "score", "cards"];
const runCells = (x) => [
  h("td", {}, outcome(x.outcome), x.hinted ? " (hint)" : ""),
  num(formatMs(x.time_ms)),
  wide(x.moves),
  wide(x.score),
  num(`${x.foundations}/52`),
];

// The ranks, then a ghost room's recorded run for comparison (protocol 4.23).
const ranksAndGhost = (r) =>
  r.ghost ? [...r.ranks, { ...r.ghost, name: `${r.ghost.name} (ghost)`, ghost: true }] : r.ranks;
/** A row's replay button (docs/protocol.md 4.22): the run of `player` in `race`, if stored. */
const replayCell = (c, race, player) =>
  h(
    "td",
    {},
    race &&
      button("▶", () => c.openReplay(race, player), { class: "plain mini", "aria-label": `replay ${player}'s run` }),
  );

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
            x.ghost ? nameCell(x.name) : playerCell(c, x.name, null, false),
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

// -- leaderboards ---------------------------------------------------------------------------

/** `n` pages on from a paged screen's state `st` (of `total` rows), and `ask` for it. */
function turn(st, n, total, ask) {
  const offset = Math.max(0, st.offset + n * st.limit);
  if (offset !== st.offset && (n < 0 || offset < total)) {
    st.offset = offset;
    ask();
  }
}

/** What the leaderboards and the history share: paging by `page(n)`, and Esc or q back. */
const pageButtons = (page) => [plain("↑ page", () => page(-1)), plain("page ↓", () => page(1))];
const back = (c) => plain("Back (Esc)", () => c.close(), "back");
const pagedKeys = (c, page) => ({
  PageDown: () => page(1),
  PageUp: () => page(-1),
  Escape: () => c.close(),
  q: () => c.close(),
});

const today = () => new Date().toISOString().slice(0, 10);
const shiftDay = (date, days) => new Date(Date.parse(`${date}T12:00:00Z`) + days * 86400000).toISOString().slice(0, 10);

function boardsState({ date = null, code = null, archive = false } = {}) {
  const board = code ? "deal" : archive ? "archive" : "daily";
  return { kind: "boards", board, date, code, offset: 0, around: false, limit: 20 };
}
const openBoards = (c) => () => c.open(boardsState());

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

// -- history ----------------------------------------------------------------------------------

const openHistory = (c) => () => c.open({ kind: "history", offset: 0, limit: 20 });

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

// -- dialogs ----------------------------------------------------------------------------------

function dialog(c, content, keys) {
  const d = h("dialog", "card dlg", content);
  d.addEventListener("keydown", (e) => {
    const act = keys[e.key];
    if (act) {
      e.preventDefault();
      e.stopPropagation();
      d.close();
      act();
    }
  });
  d.addEventListener("close", () => {
    d.remove();
    c.screen?.focus?.();
  });
  document.body.append(d);
  d.showModal();
  return d;
}

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
