// Ratings, streaks and a player's page (docs/protocol.md 4.27): how a rating reads beside a
// name, the rating history as an SVG chart, and the player screen (`player` ->
// `player_page`), with a Report button on another's page (`report` -> `reported`,
// protocol 4.33: the server takes it only for someone you raced and says so). The words and the chart are pure (tests/web/player_check.mjs); the screen
// uses the same helpers as every other screen.

import { h, fill } from "./dom.js";
import { formatMs } from "./session.js";
import { appBase } from "./net.js";

const SVG = "http://www.w3.org/2000/svg";

/** "1662", "1662?" (provisional), or "" for a player with no rating yet. */
export function ratingText(rating, provisional) {
  if (rating === null || rating === undefined) return "";
  return `${rating}${provisional ? "?" : ""}`;
}

/** A rating change as it reads after a race: "+12", "−5", "±0"; "" in an unrated race. */
export function changeText(change) {
  if (change === null || change === undefined) return "";
  if (change > 0) return `+${change}`;
  if (change < 0) return `−${-change}`;
  return "±0";
}

/** "daily streak 3 (best 5)", "no daily streak yet": from welcome/player_page fields. */
export function streakText(streak, best) {
  if (!streak && !best) return "no daily streak yet: win today's daily deal to start one";
  return `daily streak ${streak ?? 0}${best ? ` (best ${best})` : ""}`;
}

/**
 * The chart's points for `ratings` ([t_ms, rating] oldest first) in a `w` x `hgt` box with
 * `pad` inside: evenly spaced by race, a flat history mid-height. As the server's
 * /players/NAME draws it (server/pages/http.py rating_chart), so both pages agree.
 */
export function chartPoints(ratings, w = 600, hgt = 160, pad = 12) {
  if (!ratings.length) return [];
  const values = ratings.map((p) => p[1]);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const span = Math.max(high - low, 50);
  const mid = (high + low) / 2;
  const iw = w - 2 * pad;
  const ih = hgt - 2 * pad;
  const n = values.length;
  const r1 = (x) => Math.round(x * 10) / 10;
  return values.map((v, i) => [
    r1(pad + (n > 1 ? (iw * i) / (n - 1) : iw / 2)),
    r1(pad + ih * (0.5 - (v - mid) / span)),
  ]);
}

/** A name with its rating after it, small (rooms, standings, boards). */
export function nameRated(name, rating, provisional) {
  const r = ratingText(rating, provisional);
  return [name, r && h("span", { class: "rating", title: provisional ? "provisional rating" : "rating" }, ` ${r}`)];
}

/** Open a player's page over whatever shows. */
export const openPlayer = (c, name) => c.open({ kind: "player", name, back: c.overlay });

/** A table cell with a name that opens its player's page, and the rating after it. */
export function playerCell(c, name, rating, provisional, bot = false) {
  return h(
    "td",
    { class: "name", title: name },
    // A link, not a button: inline, so that a long name is cut like any other (one line).
    h(
      "a",
      {
        class: "who",
        href: `${appBase()}players/${encodeURIComponent(name)}`,
        title: `${name}'s page`,
        onclick: (e) => {
          e.preventDefault(); // the page opens in the client; the address is the server's page
          openPlayer(c, name);
        },
      },
      name,
    ),
    ratingText(rating, provisional) && h("span", "rating", ` ${ratingText(rating, provisional)}`),
    bot && h("span", { class: "badge bot", title: "a BOT account: a program (docs/bots.md)" }, " BOT"),
  );
}

function chartEl(ratings) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "chart");
  svg.setAttribute("viewBox", "0 0 600 160");
  svg.setAttribute("role", "img");
  const pts = chartPoints(ratings);
  svg.setAttribute(
    "aria-label",
    `Rating after each of the last ${ratings.length} rated races, from ${ratings[0][1]} to ${ratings.at(-1)[1]}`,
  );
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("points", pts.map((p) => p.join(",")).join(" "));
  const dot = document.createElementNS(SVG, "circle");
  dot.setAttribute("cx", pts.at(-1)[0]);
  dot.setAttribute("cy", pts.at(-1)[1]);
  dot.setAttribute("r", "4");
  svg.append(line, dot);
  return svg;
}

const day = (ms) => new Date(ms).toISOString().slice(0, 10);

/** The player screen: a `player_page` (docs/protocol.md 4.27), asked for when it opens. */
export function player(c) {
  const st = c.overlay;
  const s = c.session;
  const title = h("h1", { id: "player-title" }, st.name);
  const body = h("div", { id: "player-body" });
  const back = () => (st.back ? c.open(st.back) : c.close());
  const mine = s.me !== null && s.me.toLowerCase() === st.name.toLowerCase();
  // Another's page: report them to the server's operators (about your latest race together).
  const report = () => c.send({ t: "report", player: st.name, race: null, reason: null });
  const el = h(
    "section",
    "screen player",
    title,
    body,
    h(
      "div",
      "row actions",
      h("button", { class: "plain", id: "back", onclick: back }, "Back (Esc)"),
      !mine &&
        h(
          "button",
          { class: "plain", id: "report", title: "tell the server's operators this player broke the rules", onclick: report },
          "Report",
        ),
    ),
  );
  s.playerPage = null;
  queueMicrotask(() => c.send({ t: "player", name: st.name }));
  return {
    el,
    update() {
      let p = s.playerPage;
      // Another page (my own, asked after a race) is not this one: still loading.
      if (p && !p.error && p.name.toLowerCase() !== st.name.toLowerCase()) p = null;
      if (!p) {
        fill(body, h("p", "summary", "loading…"));
        return;
      }
      if (p.error) {
        fill(body, h("p", "summary", p.error));
        return;
      }
      fill(title, p.name, p.bot && h("span", { class: "badge bot", title: "a BOT account: a program (docs/bots.md)" }, " BOT"));
      if (p.broke_rules) {
        // A mark in force (docs/fairplay.md): the page says so, and nothing more.
        fill(body, h("p", { class: "deal", id: "player-rating" }, "This account broke this server's rules."));
        return;
      }
      fill(
        body,
        h(
          "p",
          { class: "deal", id: "player-rating" },
          p.rating === null
            ? "No rated race yet"
            : [
                "Rating ",
                h("b", {}, ratingText(p.rating, p.provisional)),
                p.deviation !== null ? ` ± ${2 * p.deviation}` : "",
                p.provisional ? " (provisional: fewer than 10 rated races)" : "",
              ],
        ),
        h(
          "p",
          { id: "player-stats" },
          `${p.races} race${p.races === 1 ? "" : "s"} · ${p.wins} won · ${streakText(p.streak, p.best_streak)}`,
        ),
        p.best.length > 0 &&
          h("p", { id: "player-best" }, "Best wins: ", p.best.map((b) => `${b.rules} ${formatMs(b.time_ms)}`).join(" · ")),
        p.ratings.length
          ? h(
              "div",
              { class: "card chart-box", id: "player-chart" },
              chartEl(p.ratings),
              h("p", "summary", `${day(p.ratings[0][0])} … ${day(p.ratings.at(-1)[0])}`),
            )
          : h("p", "summary", "No rating history yet: each rated race adds a point."),
      );
    },
    key(k) {
      if (k === "Escape" || k === "q") {
        back();
        return true;
      }
      return false;
    },
  };
}
