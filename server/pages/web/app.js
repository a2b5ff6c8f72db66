// The browser client's entry point: the link, the session, which screen shows, the keys.
// It speaks docs/protocol.md like any outside client. Screens are built when the phase
// changes and updated in place after each message, so that a text box keeps its focus and
// a drag on the board is never cut short.

import { Link, keep, serverUrl, appBase, roomNode } from "./net.js";
import { Session, RaceBoard, headline } from "./session.js";
import { Announcer } from "./announce.js";
import { checkDeal } from "./commit.js";
import * as screens from "./screens.js";
import * as dailydeck from "./dailydeck.js";

/** A join or watch with an invite-only room's key when there is one (protocol 4.32). */
function withKey(msg, key) {
  return key ? { ...msg, key } : msg;
}

/** An invite link's room code (/r/K7WQM), or null. */
function inviteCode(path) {
  const m = /\/r\/([A-Za-z0-9]{5})$/.exec(path);
  return m ? m[1].toUpperCase() : null;
}

/** A replay link's race and player (/replay/<race>/<player>), or null. */
function replayLink(path) {
  const m = /\/replay\/([^/]+)\/([^/]+)$/.exec(path);
  try {
    return m && { race: decodeURIComponent(m[1]), player: decodeURIComponent(m[2]) };
  } catch {
    return null;
  }
}

/** A name's link for another device (#token=...), or null. */
function tokenLink(hash) {
  const m = /^#token=([^&]+)$/.exec(hash);
  try {
    return m ? decodeURIComponent(m[1]) : null;
  } catch {
    return null;
  }
}

/** The errors a post-mortem may get instead of its answer. */
const PM_ERRORS = new Set(["no_such_race", "race_running", "no_such_player", "not_public", "unavailable"]);

/** Errors that answer a hello: the connection stops until the player has done something. */
const HELLO_ERRORS = new Set(["name_taken", "name_invalid", "bad_token", "password", "too_many_names", "version"]);

export class Client {
  constructor(root) {
    this.root = root;
    this.session = new Session();
    this.session.dailies = readJson(localStorage, "yukon.dailies") ?? {};
    // A touch screen's words name buttons and taps; its buttons show no keys (client.css).
    this.session.touch = !!window.matchMedia?.("(pointer: coarse)").matches;
    this.link = new Link({
      url: serverUrl(),
      onMessage: (m) => this.message(m),
      onStatus: (k, t, c) => this.linkStatus(k, t, c),
    });
    /** The invite this page was opened with: joined once the welcome came. */
    this.invite = inviteCode(location.pathname);
    /** An invite-only room's key, the link's ?k= (protocol 4.32): sent with the join. */
    this.inviteKey = new URLSearchParams(location.search).get("k");
    // On a cluster the first socket goes to the room's node, looked up while the page
    // loads: the join lands where the room is, with no route (protocol 4.25).
    if (this.invite) this.link.lookup = roomNode(appBase(), this.invite, undefined, undefined, this.inviteKey);
    this.autoJoin = null;
    /** What the player must type before anything else: "name", "password" or null. */
    this.ask = keep.get("token") ? null : "name";
    this.askProblem = "";
    /** The error code that sent the player back to the name box (name_taken: say how). */
    this.askCode = null;
    /** What the player asked for before having a name: sent once the welcome comes. */
    this.afterWelcome = [];
    /** A page over the phase: "boards" or "history" (with its own state), or null. */
    this.overlay = null;
    // Nothing connects before there is a name to say hello with: no "connecting…" yet.
    this.linkState = { kind: "idle", text: "" };
    this.screen = null;
    this.dailyAsk = false;
    document.addEventListener("keydown", (e) => this.key(e));
    // Which control the keyboard (not a pointer) gave the focus to: `key` lets it have
    // its Enter and Space.
    this.keyFocus = null;
    this.pointerAt = -Infinity;
    document.addEventListener("pointerdown", () => (this.pointerAt = performance.now()), true);
    document.addEventListener("focusin", (e) => {
      this.keyFocus = performance.now() - this.pointerAt > 400 ? e.target : null;
    });
    window.addEventListener("resize", () => this.screen?.resize?.());
    /** The polite live region's voice, rate-limited (announce.js). */
    this.announcer = new Announcer((text) => {
      const region = document.getElementById("live");
      if (region) region.textContent = text;
    });
    setInterval(() => {
      this.screen?.tick?.();
      this.announcer.flush();
    }, 100);
  }

