// The daily's log, checked as protocol/dailylog.py checks it (docs/protocol.md 4.29): each
// entry names the hash of the one before; its own is SHA-256 of its canonical JSON. The
// head verified is kept in localStorage: a later chain that does not extend it is a warning.
import { sha256Hex } from "./commit.js";

export const GENESIS = "0".repeat(64);
const KEYS = ["at", "body", "date", "hash", "kind", "n", "prev"];
const KINDS = new Set(["day", "board"]);
const HEX64 = /^[0-9a-f]{64}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;
const HEAD_KEY = "yukon.dailylog.head";

/** Canonical JSON, as Python's json.dumps(sort_keys=True, ensure_ascii=True), no floats. */
export function canonical(value) {
  if (value === null || typeof value === "string" || typeof value === "boolean") {
    return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
  }
  if (typeof value === "number") {
    if (!Number.isInteger(value)) throw new Error("the daily's log holds no floats");
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${canonical(k)}:${canonical(value[k])}`).join(",")}}`;
}

/** The hash an entry must carry. */
export async function entryHash(e) {
  const { n, kind, date, at, body, prev } = e;
  return sha256Hex(canonical({ n, kind, date, at, body, prev }));
}

const isInt = (v) => typeof v === "number" && Number.isInteger(v);

const isValue = (v) => v === null || typeof v === "string" || isInt(v);
const isText = (v, re) => typeof v === "string" && re.test(v);

async function problem(e, previous) {
  if (!e || typeof e !== "object" || Array.isArray(e)) return "an entry is not an object";
  const at = `entry ${e.n}`;
  if (Object.keys(e).sort().join() !== KEYS.join()) return `${at}: wrong keys`;
  if (!isInt(e.n) || e.n < 0) return "an entry's n is not a whole number";
  if (previous && e.n !== previous.n + 1) return `${at}: follows entry ${previous.n}`;
  const b = e.body;
  const bad = !KINDS.has(e.kind) || !isText(e.date, DATE) || !isText(e.at, AT) ||
    !b || typeof b !== "object" || Array.isArray(b) || !Object.values(b).every(isValue) ||
    typeof e.prev !== "string" || !isText(e.hash, HEX64);
  if (bad) return `${at}: malformed`;
  if (e.prev !== (previous ? previous.hash : GENESIS)) return `${at} does not name the hash before it: the chain was rewritten`;
  if ((await entryHash(e)) !== e.hash) return `${at}'s hash does not match its contents: it was edited`;
  return "";
}

/**
 * Check a whole chain as served (entry 0 first) and whether it extends `head` ({n, hash} or
 * null): {ok, head, problem, extends}. Never throws on what a server sent.
 */
export async function verifyChain(entries, head = null) {
  if (!Array.isArray(entries)) return { ok: false, head: null, problem: "not a list", extends: false };
  let previous = null;
  for (const e of entries) {
    if (!previous && e && e.n !== 0) return { ok: false, head: null, problem: "the chain does not start at entry 0", extends: false };
    const why = await problem(e, previous);
    if (why) return { ok: false, head: null, problem: why, extends: false };
    previous = e;
  }
  const last = previous ? { n: previous.n, hash: previous.hash } : null;
  if (!head) return { ok: true, head: last, problem: "", extends: true };
  const extended = head.n < entries.length && entries[head.n].hash === head.hash;
  return {
    ok: true,
    head: last,
    extends: extended,
    problem: extended
      ? ""
      : `this chain does not extend the one verified before (entry ${head.n}, ${head.hash.slice(0, 12)}...): a past entry was changed`,
  };
}

/** The head this browser verified last, or null. */
export function keptHead(storage = globalThis.localStorage) {
  try {
    const head = JSON.parse(storage?.getItem(HEAD_KEY) ?? "null");
    return head && isInt(head.n) && typeof head.hash === "string" ? head : null;
  } catch {
    return null;
  }
}

/** Keep a verified head (only ever a later one). */
export function keepHead(head, storage = globalThis.localStorage) {
  const kept = keptHead(storage);
  if (head && (!kept || head.n >= kept.n)) storage?.setItem(HEAD_KEY, JSON.stringify(head));
}

/**
 * What to say about a past day played from the archive: fetch the log (`fetchJson` is given
 * the path relative to the server's root), verify it against the kept head, find the day's
 * entry and compare its commitment with the one the run was dealt under: {good, text}.
 */
export async function checkDay(date, commitment, fetchJson, storage = globalThis.localStorage) {
  let served;
  try {
    served = await fetchJson("daily/log?format=json");
  } catch {
    return { good: false, text: "the daily's log could not be fetched: this day is unchecked" };
  }
  const check = await verifyChain(served?.entries, keptHead(storage));
  if (!check.ok) return { good: false, text: `the daily's log is broken: ${check.problem}` };
  if (!check.extends) return { good: false, text: `WARNING: ${check.problem}` };
  keepHead(check.head, storage);
  const day = served.entries.find((e) => e.kind === "day" && e.date === date);
  if (!day) return { good: false, text: `${date} is not in the daily's log: this day is unchecked` };
  if (!commitment || day.body.commitment !== commitment) {
    return { good: false, text: `WARNING: ${date}'s deal is NOT the one the daily's log committed to` };
  }
  return { good: true, text: `${date} checked: in the daily's log (entry ${day.n}), chain intact` };
}
