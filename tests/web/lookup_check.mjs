// Drives server/pages/web/net.js's invite-link look-up (`roomNode`) with stand-in answers, and
// its Link with a stand-in WebSocket (no network): which node the look-up gives, and where
// the first sockets connect. Prints one JSON object of what it saw, for
// tests/web/test_net_js.py.
import { FakeSocket, sockets } from "./fake_socket.mjs";

globalThis.WebSocket = FakeSocket;
// Timers on demand (no real waiting): `due()` runs those set and not cleared so far.
let timers = new Map();
let nextTimer = 1;
globalThis.setTimeout = (fn) => {
  timers.set(nextTimer, fn);
  return nextTimer++;
};
globalThis.clearTimeout = (id) => timers.delete(id);
const due = () => {
  const now = [...timers.values()];
  timers = new Map();
  for (const fn of now) fn();
};
/** Let the promises settle (the look-up's answer, its `then`). */
const settle = () => new Promise((resolve) => setImmediate(resolve));
const store = new Map();
globalThis.localStorage = {
  getItem: (k) => (store.has(k) ? store.get(k) : null),
  setItem: (k, v) => store.set(k, v),
  removeItem: (k) => store.delete(k),
};

const { Link, roomNode } = await import("../../server/pages/web/net.js");

const asked = [];
/** A stand-in fetch that answers `status` with `body` (a value, or a function that throws). */
const answering = (status, body) => async (url, init) => {
  asked.push({ url, cache: init.cache, accept: init.headers.Accept });
  return {
    ok: status >= 200 && status < 300,
    json: async () => (typeof body === "function" ? body() : body),
  };
};
/** One that answers only when aborted (it never does on its own): the timeout's case. */
const silent = (url, init) =>
  new Promise((_, reject) => init.signal.addEventListener("abort", () => reject(new Error("aborted"))));

const looked = {
  cluster: await roomNode("/yukon/", "K7WQM", answering(200, { room: "K7WQM", open: true, node: "node-2", last_race: null })),
  alone: await roomNode("/", "K7WQM", answering(200, { room: "K7WQM", open: true, node: null, last_race: null })),
  older: await roomNode("/", "K7WQM", answering(200, { room: "K7WQM", open: true, last_race: null })),
  closed: await roomNode("/", "K7WQM", answering(200, { room: "K7WQM", open: false, node: "node-2" })),
  badId: await roomNode("/", "K7WQM", answering(200, { open: true, node: "node 2/../x" })),
  longId: await roomNode("/", "K7WQM", answering(200, { open: true, node: "n".repeat(65) })),
  notFound: await roomNode("/", "K7WQM", answering(404, { error: "no_such_room" })),
  notJson: await roomNode("/", "K7WQM", answering(200, () => { throw new SyntaxError("not JSON"); })),
  array: await roomNode("/", "K7WQM", answering(200, [1, 2])),
  refused: await roomNode("/", "K7WQM", async () => { throw new TypeError("Failed to fetch"); }),
  timedOut: await (async () => {
    const asking = roomNode("/", "K7WQM", silent);
    due(); // the look-up's time is up
    return asking;
  })(),
};

const statuses = [];
const make = () => new Link({ url: "wss://h/yukon/", onMessage: () => {}, onStatus: (k) => statuses.push(k) });

// The look-up named the room's node: the first socket asks for it, and waits for it.
const aimed = make();
aimed.name = "ann";
let resolveLookup;
aimed.lookup = new Promise((resolve) => (resolveLookup = resolve));
aimed.start();
const beforeAnswer = sockets.length;
resolveLookup("node-2");
await settle();
const first = sockets[sockets.length - 1];
first.open();
first.deliver({ t: "welcome", v: 1, name: "ann", token: "TOK", resume_s: 60, room: null });
first.drop(1006); // a drop after the welcome: the next socket asks for the node again
due(); // the retry's wait is over
const second = sockets[sockets.length - 1];
second.drop(1006); // that one failed before its welcome (the node is gone): any node next
due();
const third = sockets[sockets.length - 1];

// The look-up found nothing (alone, closed, failed): the first socket goes anywhere.
const plain = make();
plain.name = "bob";
plain.lookup = Promise.resolve(null);
plain.start();
await settle();
const plainUrl = sockets[sockets.length - 1].url;
plain.stop();
aimed.stop();

console.log(
  JSON.stringify({
    looked,
    asked: asked.slice(0, 1),
    beforeAnswer,
    urls: [first.url, second.url, third.url],
    plainUrl,
    connecting: statuses[0],
  }),
);