  now() {
    return performance.now();
  }

  start() {
    // The page's links are relative to where it was served; the address bar changes
    // (syncUrl), so they are made absolute first.
    for (const a of document.querySelectorAll("a[href]")) a.setAttribute("href", a.href);
    const run = replayLink(location.pathname);
    if (run) this.openReplay(run.race, run.player);
    this.archiveLink();
    this.render();
    // A name's link opened in a tab that shows the game already changes only the fragment.
    window.addEventListener("hashchange", () => this.tokenLink(true));
    if (!this.tokenLink(false) && !this.ask) this.link.start();
  }

  /**
   * A name's link (#token=...) in the address: its token is kept for this server (asking
   * first when this browser has a name of its own here) and the fragment leaves the
   * address bar. True when the link starts the connection itself.
   */
  tokenLink(running) {
    const token = tokenLink(location.hash);
    if (token === null) return false;
    history.replaceState(null, "", location.pathname + location.search);
    if (token === keep.get("token")) return false;
    const take = () => {
      keep.set("token", token);
      keep.set("name", null);
      if (running) {
        location.reload(); // a fresh page for the other name: nothing of this one's left
        return;
      }
      this.ask = null;
      this.askProblem = "";
      this.render();
      this.link.start();
    };
    if (!keep.get("token")) {
      take();
      return true;
    }
    // This browser has a name here already: the link's name replaces it only if asked to.
    const mine = keep.get("name");
    screens.confirm(
      this,
      `This link makes this browser play under the name it belongs to. This browser plays as ${mine ?? "another name"} here now; without that name's own link, it cannot come back to it. Use the link's name?`,
      take,
      () => running || this.link.start(),
    );
    return true;
  }

  /**
   * The archive's link (#archive=YYYY-MM-DD, from /leaderboard): that day's deal is asked
   * for as practice once the welcome comes (docs/protocol.md 4.28); the fragment goes.
   */
  archiveLink() {
    const date = dailydeck.archiveLink(location.hash);
    if (date === null) return;
    history.replaceState(null, "", location.pathname + location.search);
    this.afterWelcome.push({ t: "daily", date });
  }

  /** Play `date`'s daily deal from the archive, as practice (docs/protocol.md 4.28). */
  askArchive(date) {
    if (!/^\d{4}-\d\d-\d\d$/.test(date ?? "")) {
      this.session.say("choose a past day (YYYY-MM-DD)", "error");
      this.render();
      return;
    }
    this.send({ t: "daily", date });
  }

  /** The deck's look changed (four colours, suits as letters): kept for this player. */
  deckChanged() {
    if (this.session.me) dailydeck.saveDeck(localStorage, this.session.me);
    dailydeck.applyDeck(document.documentElement);
    this.screen?.update?.();
  }

  /** A run's replay (replay.js, loaded now: a race never needs it), over whatever shows. */
  openReplay(race, player) {
    import("./replay.js").then((m) => {
      this.replayMod = m;
      this.open({
        kind: "replay",
        race,
        player,
        back: this.overlay?.kind === "replay" ? this.overlay.back : this.overlay,
      });
      history.replaceState(null, "", appBase() + m.runPath(race, player));
    });
  }

  /** Back from a replay to the page it was opened from. */
  closeReplay() {
    this.overlay = this.overlay?.back ?? null;
    history.replaceState(null, "", appBase());
    this.syncUrl();
    this.render();
  }

