// Runs server/pages/web/deal.js on what tests/web/test_deal_js.py sends on stdin (one JSON
// document) and writes one JSON document to stdout. Input:
//   {"codes": [code...], "runs": [{"code": code, "actions": [[ms, move]...]}...],
//    "subtle": bool (false: WebCrypto is taken away, so the fallback SHA-256 runs)}
// Output: {"codes": [initial view text...], "runs": [[view text, moves]...]...]}
import { deal, positions } from "../../server/pages/web/deal.js";
import { formatView } from "../../server/pages/web/rules.js";

let text = "";
for await (const chunk of process.stdin) text += chunk;
const input = JSON.parse(text);
if (!input.subtle) Object.defineProperty(globalThis, "crypto", { value: undefined });
const full = ({ rules, columns }) =>
  `${rules} ---- ${columns.map((col, c) => col.map((x, i) => (i < c ? x.toLowerCase() : x)).join("")).join("/")}`;
const codes = [];
for (const code of input.codes) codes.push(full(await deal(code)));
const runs = [];
for (const run of input.runs) {
  runs.push((await positions(run.code, run.actions)).map((p) => [formatView(p.view), p.moves]));
}
process.stdout.write(JSON.stringify({ codes, runs }));
