// My own race's board, as the server told it (the browser's client/state.py RaceBoard): the
// view with its face-down cards, the moves sent and not yet answered, and what the local rules
// allow. No DOM and no socket; the session (session.js) keeps one per race.

import { parseView, legalMoves, destinations, applyAccepted, RANKS, SUITS } from "./rules.js";

/** States that end a race for good (`stuck` too, in a room without undo). */
const DONE = new Set(["won", "resigned", "timeout", "abandoned"]);

/** My own race: the view (face-down cards "??"), kept in step with the server. */
export class RaceBoard {
  constructor(race, now) {
    /** Sent, not answered yet: seq -> move text (null: an undo). */
    this.pending = new Map();
    /** Accepted moves and undos, in order: a restarted server may need them again. */
    this.played = [];
    /** The held card: {source: 1-7 or 0 (a foundation), card}. */
    this.pick = null;
    this.resyncing = false;
    this.hintAsked = false;
    this.hint = null;
    /** The seq of a `finish` sent and not answered yet, or null. */
    this.finishing = null;
    this.load(race, now);
  }

  load(race, now) {
    this.view = parseView(race.view);
    this.timeLimit = race.time_limit;
    this.lastSeq = race.seq;
    this.nextSeq = race.seq + 1;
    this.score = race.score;
    this.moves = race.moves;
    this.state = race.state;
    this.foundations = Object.values(this.view.foundations).reduce((n, height) => n + height);
    this.clockMs = race.elapsed_ms;
    this.clockAt = now;
    this.frozenMs = null;
    this.finalMs = null;
    this.tapAt = null;
    this.legal = null;
  }

  get rules() {
    return this.view.rules;
  }
  column(n) {
    return this.view.columns[n - 1];
  }
  /** The face-up cards of column n (1-7), bottom to top: "??" always come first. */
  faceUp(n) {
    return this.column(n).filter((c) => c !== "??");
  }
  /** The top card of each foundation in the order S H D C, or null. */
  tops() {
    return SUITS.split("").map((s) => (this.view.foundations[s] ? RANKS[this.view.foundations[s] - 1] + s : null));
  }
  legalMoves() {
    return (this.legal ??= legalMoves(this.view));
  }
  /** No card face down and the run still on: the server may play the rest (`finish`). */
  canFinish() {
    return this.state === "playing" && this.foundations < 52 && !this.view.columns.some((c) => c.includes("??"));
  }

  elapsedMs(now) {
    if (this.finalMs !== null) return this.finalMs;
    if (this.frozenMs !== null) return this.frozenMs;
    return Math.max(0, Math.min(this.clockMs + Math.floor(now - this.clockAt), this.timeLimit * 1000));
  }

  isDone(undo = true) {
    return this.finalMs !== null || DONE.has(this.state) || (this.state === "stuck" && !undo);
  }

  changed() {
    this.legal = null;
    this.tapAt = null;
    this.hint = null;
    const p = this.pick;
    if (p && !(p.source === 0 ? this.tops().includes(p.card) : this.faceUp(p.source).includes(p.card))) {
      this.pick = null;
    }
  }

  /** Apply an `accepted`; false when the view cannot follow (out of step). */
  accepted(msg, now) {
    if (!this.fresh(msg, msg.move)) return true;
    let ok = true;
    try {
      this.view = applyAccepted(this.view, msg.move, msg.turned);
    } catch {
      ok = false;
    }
    this.took(msg, now);
    return ok;
  }

  undone(msg, now) {
    if (!this.fresh(msg, null)) return;
    this.view = parseView(msg.view);
    this.took(msg, now);
  }

  /** Keep the answer to `msg.seq` (`move`; null: an undo); false if it came already. */
  fresh(msg, move) {
    if (msg.seq <= this.lastSeq && !this.pending.has(msg.seq)) return false;
    this.pending.delete(msg.seq);
    this.played.push([msg.seq, move]);
    this.lastSeq = Math.max(this.lastSeq, msg.seq);
    return true;
  }

  /** The figures and the clock an `accepted` or `undone` brings. */
  took(msg, now) {
    const { score, moves, state, foundations } = msg;
    Object.assign(this, { score, moves, state, foundations });
    this.clockMs = msg.elapsed_ms;
    this.clockAt = now;
    this.changed();
  }

  /** A refusal or error for `seq`: forget it; the move it was, if any. */
  answered(seq) {
    this.lastSeq = Math.max(this.lastSeq, seq);
    const move = this.pending.get(seq);
    this.pending.delete(seq);
    if (this.finishing === seq) this.finishing = null;
    return move ?? null;
  }

  /**
   * The resync after a reconnect (protocol 4.15, 4.19): the server's view; every move above
   * `race.seq` (a restarted server lost it) and every unanswered one goes again, in order.
   */
  resync(race, now) {
    const again = [
      ...this.played.filter(([s]) => s > race.seq),
      ...[...this.pending].filter(([s]) => s > race.seq),
    ].sort((a, b) => a[0] - b[0]);
    const played = this.played.filter(([s]) => s <= race.seq);
    this.load(race, now);
    this.changed();
    this.resyncing = false;
    this.hintAsked = false;
    this.played = played;
    this.pending = new Map(again);
    if (again.length) this.nextSeq = Math.max(this.nextSeq, again[again.length - 1][0] + 1);
    return again;
  }

  takeSeq(move) {
    const seq = this.nextSeq++;
    this.pending.set(seq, move);
    return seq;
  }

  /** The held card and every card on it (they move together). */
  lifted() {
    const p = this.pick;
    if (!p) return [];
    if (p.source === 0) return [p.card];
    const up = this.faceUp(p.source);
    const i = up.indexOf(p.card);
    return i < 0 ? [] : up.slice(i);
  }

  /** Where `card` may go by the rules: "1".."7" and "F". */
  destinations(card) {
    if (!card) return [];
    try {
      return destinations(this.view, card);
    } catch {
      return [];
    }
  }

  /** The column a double tap sends `card` to: the longest that takes it, then an empty one. */
  tableauFor(card) {
    const cols = this.legalMoves()
      .filter((m) => m.startsWith(card + ">") && m[3] !== "F")
      .map((m) => Number(m[3]));
    const length = (d) => this.column(d).length; // an empty column (0) comes after every other
    return cols.sort((a, b) => length(b) - length(a) || a - b)[0] ?? null;
  }
}