  /** Send messages; false (and a word to the player) when the link is down. */
  send(...msgs) {
    if (this.ask === "name" && !this.link.online) {
      // Asked before choosing a name (a shared replay's "race this run"): a name first,
      // then it goes.
      this.afterWelcome = msgs;
      if (this.overlay?.kind === "replay") this.overlay = null;
      this.askProblem = "";
      this.session.say("choose a name first: then it goes");
      this.render();
      return false;
    }
    let ok = true;
    for (const m of msgs) ok = this.link.send(m) && ok;
    if (!ok) this.session.say("not connected: this is sent again once the connection is back", "error");
    this.render();
    return ok;
  }

  linkStatus(kind, text, code) {
    const wasOnline = this.linkState.kind === "online";
    this.linkState = { kind, text };
    if (wasOnline && kind !== "online") {
      this.session.connectionLost(this.now());
      if (this.pmAsked) this.session.postmortem = { race: this.pmAsked, text: "lost with the connection" };
      this.pmAsked = null;
    }
    if (kind === "stopped" && code === 4001) this.session.say(text, "error");
    this.render();
  }

  message(msg) {
    const s = this.session;
    const now = this.now();
    if (msg.t === "error" && this.pmAsked && PM_ERRORS.has(msg.code)) {
      // The results' post-mortem refused (a daily not public yet): said there, not as an error.
      s.postmortem = { race: this.pmAsked, text: msg.text };
      this.pmAsked = null;
      this.render();
      return;
    }
    if (msg.t === "postmortem_answer") {
      s.postmortem = msg;
      this.pmAsked = null;
    }
    if (msg.t === "race" && !s.race && s.room) this.restoreLog(msg, now);
    const out = s.receive(msg, now);
    dailydeck.heard(msg, now); // the countdown, from the server's clock (4.28)
    if (msg.t === "daily_deal" && msg.archive) this.checkArchiveDay(msg);
    switch (msg.t) {
      case "welcome":
        dailydeck.loadDeck(localStorage, msg.name);
        dailydeck.applyDeck(document.documentElement);
        this.ask = null;
        this.askCode = null;
        keep.set("name", msg.name);
        if (this.invite && msg.room === this.invite) {
          this.invite = null; // resumed in the invite's own room: nothing to join
        } else if (this.invite) {
          // A finished room the player sits in is left by the server on the join (4.3).
          this.autoJoin = this.invite;
          this.invite = null;
          this.link.send(withKey({ t: "join", room: this.autoJoin }, this.inviteKey));
        }
        if (this.afterWelcome.length) {
          const msgs = this.afterWelcome;
          this.afterWelcome = [];
          s.say("");
          for (const m of msgs) this.link.send(m);
        }
        break;
      case "error":
        this.error(msg);
        break;
      case "result":
        this.announcer.say(headline(msg, s.me), "result");
        // My run's post-mortem, for the results (docs/protocol.md 4.22).
        s.postmortem = null;
        if (msg.race && msg.ranks.some((x) => x.name === s.me)) {
          this.pmAsked = msg.race;
          this.link.send({ t: "postmortem", race: msg.race, player: s.me });
        }
        // My rating or streak may have changed (a rated race, a won daily): my page says.
        if (s.me && (s.isDaily || msg.ranks.some((x) => x.rating_change != null))) {
          this.link.send({ t: "player", name: s.me });
        }
        checkDeal(s.room?.commitment, msg.code, msg.salt).then((f) => {
          s.fairness = f;
          this.render();
        });
        break;
      case "board_page":
        if (this.dailyAsk && msg.kind === "daily") {
          this.dailyAsk = false;
          this.confirmDaily(msg);
        }
        break;
      case "room":
        if (this.autoJoin === msg.room) this.autoJoin = null;
        if (this.ghostAsked && msg.ghost) this.overlay = this.ghostAsked = null; // its lobby
        break;
      default:
        break;
    }
    for (const m of out) this.link.send(m); // resent moves after a resync
    if (s.outOfStep) {
      // The view could not follow an accepted move: a new connection's resync brings the
      // server's own view (protocol 4.15), as the terminal client does.
      s.outOfStep = false;
      this.link.ws?.close();
    }
    this.saveLog();
    if (msg.t === "room" && msg.max_players === 1) {
      // Kept across reloads: a resumed daily room comes without its daily_deal (4.16).
      writeJson(localStorage, "yukon.dailies", Object.fromEntries(Object.entries(s.dailies).slice(-8)));
    }
    this.syncUrl();
    this.render(msg);
  }

