// The replay screen (docs/protocol.md 4.22): one run of a finished race, step by step.
// Imported only when a replay opens, with deal.js: a race never needs it. The run (a
// replay_page's fields) and its post-mortem come as JSON from /replay/<race>/<player>
// (section 1.6), so that a shared link plays without a name on this server; a refusal's
// text is shown. deal.js deals the code and plays the actions, face-down cards unseen.

import { h, fill } from "./dom.js";
import { appBase } from "./net.js";
import { formatView } from "./rules.js";
import { formatMs, moveLabel, RaceBoard } from "./session.js";
import { postmortemText, keyed, plain, chrome, form, keyLabel } from "./screens.js";
import { BoardView } from "./board.js";
import { positions } from "./deal.js";

export const SPEEDS = [1, 4, 16];

/** The address of a run, relative to the server's root: /replay/<race>/<player>. */
export const runPath = (race, player) => `replay/${encodeURIComponent(race)}/${encodeURIComponent(player)}`;

async function getJson(url) {
  const r = await fetch(url, { cache: "no-cache" });
  let data = null;
  try {
    data = await r.json();
  } catch {
    /* not JSON: a proxy's page */
  }
  if (!r.ok || !data || data.error) throw new Error(data?.text ?? `the server answered ${r.status}`);
  return data;
}

