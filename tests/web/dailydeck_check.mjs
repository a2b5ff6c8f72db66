// Drives server/pages/web/dailydeck.js under Node (no DOM): the countdown counted from a
// message's next_daily_ms on a monotonic clock the script sets, whatever Date says; the
// deck's settings kept per name in a stand-in localStorage; suits as letters; the
// archive's link. Prints one JSON object of what it saw, for tests/web/test_dailydeck_js.py.
import * as d from "../../server/pages/web/dailydeck.js";

const out = {};
// A wall clock days off changes nothing: only the message and the monotonic time count.
Date.now = () => 0;
out.before = d.countdownText(1000);
d.heard({ t: "welcome", next_daily_ms: 6 * 3600 * 1000 }, 1000);
out.start = d.countdownText(1000);
out.later = d.countdownText(1000 + 3723500);
out.done = d.countdownText(1000 + 7 * 3600 * 1000);
d.heard({ t: "board_page" }, 5000); // a page without the field changes nothing
out.unchanged = d.countdownText(1000 + 3723500);
d.heard({ t: "board_page", next_daily_ms: 90000 }, 9000);
out.again = d.countdownText(9000);

const store = new Map();
const local = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
d.loadDeck(local, "ann");
out.fresh = { ...d.deck };
out.glyphs = ["S", "H", "D", "C"].map(d.suitMark).join("");
d.deck.four = true;
d.deck.letters = true;
d.saveDeck(local, "ann");
out.letters = ["S", "H", "D", "C"].map(d.suitMark).join("");
d.loadDeck(local, "bob");
out.bob = { ...d.deck };
d.loadDeck(local, "ann");
out.ann = { ...d.deck };
store.set("yukon.deck.eve", "{not json");
d.loadDeck(local, "eve");
out.broken = { ...d.deck };

out.links = ["#archive=2026-11-28", "#archive=28-11-2026", "#token=x", ""].map(d.archiveLink);
out.before_day = d.dayBefore("2026-03-01");
console.log(JSON.stringify(out));
