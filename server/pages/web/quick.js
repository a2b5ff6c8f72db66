// The quick race (docs/protocol.md 4.26): the lobby's "Quick race" box. `quick` enters the
// public pool; while waiting, `pool` says how many wait, for how long, and the rating band;
// a player alone is told when others usually play. Leave sends `quick` with `leave`.
import { h, fill } from "./dom.js";

/** "0:07 of 0:20": a wait, counted on from the last `pool` with this page's own clock. */
function waited(p, now) {
  const ms = p.waited_ms + Math.max(0, now - p.at);
  const s = (x) => `${Math.floor(x / 60000)}:${String(Math.floor((x % 60000) / 1000)).padStart(2, "0")}`;
  return `${s(ms)} of ${s(p.max_wait_ms)}`;
}

/** The rating band now: it widens 25 a second from what the server said, without limit past the wait. */
function band(p, now) {
  const ms = p.waited_ms + Math.max(0, now - p.at);
  if (p.band >= 9999 || ms >= p.max_wait_ms) return "any rating";
  return `within ±${p.band + Math.floor(((ms - p.waited_ms) / 1000) * 25)} of your rating`;
}

/** What a waiting player reads (pure: the Node tests check it). */
export function poolText(p, now) {
  if (!p) return [];
  const lines = [];
  if (p.waiting <= 1) {
    lines.push("Nobody else is waiting yet: you race as soon as someone comes (no bots).");
    if (p.usual) lines.push(`Others usually play then: ${p.usual}.`);
  } else lines.push(`${p.waiting} players waiting (you included).`);
  lines.push(`Waited ${waited(p, now)}, matched ${band(p, now)}.`);
  return lines;
}

export function quickBox(c) {
  const info = h("div", { id: "quick-info", role: "status" });
  const go = h("button", { type: "button", id: "quick", onclick: () => c.send({ t: "quick" }) }, "Quick race", h("span", "kbd", " (q)"));
  const leave = h(
    "button",
    { type: "button", id: "quick-leave", class: "plain", onclick: () => c.send({ t: "quick", leave: true }) },
    "Leave",
    h("span", "kbd", " (q)"),
  );
  const el = h(
    "div",
    { class: "card box", id: "quick-box" },
    h("h2", {}, "Quick race"),
    h("p", "summary", "Race players of about your rating, now: a room of 2 to 4 forms within seconds."),
    h("div", "row", go, leave),
    info,
  );
  let timer = null;
  const update = () => {
    const p = c.session.pool;
    go.hidden = !!p;
    leave.hidden = !p;
    fill(info, ...poolText(p, performance.now()).map((t) => h("p", {}, t)));
    if (p && !timer)
      timer = setInterval(() => (document.contains(el) ? update() : (clearInterval(timer), (timer = null))), 1000);
    if (!p && timer) {
      clearInterval(timer);
      timer = null;
    }
  };
  return {
    el,
    update,
    key: (k) => {
      if (k !== "q") return false;
      c.send(c.session.pool ? { t: "quick", leave: true } : { t: "quick" });
      return true;
    },
  };
}