export function replay(c) {
  const st = c.overlay; // {kind: "replay", race, player}
  const s = c.session;
  const link = new URL(appBase() + runPath(st.race, st.player), location.href).href;
  const title = h("p", { class: "deal", id: "replay-title" }, "loading the run…");
  const where = h("p", { class: "race-head", id: "replay-pos" });
  const pmEl = h("p", { id: "postmortem", class: "summary" });
  const list = h("ol", { class: "moves", id: "replay-moves" });
  const board = new BoardView(() => {});
  board.down = () => {}; // read-only: nothing to pick or drag
  board.el.setAttribute("aria-label", "The replayed board");
  const playBtn = plain("play ▶", () => toggle(), "replay-play", "play or pause (space)");
  const speedBtn = plain("1x", () => speed(), "replay-speed", "speed (s): 1x, 4x or 16x");
  const jumpIn = h("input", { id: "replay-jump", inputmode: "numeric", size: 4, "aria-label": "go to move" });
  const loseBtn = plain("go to the losing move (j)", () => toLosing(), "replay-losing");
  loseBtn.hidden = true;
  const others = h("span", { class: "row", id: "replay-others" });
  const ch = chrome(c); // its status line only: a replay needs no connection
  let run = null; // the replay_page fields
  let pos = null; // the positions, one per action and the deal
  let pm = null;
  let k = 0; // actions played
  let playing = null; // {clock: run ms, at: performance.now()}
  let rate = 1;

  const at = (i) => (i > 0 ? run.actions[i - 1][0] : 0);
  const go = (i) => {
    if (!pos) return;
    k = Math.max(0, Math.min(pos.length - 1, i));
    if (playing && k === pos.length - 1) playing = null;
    draw();
  };
  const toggle = () => {
    if (!pos) return;
    if (playing) playing = null;
    else {
      if (k === pos.length - 1) k = 0;
      playing = { clock: at(k), at: c.now() };
    }
    draw();
  };
  const advance = () => {
    const now = c.now();
    playing.clock += (now - playing.at) * rate;
    playing.at = now;
  };
  const speed = () => {
    if (playing) advance(); // the time so far at the old speed
    rate = SPEEDS[(SPEEDS.indexOf(rate) + 1) % SPEEDS.length];
    draw();
  };
  const toLosing = () => pm?.status === "lost" && go(pm.last_winnable);
  // Race this run as a ghost (protocol 4.23): its room replaces the replay, or the server says why not.
  const race = () => c.send({ t: "ghost", race: st.race, player: (c.ghostAsked = st.player) });
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      s.say("copied the replay's link");
    } catch {
      s.say(`copy the link by hand: ${link}`);
    }
    c.render();
  };

  function draw() {
    if (!pos) return;
    const p = pos[k];
    const race = new RaceBoard(
      { view: formatView(p.view), time_limit: 86400, seq: k, score: 0, moves: p.moves, state: "playing" },
      0,
    );
    const lost = pm?.status === "lost" && k === pm.last_winnable;
    race.hint = lost ? pm.line[0] : null; // what would have kept a win, lit
    board.render(race);
    const last = k ? run.actions[k - 1][1] : null;
    const ms = playing ? playing.clock : at(k);
    fill(
      where,
      h("span", "clock", formatMs(ms)),
      h("span", "figs", `move ${k} of ${run.total} · ${p.moves} moves · ${race.foundations}/52 cards`),
      last ? h("span", {}, last === "undo" ? "undo" : moveLabel(last)) : h("span", {}, "the deal"),
      lost ? h("span", "bad", `next: ${pm.losing_move} threw the win away`) : "",
    );
    playBtn.textContent = playing ? "pause" : "play ▶";
    speedBtn.textContent = `${rate}x`;
    for (const li of list.children) li.classList.toggle("now", Number(li.dataset.k) === k);
    list.children[Math.max(0, k - 1)]?.scrollIntoView?.({ block: "nearest" });
  }

  function showPm() {
    pmEl.textContent = pm.text ?? postmortemText(pm);
    loseBtn.hidden = pm.status !== "lost";
    const wasted = new Set(pm.wasted ?? []);
    for (const li of list.children) li.classList.toggle("wasted", wasted.has(Number(li.dataset.k)));
  }

  const base = appBase() + runPath(st.race, st.player);
  getJson(`${base}?format=json`)
    .then(async (data) => {
      run = data;
      pos = await positions(data.code, data.actions);
      fill(
        title,
        h("b", {}, `${data.player}'s run`),
        data.date
          ? ` · daily ${data.date}${data.practice ? " (practice)" : ""}`
          : data.room
            ? ` · room ${data.room}`
            : "",
        ` · #${data.rank} of ${data.players.length} · ${data.outcome} at ${formatMs(data.time_ms)} · `,
        h("code", {}, data.code),
      );
      fill(
        list,
        data.actions.map(([ms, a], i) =>
          h("li", { "data-k": i + 1, onclick: () => go(i + 1), title: formatMs(ms) }, a === "undo" ? "undo" : a),
        ),
      );
      fill(
        others,
        data.players.filter((p) => p !== data.player).map((p) => plain(`${p}'s run`, () => c.openReplay(st.race, p))),
      );
      pmEl.textContent = "post-mortem: working it out…";
      draw();
      return getJson(`${base}/postmortem?format=json`)
        .then((answer) => (pm = answer))
        .catch((e) => (pm = { status: "none", text: `post-mortem: ${e.message}` }))
        .then(showPm)
        .then(draw);
    })
    .catch((e) => {
      fill(title, h("b", { class: "bad", id: "replay-refused" }, e.message));
    });

  const el = h(
    "section",
    "screen replay",
    h("h1", {}, "Replay"),
    title,
    where,
    h(
      "div",
      { class: "row", id: "replay-controls" },
      plain("« start", () => go(0), "replay-start", "to the start (Home)"),
      plain("‹ back", () => go(k - 1), "replay-back", "one back (←)"),
      playBtn,
      plain("next ›", () => go(k + 1), "replay-fwd", "one forward (→)"),
      plain("end »", () => go(Infinity), "replay-end", "to the end (End)"),
      speedBtn,
      form(
        { class: "row" },
        () => {
          go(Number(jumpIn.value) || 0);
          jumpIn.blur();
        },
        h("label", { class: "lbl2", for: "replay-jump" }, keyLabel("move (g)")),
        jumpIn,
      ),
    ),
    h("div", "replay-body", board.el, list),
    h("div", "row", pmEl, loseBtn),
    h(
      "div",
      { class: "row actions", id: "replay-actions" },
      plain("Copy link (c)", copy, "replay-copy"),
      plain("Race this run (r)", race, "replay-race"),
      h("code", { class: "hash", id: "replay-link" }, link),
      others,
      plain("Back (Esc)", () => c.closeReplay(), "back"),
    ),
    ch.status,
  );
  return {
    el,
    update: ch.update,
    resize: () => board.layout(),
    tick() {
      if (!playing) return;
      advance();
      while (k < run.actions.length && run.actions[k][0] <= playing.clock) k++;
      if (k === pos.length - 1) playing = null;
      draw();
    },
    key: keyed({
      ArrowRight: () => go(k + 1),
      ArrowLeft: () => go(k - 1),
      Home: () => go(0),
      End: () => go(Infinity),
      " ": toggle,
      s: speed,
      g: () => jumpIn.focus(),
      j: toLosing,
      c: copy,
      r: race,
      Escape: () => c.closeReplay(),
      q: () => c.closeReplay(),
    }),
  };
}
