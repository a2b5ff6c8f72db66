// Runs server/pages/web/quick.js's poolText and session.js's `pool` handling on what
// tests/web/test_quick_js.py sends on stdin: {"texts": [[pool, now]...], "steps": [message...]}.
// Output: {"texts": [[line...]...], "pools": [session.pool after each step]}.
import { poolText } from "../../server/pages/web/quick.js";
import { Session } from "../../server/pages/web/session.js";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { texts, steps } = JSON.parse(input);
const s = new Session();
const pools = steps.map((m, i) => (s.receive(m, 1000 * i), s.pool));
process.stdout.write(JSON.stringify({ texts: texts.map(([p, now]) => poolText(p, now)), pools }));
