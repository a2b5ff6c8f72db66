// What the client knows, as the server told it, plus the card the player holds: the
// browser's client/state.py. No DOM and no socket: `receive` takes a server message and the
// player's actions return the messages to send. The server is the authority: a move is
// applied only when its `accepted` comes (with the card it turned up: the only way a hidden
// card reaches us), and a move the local rules think illegal is still sent, so that the
// player reads the server's reason.

import { suitMark } from "./dailydeck.js";
import { SUITS, cardLabel } from "./rules.js";
import { RaceBoard } from "./raceboard.js";

// The race's board is a module of its own (raceboard.js); its callers still find it here.
export { RaceBoard };

/** The marker of a `finish` among the sent moves (protocol: the server plays the rest). */
export const FINISH = "finish";
/** `pending`'s and `played`'s mark for a numbered resign (answered with `race`, 4.10). */
export const RESIGN = "resign";
const resent = ([seq, move]) =>
  move === null
    ? { t: "undo", seq }
    : move === FINISH || move === RESIGN
      ? { t: move, seq }
      : { t: "move", seq, move };

/** A name's most characters (code points, protocol 4.1). */
export const NAME_MAX = 20;

/**
 * What the name box says of `text` as the player types: {ok, text}. The limit shows all
 * along (a name is never cut silently), and a blank name is refused with a word.
 */
export function nameCheck(text) {
  const n = [...text.trim()].length;
  if (!n) return { ok: false, text: `type a name: 1-${NAME_MAX} characters` };
  if (n > NAME_MAX) return { ok: false, text: `${n}/${NAME_MAX}: ${n - NAME_MAX} too many` };
  return { ok: true, text: `${n}/${NAME_MAX}` };
}

