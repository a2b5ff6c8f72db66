// Runs server/pages/web/dailylog.js on what tests/web/test_dailylog_js.py sends: chains (as
// served) with optional kept heads, and values to write canonically. Prints one JSON document:
// {"chains": [{ok, head, problem, extends}...], "canonical": [text | {"error": message}...],
//  "days": [{good, text}...]} (days are checked in order, on one kept head).
import * as log from "../../server/pages/web/dailylog.js";

const input = JSON.parse(await new Promise((resolve) => {
  let text = "";
  process.stdin.on("data", (d) => (text += d));
  process.stdin.on("end", () => resolve(text));
}));

class Memory {
  constructor() { this.items = new Map(); }
  getItem(k) { return this.items.has(k) ? this.items.get(k) : null; }
  setItem(k, v) { this.items.set(k, String(v)); }
}

const chains = [];
for (const c of input.chains) chains.push(await log.verifyChain(c.entries, c.head));
const canonical = input.canonical.map((v) => {
  try { return log.canonical(v); } catch (e) { return { error: e.message }; }
});
const days = [];
const storage = new Memory();
for (const d of input.days) {
  days.push(await log.checkDay(d.date, d.commitment, async (path) => {
    if (path !== "daily/log?format=json") throw new Error(`asked for ${path}`);
    if (d.served === "fail") throw new Error("offline");
    return d.served;
  }, storage));
}
process.stdout.write(JSON.stringify({ chains, canonical, days }));
