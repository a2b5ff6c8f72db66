// Issue 29's daily extras (docs/protocol.md 4.28): the countdown to the next daily deal, the
// archive of past dailies, and how cards look (a four-colour deck, suits as letters).
// The countdown runs from when the server's `next_daily_ms` arrived, on the page's
// monotonic clock: a browser whose own clock or time zone is wrong still counts to the
// server's midnight. No DOM at import: session.js (tested under Node) reads `suitMark`.

/** The suits' symbols, and their letters in the plain-letters mode. */
export const GLYPHS = { S: "♠", H: "♥", D: "♦", C: "♣" };

/** How cards look: kept per player in this browser (localStorage), applied to the page. */
export const deck = { four: false, letters: false };

/** A suit as the player chose to read it: "♠", or "S" in the plain-letters mode. */
export function suitMark(suit) {
  return deck.letters ? suit : (GLYPHS[suit] ?? suit);
}

const deckKey = (name) => `yukon.deck.${name}`;

/** The deck settings of player `name` in `store` (localStorage), into `deck`. */
export function loadDeck(store, name) {
  let saved = null;
  try {
    saved = JSON.parse(store.getItem(deckKey(name)) ?? "null");
  } catch {
    saved = null;
  }
  deck.four = !!saved?.four;
  deck.letters = !!saved?.letters;
}

/** Keep `deck` as player `name`'s settings in `store`. */
export function saveDeck(store, name) {
  store.setItem(deckKey(name), JSON.stringify({ four: deck.four, letters: deck.letters }));
}

/** The page follows `deck`: classes on <html> that client.css colours cards by. */
export function applyDeck(root) {
  root.classList.toggle("four-colour", deck.four);
  root.classList.toggle("suit-letters", deck.letters);
}

// -- the countdown ---------------------------------------------------------------------------

/** The server's last word on the next daily: `ms` to go when it arrived at `at` (monotonic). */
export const nextDaily = { ms: null, at: 0 };

/** Note a message's `next_daily_ms` (welcome, daily_deal, board_page), received at `now`. */
export function heard(msg, now) {
  if (typeof msg.next_daily_ms === "number") {
    nextDaily.ms = msg.next_daily_ms;
    nextDaily.at = now;
  }
}

/** Milliseconds left until the next daily at monotonic `now`, or null before the server said. */
export function dailyLeft(now) {
  return nextDaily.ms === null ? null : Math.max(0, nextDaily.ms - (now - nextDaily.at));
}

/** "5:04:09" (hours, minutes, seconds), rounded up: 0:00:00 only when the day has come. */
export function formatLeft(ms) {
  const total = Math.ceil(ms / 1000);
  const two = (n) => String(n).padStart(2, "0");
  return `${Math.floor(total / 3600)}:${two(Math.floor(total / 60) % 60)}:${two(total % 60)}`;
}

/** The countdown as a sentence, or "" before the server said. */
export function countdownText(now) {
  const left = dailyLeft(now);
  if (left === null) return "";
  return left > 0 ? `Next daily deal in ${formatLeft(left)}` : "The next daily deal is here";
}

// -- the archive ------------------------------------------------------------------------------

/** `#archive=YYYY-MM-DD` (the /leaderboard page's link): the day to play, or null. */
export function archiveLink(hash) {
  const m = /^#archive=(\d{4}-\d\d-\d\d)$/.exec(hash);
  return m ? m[1] : null;
}

/** The day before `date` (YYYY-MM-DD). */
export function dayBefore(date) {
  return new Date(Date.parse(`${date}T12:00:00Z`) - 86400000).toISOString().slice(0, 10);
}