/** "a, b and c": names read as a list. */
export function listed(names) {
  return names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

const OUTCOME_WORD = { timeout: "out of time", resigned: "resigned", stuck: "stuck", abandoned: "abandoned" };

/**
 * The results' headline, from the result's ranks alone, so that it tells the table's story:
 * "You won in 3:35.9, #1 of 3", "You won with hints in 4:02.0, #2 of 3", "You finished #3
 * of 3 (resigned)".
 */
export function headline(result, me) {
  const mine = result.ranks.find((x) => x.name === me);
  if (!mine) return "The race is over";
  const n = result.ranks.length;
  const place = n > 1 ? `, #${mine.rank} of ${n}` : "";
  if (mine.outcome === "won") {
    return `You won${mine.hinted ? " with hints" : ""} in ${formatMs(mine.time_ms)}${place}`;
  }
  const word = OUTCOME_WORD[mine.outcome] ?? mine.outcome;
  return `You finished #${mine.rank} of ${n} (${word}${mine.hinted ? ", hinted" : ""})`;
}

/** A second tap on the same card within this many ms is a double tap. */
export const DOUBLE_TAP_MS = 400;

/** "7S" as "7♠", "TH" as "10♥": how a player reads a card ("7S" with suits as letters). */
export function label(card) {
  return (card[0] === "T" ? "10" : card[0]) + suitMark(card[1]);
}

/** "7S>4" as "7♠ → 4", "AH>F" as "A♥ → foundation". */
export function moveLabel(move) {
  const [card, dest] = move.split(">");
  return `${/^[A2-9TJQK][SHDC]$/.test(card) ? label(card) : card} → ${dest === "F" ? "foundation" : dest}`;
}

/** A race time as the terminal client and /leaderboard show it: "0:51.7", "1:40:00.0". */
export function formatMs(ms) {
  const tenths = Math.floor(ms / 100);
  const s = Math.floor(tenths / 10);
  const h = Math.floor(s / 3600);
  const m = Math.floor(s / 60) % 60;
  const ss = String(s % 60).padStart(2, "0");
  const head = h ? `${h}:${String(m).padStart(2, "0")}` : `${m}`;
  return `${head}:${ss}.${tenths % 10}`;
}

/** The standings' order: most cards home, best score, then fastest finish among winners. */
function byProgress(a, b) {
  const fin = (p) => (p.state === "won" && p.time_ms !== null ? p.time_ms : Infinity);
  return b.foundations - a.foundations || b.score - a.score || fin(a) - fin(b);
}

export class Session {
  constructor() {
    this.outside(); // no room, race, progress, result or daily deal yet
    this.me = null;
    this.board = null;
    this.history = null;
    /** My rating and streak ({rating, provisional, streak, best_streak}), or null. */
    this.standing = null;
    /** The player page asked for (`player_page`, or {error}), or null. */
    this.playerPage = null;
    /** Waiting in the quick-race pool: the last `pool` with `at` (ms, monotonic), or null (quick.js). */
    this.pool = null;
    /** Daily deals by room code: a resumed daily room comes without its `daily_deal`. */
    this.dailies = {};
    this.starting = false;
    /** A touch screen: words name buttons and taps, not keys (app.js sets it). */
    this.touch = false;
    this.watchMs = 0;
    this.watchAt = null;
    this.status = { text: "", kind: "info", serial: 0 };
    /** The check of a revealed code against the commitment: {text, good}, or null. */
    this.fairness = null;
    /** My last run's post-mortem (a postmortem_answer, or {race, text} refused). */
    this.postmortem = null;
    this.awaitingResync = false;
    this.lost = false;
    /** My view could not follow the server: the app reconnects for a fresh resync. */
    this.outOfStep = false;
    /** Others whose state just changed, for a screen reader (app.js announces them). */
    this.news = null;
  }

  say(text, kind = "info") {
    this.status = { text, kind, serial: this.status.serial + 1 };
  }

  /** An action that sends nothing: say why; no messages. */
  refuse(text, kind = "info") {
    this.say(text, kind);
    return [];
  }

  /** lobby, room, race, watch or results: which screen shows. */
  phase() {
    const room = this.room;
    if (!room) return "lobby";
    if (this.result && room.state === "finished") return "results";
    if (room.state === "lobby" || room.state === "countdown") return "room";
    if (this.race) return "race";
    if (room.you === "spectator" && room.state === "racing") return "watch";
    return "room";
  }

  get undoAllowed() {
    return this.room ? this.room.undo : true;
  }
  get hintsAllowed() {
    return !!this.room?.hints;
  }
  get isHost() {
    return !!this.room && this.room.host === this.me;
  }
  get isDaily() {
    return !!this.room && this.room.max_players === 1 && !this.room.ghost;
  }
  raceDone() {
    return !!this.race && this.race.isDone(this.undoAllowed);
  }

  countdownLeft(now) {
    return this.countdownUntil === null ? null : Math.max(0, this.countdownUntil - now);
  }

  /** The clock in the header: my race's, or (watching) the room's run on from `progress`. */
  clockMs(now) {
    if (this.race) return this.race.elapsedMs(now);
    if (!this.progress) return null;
    let ms = this.watchMs;
    if (this.watchAt !== null) ms += Math.floor(now - this.watchAt);
    return Math.max(0, Math.min(ms, this.room ? this.room.time_limit * 1000 : ms));
  }

  standWatch(now) {
    const ms = this.clockMs(now);
    if (!this.race && ms !== null) {
      this.watchMs = ms;
      this.watchAt = null;
    }
  }

  /** Take one server message; the messages to send because of it. `now`: ms, monotonic. */
  receive(msg, now) {
    switch (msg.t) {
      case "welcome":
        this.me = msg.name;
        this.onStanding(msg);
        // The welcome names the room kept for us (its `room` follows at once); nil after a
        // drop means our place is gone (protocol 4.15): no timer has to guess it.
        this.awaitingResync = this.lost && !!this.room;
        this.lost = false;
        if (this.awaitingResync && !msg.room) this.resyncMissed();
        break;
      case "room":
        this.onRoom(msg, now);
        break;
      case "left":
        this.outside();
        this.say(`you left room ${msg.room}`);
        break;
      case "countdown":
        this.countdownUntil = now + msg.ms;
        this.starting = true;
        break;
      case "daily_deal":
        this.daily = msg;
        this.race = null;
        this.starting = true;
        this.say(
          `daily deal ${msg.date}, attempt ${msg.attempt}: ${msg.practice ? "practice" : "the attempt that counts"}`,
        );
        break;
      case "race":
        return this.onRace(msg, now);
      case "accepted":
        this.onAccepted(msg, now);
        break;
      case "refused": {
        const move = this.race ? this.race.answered(msg.seq) : null;
        const what = move === FINISH ? "finish" : move && moveLabel(move);
        this.say(what ? `${what}: ${msg.reason}` : msg.reason, "error");
        break;
      }
      case "undone":
        if (this.race) {
          this.race.undone(msg, now);
          this.say(`took back ${moveLabel(msg.move)}`);
        }
        break;
      case "progress":
        this.onProgress(msg, now);
        break;
      case "result":
        this.result = msg;
        this.countdownUntil = null;
        if (this.race) this.race.pick = null;
        this.say("the race is over");
        break;
      case "pool": // the quick-race pool (protocol 4.26; quick.js shows it)
        this.pool = msg.state === "waiting" ? { ...msg, at: now } : null;
        break;
      case "board_page":
        this.board = msg;
        if (msg.kind === "daily" && msg.you?.streak != null && this.standing) {
          this.standing = { ...this.standing, streak: msg.you.streak };
        }
        break;
      case "history_page":
        this.history = msg;
        break;
      case "player_page":
        this.onPlayerPage(msg);
        break;
      case "reported": // a report of mine is with the operators (protocol 4.33)
        this.say(`your report of ${msg.player} is with the server's operators`, "good");
        break;
      case "hint_answer":
        this.onHint(msg);
        break;
      case "error":
        if (this.race) this.race.hintAsked = false;
        if (msg.seq !== null && msg.seq !== undefined && this.race) this.race.answered(msg.seq);
        if (msg.code === "room_closed") this.outside();
        if (msg.code === "unknown_player") this.playerPage = { error: msg.text };
        this.say(msg.text, "error");
        break;
      default:
        break; // a type this client does not know: ignored (protocol 1.3)
    }
    return [];
  }

  // -- ratings and streaks (docs/protocol.md 4.27) -------------------------------------------

  /** My rating and streak, from the welcome (an older server leaves them out: none). */
  onStanding(msg) {
    this.standing =
      msg.streak === undefined
        ? null
        : { rating: msg.rating ?? null, provisional: !!msg.provisional, streak: msg.streak, best_streak: msg.best_streak ?? 0 };
  }

  /** A player's page; my own also brings my rating and streak up to date. */
  onPlayerPage(msg) {
    this.playerPage = msg;
    if (msg.name === this.me) {
      const { rating, provisional, streak, best_streak } = msg;
      this.standing = { rating, provisional, streak, best_streak };
    }
  }

  outside() {
    Object.assign(this, {
      room: null,
      race: null,
      progress: null,
      result: null,
      daily: null,
      countdownUntil: null,
      fairness: null,
    });
  }

  onRoom(msg, now) {
    this.awaitingResync = false;
    if (msg.quick) this.pool = null; // the pool formed this room: no longer waiting
    if (msg.max_players === 1 && !msg.ghost) {
      if (!this.daily && this.dailies[msg.room]) this.daily = this.dailies[msg.room];
      else if (this.daily && !this.dailies[msg.room]) this.dailies[msg.room] = this.daily;
    }
    const old = this.room;
    if (old && old.room === msg.room) this.tellChanges(old, msg);
    else {
      this.result = null;
      this.progress = null;
      if (msg.state !== "racing") this.race = null;
      if (msg.max_players > 1 && (msg.state === "racing" || msg.state === "countdown")) {
        this.say(`back in room ${msg.room}: the race goes on`, "good");
      } else if (msg.max_players > 1) {
        this.say(`room ${msg.room}: ${listed(msg.players.map((p) => p.name))}`);
      } else if (msg.ghost && msg.state === "lobby") {
        this.say(`${msg.ghost}'s run as a ghost: start when you are ready`);
      }
    }
    if (msg.state !== "racing") this.standWatch(now);
    else if (this.watchAt === null && this.progress && !this.lost) this.watchAt = now;
    this.room = msg;
    if (msg.state !== "countdown") this.countdownUntil = null;
    if (msg.state === "lobby" || msg.state === "finished") this.starting = false;
    if (msg.state === "lobby") {
      this.race = null;
      this.progress = null;
      this.result = null;
    }
  }

  tellChanges(old, now) {
    const before = new Map(old.players.map((p) => [p.name, p]));
    const after = new Map(now.players.map((p) => [p.name, p]));
    const news = [];
    const rematch = old.state === "finished" && now.state === "lobby";
    const ready = [];
    const unready = [];
    const joined = [...after.keys()].filter((n) => !before.has(n));
    const left = [...before.keys()].filter((n) => !after.has(n));
    if (joined.length) news.push(`${listed(joined)} joined`);
    if (left.length) news.push(`${listed(left)} left`);
    for (const [n, p] of after) {
      const q = before.get(n);
      if (!q) continue;
      if (q.connected && !p.connected) news.push(`${n} lost the connection`);
      else if (!q.connected && p.connected) news.push(`${n} is back`);
      else if (p.ready !== q.ready && n !== now.host && now.state === "lobby" && !rematch)
        (p.ready ? ready : unready).push(n);
    }
    // A rematch makes everyone not ready at once: one line for it, not one per player.
    if (ready.length) news.push(`${listed(ready)} ${ready.length > 1 ? "are" : "is"} ready`);
    if (unready.length) news.push(`${listed(unready)} ${unready.length > 1 ? "are" : "is"} not ready`);
    if (now.host !== old.host) news.push(`${now.host} is the host now`);
    if (rematch) {
      const me = now.players.find((p) => p.name === this.me);
      const say = this.touch ? "press Ready" : "press Ready (space)";
      news.push(
        `rematch: a new deal; ${now.host === this.me ? "you start it once the others are ready" : me ? say : "you watch"}`,
      );
    }
    if (news.length) this.say(news.join("; "));
  }

  onRace(msg, now) {
    const race = this.race;
    this.countdownUntil = null;
    this.result = null;
    if (race && race.resyncing && race.rules === msg.view.split(" ")[0]) {
      const again = race.resync(msg, now);
      this.say("connection back: the race goes on", "good");
      return again.map(resent);
    }
    if (race && race.pending.get(msg.seq) === RESIGN) {
      // The answer to my numbered resign: kept among what was played, so a resync resends it.
      const played = [...race.played, [msg.seq, RESIGN]];
      race.load(msg, now);
      race.changed();
      race.played = played;
      race.pending.delete(msg.seq);
      this.say("you resigned; the others race on", "error");
      return [];
    }
    if (race && race.finishing !== null) {
      // The answer to `finish`: my whole race after the moves the server played for me.
      const played = [...race.played, [race.finishing, FINISH]];
      race.load(msg, now);
      race.changed();
      race.played = played;
      race.pending.clear();
      race.finishing = null;
      this.say(
        race.state === "won" ? "finished: all 52 cards home, you won!" : `finished: ${race.foundations} cards home`,
        "good",
      );
      return [];
    }
    this.race = new RaceBoard(msg, now);
    this.fairness = null;
    const starting = this.starting;
    this.starting = false;
    const d = this.daily;
    const deal = d ? `daily deal ${d.date}, attempt ${d.attempt} (${d.practice ? "practice" : "it counts"}): ` : "";
    if (msg.state === "stuck") this.say(this.stuckText(), "error");
    else if (starting && !d)
      this.say(
        this.touch
          ? "go! drag a card, or tap it then its place"
          : "go! drag a card, or click it then its place; ? shows every key",
        "good",
      );
    else this.say(deal + (starting ? "go!" : "back in the race"), "good");

    return [];
  }

  onAccepted(msg, now) {
    const race = this.race;
    if (!race) return;
    if (!race.accepted(msg, now)) {
      race.resyncing = true;
      this.outOfStep = true;
      this.say("out of step with the server: fetching the position again", "error");
      return;
    }
    if (msg.state === "won") this.say("all 52 cards home: you won!", "good");
    else if (msg.state === "stuck") this.say(this.stuckText(), "error");
    else this.say(moveLabel(msg.move) + (msg.turned ? `, turned up ${label(msg.turned)}` : ""));
  }

  stuckText() {
    if (!this.undoAllowed) return "stuck: no legal move left, and this room has no undo";
    return this.touch
      ? "stuck: no legal move left. Undo takes back a move, Resign ends your race"
      : "stuck: no legal move left. u takes back a move, r resigns";
  }

  onProgress(msg, now) {
    const racing = this.room?.state === "racing" && !this.lost;
    const before = new Map((this.progress?.players ?? []).map((p) => [p.name, p.state]));
    this.progress = msg;
    this.watchMs = msg.elapsed_ms;
    this.watchAt = racing ? now : null;
    const others = msg.players.filter((p) => p.name !== this.me && before.has(p.name));
    this.news = others
      .filter((p) => before.get(p.name) !== p.state)
      .map((p) => `${p.name}: ${p.state === "timeout" ? "out of time" : p.state}, ${p.foundations} cards home`);
    // An opponent's milestones as the bars show them: each quarter of the deck home.
    // (A race's first progress, a resume's too, only sets where everyone stands.)
    if (!before.size || !this.milestones) this.milestones = new Map();
    for (const p of msg.players) {
      const was = this.milestones.get(p.name);
      const now = Math.floor(p.foundations / 13);
      this.milestones.set(p.name, now);
      if (p.name !== this.me && was !== undefined && now > was && now < 4 && p.state === "playing")
        this.news.push(`${p.name}: ${now * 13} cards home`);
    }
    const race = this.race;
    if (!race || !this.me) return;
    const mine = msg.players.find((p) => p.name === this.me);
    if (!mine) return;
    const was = race.state;
    race.state = mine.state;
    race.foundations = mine.foundations;
    if (mine.time_ms !== null) race.finalMs = mine.time_ms;
    race.clockMs = msg.elapsed_ms;
    race.clockAt = now;
    if (mine.state !== was) {
      const say = {
        resigned: ["you resigned; the others race on", "error"],
        timeout: ["time is up", "error"],
        stuck: [this.stuckText(), "error"],
        won: ["all 52 cards home: you won!", "good"],
      }[mine.state];
      if (say) this.say(...say);
    }
  }

  onHint(msg) {
    const race = this.race;
    if (!race) return;
    race.hintAsked = false;
    if (msg.seq !== race.lastSeq || race.pending.size) {
      this.say(`that hint was for an earlier position: ${this.touch ? "Hint" : "h"} asks again`);
    } else if (msg.verdict === "win" && msg.move) {
      race.hint = msg.move;
      this.say(`hint: ${moveLabel(msg.move)}`, "good");
    } else if (msg.verdict === "best" && msg.move) {
      race.hint = msg.move;
      this.say(`hint: best move, not proven: ${moveLabel(msg.move)}`);
    } else if (msg.verdict === "lost") {
      const back = this.touch ? "Undo takes a move back" : "u takes a move back";
      this.say(`hint: no win from here${this.undoAllowed ? `: ${back}` : ""}`, "error");
    } else {
      this.say("hint: can't tell, this position is too deep to work out quickly");
    }
  }

  /** The connection dropped: the clock stands, the next `race` is a resync. */
  connectionLost(now) {
    this.standWatch(now);
    if (this.race && this.race.frozenMs === null) this.race.frozenMs = this.race.elapsedMs(now);
    this.lost = true;
    if (this.race) this.race.resyncing = true;
  }

  /** The welcome came back without my room (`room` nil): the server no longer has it. */
  resyncMissed() {
    if (!this.awaitingResync) return false;
    this.awaitingResync = false;
    const code = this.room ? this.room.room : "";
    this.outside();
    this.say(`room ${code} is gone (the server restarted, or you were away too long)`, "error");
    return true;
  }

  /** Standings, leader first; my own line from my race when it is ahead (protocol 4.11). */
  standings() {
    if (!this.progress) return [];
    const race = this.race;
    // A ghost room's recorded run (protocol 4.23) goes alongside, marked: it may be my own.
    const ghost = this.progress.ghost ? [{ ...this.progress.ghost, ghost: true }] : [];
    return this.progress.players
      .map((p) =>
        race && p.name === this.me && race.moves > p.moves
          ? { ...p, state: race.state, foundations: race.foundations, score: race.score, moves: race.moves }
          : p,
      )
      .concat(ghost)
      .sort(byProgress);
  }

  // -- what the player does in a race ----------------------------------------------------

  playing() {
    const race = this.race;
    if (!race) return null;
    if (race.isDone(this.undoAllowed)) {
      this.say("your race is over; wait for the others", "error");
      return null;
    }
    return race;
  }

  /** Hold `pick` ({source, card}, or null: nothing) from a fresh tap; nothing to send. */
  hold(race, pick) {
    race.pick = pick;
    race.tapAt = null;
    this.sayHeld(race);
    return [];
  }

  /** Said, as a sighted player sees it lit: which card is held, and what comes with it. */
  sayHeld(race) {
    const pick = race.pick;
    if (!pick) return;
    const up = pick.source ? race.faceUp(pick.source) : [pick.card];
    const on = up.length - 1 - up.indexOf(pick.card);
    const where = pick.source ? `column ${pick.source}` : "its foundation";
    this.say(`holding ${cardLabel(pick.card)} (${where})${on > 0 ? ` with ${on} card${on > 1 ? "s" : ""} on it` : ""}`);
  }

  sendMove(race, move) {
    this.hold(race, null);
    return [{ t: "move", seq: race.takeSeq(move), move }];
  }

  /** A column key: pick its exposed card, drop the held card there, or (its own) go deeper. */
  pressColumn(n) {
    const race = this.playing();
    if (!race) return [];
    const p = race.pick;
    const up = race.faceUp(n);
    if (p && p.source !== n) return this.sendMove(race, `${p.card}>${n}`);
    if (!up.length) return this.refuse(`column ${n} is empty`);
    const i = p ? up.indexOf(p.card) : 0;
    return this.hold(race, { source: n, card: i > 0 ? up[i - 1] : up.at(-1) });
  }

  /** `f`: the held card home; with nothing held (option T), pick a foundation's top. */
  pressFoundation() {
    const race = this.playing();
    if (!race) return [];
    const p = race.pick;
    if (p?.source) return this.sendMove(race, `${p.card}>F`);
    if (p) return this.step(-1) ?? [];
    return race.rules.includes("T") ? this.pickFoundation(null) : this.refuse("pick a card first: 1-7, or click it");
  }

  pickFoundation(suit) {
    const race = this.race;
    if (!race.rules.includes("T")) {
      return this.refuse("a card on a foundation stays there (these rules have no take-back)");
    }
    const tops = race.tops();
    const card = suit === null ? tops.find(Boolean) : tops[SUITS.indexOf(suit)];
    return card ? this.hold(race, { source: 0, card }) : this.refuse("the foundations are empty");
  }

  /** Move the pick `delta` cards deeper (negative: towards the exposed card). */
  step(delta) {
    const race = this.race;
    const p = race?.pick;
    if (!p) return;
    race.tapAt = null;
    if (p.source === 0) {
      const tops = race.tops().filter(Boolean);
      const i = tops.indexOf(p.card);
      if (i >= 0) race.pick = { source: 0, card: tops[(((i - delta) % tops.length) + tops.length) % tops.length] };
      this.sayHeld(race);
      return;
    }
    const up = race.faceUp(p.source);
    const i = up.indexOf(p.card);
    race.pick = i < 0 ? null : { source: p.source, card: up[Math.max(0, Math.min(up.length - 1, i - delta))] };
    this.sayHeld(race);
  }

  cancel() {
    if (this.race) this.hold(this.race, null);
    return [];
  }

  /** Enter (or a click on the held card): home if it can go; a second tap: a column. */
  tap(now) {
    const race = this.playing();
    if (!race) return [];
    const p = race.pick;
    if (!p) return this.refuse("pick a card first: 1-7, or click it");
    const last = race.tapAt;
    race.tapAt = null;
    const double = last && last.card === p.card && now - last.at <= DOUBLE_TAP_MS;
    if (!double && p.source !== 0) {
      const sent = this.home(race, p.card);
      if (sent) return sent;
      race.tapAt = { at: now, card: p.card };
      return this.refuse(`${label(p.card)} cannot go to its foundation now; tap again to find a column`);
    }
    return this.toColumn(race, p.card);
  }

  toColumn(race, card) {
    const dest = race.tableauFor(card);
    if (dest === null) return this.refuse(`no column takes the ${label(card)} now`);
    return this.sendMove(race, `${card}>${dest}`);
  }

  /** A double click or double tap on a face-up card: home if it can go, else a column. */
  double(n, card) {
    const race = this.playing();
    if (!race || !race.faceUp(n).includes(card)) return [];
    return this.home(race, card) ?? this.toColumn(race, card);
  }

  /** `card` to its foundation if it may go now, else undefined. */
  home(race, card) {
    if (race.legalMoves().includes(`${card}>F`)) return this.sendMove(race, `${card}>F`);
  }

  /** A click on a face-up card: pick it; on the held card, a tap; else a drop on its column. */
  clickCard(n, card, now) {
    const race = this.playing();
    if (!race) return [];
    const p = race.pick;
    if (p && p.card === card) return this.tap(now);
    if (p && p.source !== n) return this.clickDest(String(n));
    return this.hold(race, { source: n, card });
  }

  /** A click (or a drop) on a destination: "1".."7" or "F". */
  clickDest(dest) {
    const race = this.playing();
    if (!race) return [];
    const p = race.pick;
    if (dest === "F") {
      if (!p) return this.pickFoundation(null);
      return p.source === 0 ? this.cancel() : this.sendMove(race, `${p.card}>F`);
    }
    const n = Number(dest);
    if (!p) return this.pressColumn(n);
    return p.source === n ? this.cancel() : this.sendMove(race, `${p.card}>${n}`);
  }

  /** A drag of `card` from column `source` (0: a foundation) dropped on `dest`. */
  drop(source, card, dest) {
    const race = this.playing();
    if (!race || dest === String(source)) return [];
    return this.sendMove(race, `${card}>${dest}`);
  }

  /** Every card face up: the server plays the rest for me, checking each move (`finish`). */
  finish() {
    const race = this.playing();
    if (!race) return [];
    if (race.finishing !== null) return this.refuse("still finishing…");
    if (!race.canFinish()) return this.refuse("Finish needs every card face up", "error");
    this.cancel();
    race.finishing = race.takeSeq(FINISH);
    this.say("finishing: the server plays the last moves…");
    return [{ t: "finish", seq: race.finishing }];
  }

  undo() {
    const race = this.race;
    if (!race) return [];
    if (!this.undoAllowed) return this.refuse("this room has no undo", "error");
    if (race.isDone(true)) return this.refuse("your race is over", "error");
    this.cancel();
    return [{ t: "undo", seq: race.takeSeq(null) }];
  }

  resign() {
    if (!this.race || this.raceDone()) return [];
    this.cancel();
    // Numbered, so that it is kept and resent after a resume like a move (protocol 4.19).
    return [{ t: "resign", seq: this.race.takeSeq(RESIGN) }];
  }

  askHint() {
    const race = this.playing();
    if (!race) return [];
    if (!this.hintsAllowed) return this.refuse("this room gives no hints", "error");
    if (race.hintAsked) return this.refuse("still thinking about the last hint…");
    race.hintAsked = true;
    this.say("thinking…");
    return [{ t: "hint" }];
  }
}
