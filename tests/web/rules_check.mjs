// Runs server/pages/web/rules.js on what tests/web/test_rules_js.py sends on stdin (one JSON
// document) and writes one JSON document to stdout, so that one Node process checks
// thousands of positions. Input:
//   {"positions": [{"view": text, "cards": [card...], "move": text|null,
//                   "turned": card|null}...],
//    "malformed": [text...],
//    "calls": [[function name, argument...]...]}
// Output:
//   {"positions": [{"roundtrip": text, "moves": [...], "destinations": {card: [...]},
//                   "after": text|null} | {"error": message}...],
//    "malformed": [null (accepted) | error message...],
//    "calls": [{"ok": value} | {"error": message}...]}
// In "calls", a first argument named view is given as text and parsed first; a view that
// comes back is formatted as text.
import * as rules from "../../server/pages/web/rules.js";

const VIEW_FIRST = new Set(["legalMoves", "destinations", "applyAccepted", "isWon", "isStuck",
  "formatView", "findCard"]);

function checkPosition(p) {
  try {
    const view = rules.parseView(p.view);
    const frozen = JSON.stringify(view);
    const out = {
      roundtrip: rules.formatView(view),
      moves: rules.legalMoves(view),
      destinations: Object.fromEntries(p.cards.map((c) => [c, rules.destinations(view, c)])),
      after: p.move === null ? null : rules.formatView(rules.applyAccepted(view, p.move, p.turned)),
    };
    if (JSON.stringify(view) !== frozen) throw new Error("the view was mutated");
    return out;
  } catch (e) {
    return { error: String(e && e.message) };
  }
}

function call([name, ...args]) {
  try {
    if (VIEW_FIRST.has(name)) args[0] = rules.parseView(args[0]);
    let value = rules[name](...args);
    if (value && typeof value === "object" && "columns" in value) value = rules.formatView(value);
    return { ok: value === undefined ? null : value };
  } catch (e) {
    return { error: String(e && e.message) };
  }
}

function malformed(text) {
  try {
    rules.parseView(text);
    return null;
  } catch (e) {
    return String(e && e.message);
  }
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
process.stdout.write(JSON.stringify({
  positions: (input.positions || []).map(checkPosition),
  malformed: (input.malformed || []).map(malformed),
  calls: (input.calls || []).map(call),
}));
