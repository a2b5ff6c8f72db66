// A room before its race, and a finished room one joined late (the terminal's RoomScreen).

import { fill, h } from "../dom.js";
import { appBase } from "../net.js";
import { nameRated } from "../player.js";
import { listed } from "../session.js";
import { away, badge, button, chrome, keyed, lbl, plain, row, rulesText, screen, sender, setLabel } from "./parts.js";

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
    if (left === null) return;
    const n = String(Math.max(1, Math.ceil(left / 1000)));
    // Each second of the countdown is told, as it is seen (the region is polite and rate-limited).
    if (count.textContent !== n) c.announcer?.say(`the race starts in ${n}`, "countdown");
    count.textContent = n;
  };
  return {
    el,
    tick,
    update() {
      ch.update();
      const r = s.room;
      if (!r) return;
      title.textContent = `Room ${r.room}`;
      const key = r.key ? `?k=${encodeURIComponent(r.key)}` : ""; // invite-only (4.32)
      const url = `${location.origin}${appBase()}r/${r.room}${key}`;
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
            p.bot && badge("bot", "BOT"),
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