  /** A past day from the archive, checked against the daily's log (docs/protocol.md 4.29). */
  async checkArchiveDay(msg) {
    const base = `${location.origin}${appBase(location.pathname)}`;
    // Loaded only here: most visits never play a past day.
    const { checkDay } = await import("./dailylog.js");
    const verdict = await checkDay(msg.date, msg.commitment, async (path) => {
      const r = await fetch(`${base}${path}`, { cache: "no-cache" });
      if (!r.ok) throw new Error(`the server answered ${r.status}`);
      return r.json();
    });
    this.session.say(verdict.text, verdict.good ? "good" : "error");
    this.render();
  }

  error(msg) {
    const s = this.session;
    if (HELLO_ERRORS.has(msg.code)) {
      this.link.stop();
      if (msg.code === "bad_token") keep.set("token", null);
      if (msg.code === "password") keep.set("password", null);
      this.ask = msg.code === "version" ? null : msg.code === "password" ? "password" : "name";
      this.askProblem = msg.text;
      this.askCode = msg.code;
      return;
    }
    if (msg.code === "unavailable" && !this.link.online) {
      this.link.ws?.close();
      return;
    }
    if (this.autoJoin) {
      const code = this.autoJoin;
      if (msg.code === "race_running" || msg.code === "room_full") {
        this.autoJoin = null;
        this.link.send(withKey({ t: "watch", room: code }, this.inviteKey));
        s.say(`room ${code} is ${msg.code === "room_full" ? "full" : "racing"}: you watch`);
      } else if (msg.code === "already_in_room") {
        this.autoJoin = null; // resumed in a room: the invite is not needed
        s.status = { ...s.status, text: "", serial: s.status.serial + 1 };
      } else if (msg.code === "no_such_room") {
        this.autoJoin = null;
      }
    }
  }

  /** The moves of my race, kept for this tab: a reload resumes and resends as a drop does. */
  saveLog() {
    const s = this.session;
    const race = s.race;
    const log = race && s.room?.state === "racing" && !s.result;
    const value = log && { room: s.room.room, played: race.played.slice(-200), pending: [...race.pending] };
    writeJson(sessionStorage, "yukon.race", value || null);
  }

  restoreLog(msg, now) {
    const log = readJson(sessionStorage, "yukon.race");
    const s = this.session;
    if (!log || log.room !== s.room.room || s.starting) return;
    const race = new RaceBoard(msg, now);
    race.played = log.played;
    race.pending = new Map(log.pending);
    race.resyncing = true;
    s.race = race;
  }

  /** The address bar shows the room's invite link while in an ordinary room. */
  syncUrl() {
    if (this.overlay?.kind === "replay") return; // the replay's own link
    const room = this.session.room;
    const base = appBase();
    const joining = this.invite || this.autoJoin;
    const inRoom = room && room.max_players > 1 && !(joining && joining !== room.room);
    const path = inRoom ? `${base}r/${room.room}` : joining ? `${base}r/${joining}` : base;
    // An invite-only room's link carries its key (4.32): the address bar is the link.
    const key = inRoom ? room.key : joining ? this.inviteKey : null;
    const search = key ? `?k=${encodeURIComponent(key)}` : "";
    if (location.pathname !== path || location.search !== search)
      history.replaceState(null, "", path + search);
  }

