// Runs server/pages/web/session.js on what tests/web/test_session_js.py sends on stdin (one JSON
// document) and writes one JSON document to stdout. Input:
//   {"headlines": [[result, me]...], "names": [text...], "lists": [[name...]...],
//    "scenarios": [{"me": name, "touch": bool, "steps": [step...]}...]}
// A step is ["receive", message] (its answer: the messages to send), ["call", method,
// argument...] (a player's action: the messages it sends) or ["look"]: {status, phase,
// canFinish, finishing, state, foundations, lastSeq}. Output: {"headlines": [text...],
// "names": [{ok, text}...], "lists": [text...], "scenarios": [[answer...]...]}.
import { Session, headline, nameCheck, listed } from "../../server/pages/web/session.js";

function look(s) {
  const race = s.race;
  return {
    status: s.status.text,
    kind: s.status.kind,
    phase: s.phase(),
    canFinish: race ? race.canFinish() : null,
    finishing: race ? race.finishing : null,
    state: race ? race.state : null,
    foundations: race ? race.foundations : null,
    lastSeq: race ? race.lastSeq : null,
  };
}

function scenario({ me, touch, steps }) {
  const s = new Session();
  s.me = me;
  s.touch = !!touch;
  return steps.map(([what, ...args]) => {
    try {
      if (what === "receive") return s.receive(args[0], 0);
      if (what === "call") return s[args[0]](...args.slice(1));
      return look(s);
    } catch (e) {
      return { error: String(e && e.stack) };
    }
  });
}

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
process.stdout.write(
  JSON.stringify({
    headlines: (input.headlines || []).map(([r, me]) => headline(r, me)),
    names: (input.names || []).map(nameCheck),
    lists: (input.lists || []).map(listed),
    scenarios: (input.scenarios || []).map(scenario),
  }),
);
