// Runs server/pages/web/announce.js on what tests/web/test_announce_js.py sends on stdin:
// {"gap": ms, "events": [[ms, "say", text, kind] | [ms, "flush"]...]}, on a fake clock.
// Output: {"told": [[ms, text]...]}: what the live region was given, and when.
import { Announcer } from "../../server/pages/web/announce.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { gap, events } = JSON.parse(input);
let clock = 0;
const told = [];
const a = new Announcer((text) => told.push([clock, text]), { gapMs: gap, now: () => clock });
for (const [at, what, text, kind] of events) {
  clock = at;
  if (what === "say") a.say(text, kind);
  else a.flush();
}
process.stdout.write(JSON.stringify({ told }));