  // -- screens ---------------------------------------------------------------------------

  view() {
    if (this.overlay?.kind === "replay") return "replay"; // a shared link plays without a name
    if (this.ask) return this.ask;
    if (this.overlay) return this.overlay.kind;
    return this.session.phase();
  }

  render(msg) {
    if (this.rendering) return; // a screen being built may send (a board asked for)
    this.rendering = true;
    try {
      const kind = this.view();
      if (!this.screen || this.screen.kind !== kind || this.screen.overlay !== this.overlay) {
        this.screen = kind === "replay" ? this.replayMod.replay(this) : screens[kind](this);
        this.screen.overlay = this.overlay;
        this.screen.kind = kind;
        this.root.replaceChildren(this.screen.el);
        this.screen.focus?.();
      }
      this.screen.update(msg);
      this.announce();
    } finally {
      this.rendering = false;
    }
  }

  /**
   * The status line and the others' news, also told to a screen reader (politely, at most
   * once a second: announce.js); a refusal is news of its own kind, so that the status of
   * a move after it does not replace it before it is read.
   */
  announce() {
    const st = this.session.status;
    if (st.serial !== this.told && st.text) {
      this.told = st.serial;
      this.announcer.say(st.text, st.kind === "error" ? "refusal" : "status");
    }
    const news = this.session.news;
    if (news?.length) {
      this.announcer.say(news.join("; "), "news");
      this.session.news = null;
    }
  }

  open(overlay) {
    this.overlay = overlay;
    this.render();
  }
  close() {
    this.overlay = null;
    this.render();
  }

  confirmDaily(page) {
    const streak = this.session.standing ? ` Your daily streak: ${this.session.standing.streak}.` : "";
    const q =
      page.you === null
        ? `Today's daily deal (${page.date}): your one attempt that counts on the leaderboard${page.par ? ` (par ${page.par} moves)` : ""}.${streak} Start now?`
        : `Today's daily deal (${page.date}): you have played the attempt that counts; this one is practice.${streak} Start now?`;
    screens.confirm(this, q, () => this.send({ t: "daily" }));
  }

  askDaily() {
    if (this.dailyAsk) return;
    this.dailyAsk = this.send({ t: "board", kind: "daily", limit: 1 });
  }

  /** Keys: the terminal client's (client/screens.py BINDINGS), on whatever screen shows. */
  key(e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (document.querySelector("dialog[open]")) return; // a dialog answers its own keys
    const t = e.target;
    if (t instanceof HTMLElement && t.matches("input, select, textarea")) {
      if (e.key === "Escape") t.blur();
      return;
    }
    // Enter and Space on a button or link the keyboard reached press it, as everywhere on
    // the web (the race's tap and the room's ready are for the board and the page). One
    // a click left focused leaves them to the keys: Space after clicking "16x" in a
    // replay plays, as it did. (Chromium makes a clicked button :focus-visible at the
    // first key, so the app keeps its own note of how the focus came.)
    const control = t instanceof HTMLElement && t.matches("button, a[href], summary");
    if (control && (e.key === "Enter" || e.key === " ") && this.keyFocus === t) return;
    if (e.key === "?") {
      screens.help(this);
      e.preventDefault();
      return;
    }
    if (this.screen?.key?.(e.key, e)) e.preventDefault();
  }
}

/** Keep `value` as JSON, or (null) remove it. */
function writeJson(storage, key, value) {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, JSON.stringify(value));
  } catch {
    /* storage full or off: a drop still resumes, a reload without resends */
  }
}

function readJson(storage, key) {
  try {
    return JSON.parse(storage.getItem(key) ?? "null");
  } catch {
    return null;
  }
}

const root = document.getElementById("app");
if (root) new Client(root).start();
