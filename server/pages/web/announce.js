// What a sighted player sees change, told to a screen reader through one polite live region,
// at most once per `gapMs`: a burst (a dozen quick moves, the countdown over a refusal) is
// one announcement, each kind of news keeping only its latest line, so the reader is never
// flooded nor left a queue of stale ones.

export class Announcer {
  /** `write(text)` puts text in the region; `now()` in ms. */
  constructor(write, { gapMs = 1000, now = () => performance.now() } = {}) {
    this.write = write;
    this.gapMs = gapMs;
    this.now = now;
    this.queue = new Map(); // kind -> text, in the order the kinds came
    this.lastAt = -Infinity;
    this.last = "";
  }

  /** Tell `text`; a later line of the same `kind` not yet told replaces it. */
  say(text, kind = "status") {
    if (!text) return;
    this.queue.delete(kind);
    this.queue.set(kind, text);
    this.flush();
  }

  /** Tell what waits, if the gap since the last announcement is over (called each tick). */
  flush() {
    const now = this.now();
    if (!this.queue.size || now - this.lastAt < this.gapMs) return;
    let text = [...this.queue.values()].join("; ");
    this.queue.clear();
    // The same words twice are news twice: a region reads only a change of its text.
    if (text === this.last) text += "\u00a0";
    this.last = text;
    this.lastAt = now;
    this.write(text);
  }
}
